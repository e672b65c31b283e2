"""Read one split: stream its byte range in bounded chunks, parse with kdump.format, yield Arrow.

This is what a Spark task of the data source (and of the Spark 3 fallback) runs, and what ``parquet.write_task``
runs in ``kdump export``'s workers and ``kdump spark export``'s tasks.
It never maps or loads a whole file: it reads through the log layer's window (``LogBatches``) of
``chunk_bytes``, over ``pyarrow.fs`` for s3://, gs:// and hdfs:// (``kdump.log.arrow_files.ArrowFile``),
so memory is bounded by the chunk size plus one batch, whatever the segment size.

Damaged bytes become rows with ``isvalid = false`` and an ``error`` text, never task failures:
a CRC mismatch or undecodable records give one row for the entry (record columns null); a size
field below Kafka's minimum or an entry running past the end of the range gives one row at that
position and ends the range, because nothing after it can be framed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kdump.arrow.columns import NAMES as RECORD_COLUMNS
from kdump.arrow.columns import RecordColumns
from kdump.arrow.discovery import shown_location
from kdump.arrow.planning import Pruning, Split
from kdump.arrow.schema import arrow_schema
from kdump.broker.isolation import READ_COMMITTED, READ_UNCOMMITTED, AbortedTransactions
from kdump.errors import CodecError, FormatError
from kdump.format.batch import (
    FRAMING,
    LEGACY_CRC_START,
    LOG_OVERHEAD,
    MIN_RECORD_OVERHEAD,
    V2_ATTRIBUTES_OFFSET,
    Batch,
    TimestampType,
)
from kdump.format.control import ControlType, parse_control_key
from kdump.format.crc import crc32, crc32c
from kdump.format.records import Record, decode_records
from kdump.log.batches import LogBatches
from kdump.log.locations import open_any

DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_ROWS = 8192
MAX_BATCH_BYTES = 64 * 1024 * 1024   # keys, values and headers in one Arrow batch (memory per task)


@dataclass(frozen=True, slots=True)
class ReadOptions:
    level: str = "record"
    chunk_bytes: int = DEFAULT_CHUNK_BYTES
    max_rows: int = DEFAULT_MAX_ROWS           # rows per Arrow batch handed to Spark
    pruning: Pruning = field(default_factory=Pruning)
    isolation: str = READ_UNCOMMITTED          # read_committed drops aborted transactions and control batches
    cluster: bool = False                      # export --cluster: each split's fated ranges, and the fate columns


@dataclass(slots=True)
class Entry:
    """One framed entry of the range (``batch`` set) or the place where framing broke (``error`` set)."""

    position: int                  # in the file
    buf: memoryview | None = None  # the entry's bytes
    batch: Batch | None = None
    error: str | None = None

    def local(self) -> Batch:
        """``batch`` placed at the start of ``buf``, as the format layer's decoders take it (a copy: only on use)."""
        assert self.batch is not None
        return self.batch._replace(position=0)


def scan_range(location: str, start: int, end: int, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> Iterator[Entry]:
    """Every entry in [start, end) of a .log, read through the log layer's window of ``chunk_bytes``.

    Only valid until the next item is requested: ``buf`` views the window.
    """
    with open_any(location) as file:
        batches = LogBatches(file, start, end, window_bytes=chunk_bytes)
        try:
            for batch in batches:
                yield Entry(batch.position, batches.view(batch), batch)
        except FormatError as err:
            yield Entry(batches.valid_end if err.position is None else err.position, error=err.reason)
            return
        if batches.padding_error is not None:      # zero bytes where an entry should start: not an entry either
            yield Entry(batches.valid_end, error=batches.padding_error.reason)
            return
        tail = batches.end - batches.valid_end
        if tail >= LOG_OVERHEAD:
            _, size = FRAMING.unpack(file.read(batches.valid_end, LOG_OVERHEAD))
            reason = (f"entry of {LOG_OVERHEAD + max(size, MIN_RECORD_OVERHEAD)} bytes runs past the end of the "
                      f"range ({tail} bytes left)")
            yield Entry(batches.valid_end, error=f"truncated: {reason}")
        elif tail:
            yield Entry(batches.valid_end, error=f"truncated: {tail} trailing bytes are too few for an entry header")


# ---- rows -------------------------------------------------------------------------------------

# Per-record columns: those RecordColumns builds, and ``timestamp_ms``, the record's int64 milliseconds
# (``timestamp`` holds the same instant as a Spark TIMESTAMP, see _timestamps).
_PER_RECORD = (*RECORD_COLUMNS, "timestamp_ms")


def _codec_name(batch: Batch) -> str:
    try:
        return batch.codec.kafka_name
    except CodecError:
        return f"unknown({batch.codec_id})"


# Per-entry columns read from its header; the others (batchPosition, aborted, isvalid, error) come with the entry.
_BATCH_VALUES = {
    "baseOffset": lambda b: b.base_offset,
    "lastOffset": lambda b: b.last_offset,
    "partitionLeaderEpoch": lambda b: b.partition_leader_epoch,
    "producerId": lambda b: b.producer_id,
    "producerEpoch": lambda b: b.producer_epoch,
    "baseSequence": lambda b: b.base_sequence,
    "isTransactional": lambda b: b.is_transactional,
    "isControl": lambda b: b.is_control,
    "codec": _codec_name,
    "magic": lambda b: b.magic,
    "crc": lambda b: b.crc,
    "count": lambda b: b.records_count,
    "size": lambda b: b.size,
    "baseTimestamp": lambda b: b.base_timestamp,
    "maxTimestamp": lambda b: b.max_timestamp,
    "timestampType": lambda b: b.timestamp_type.kafka_name,
}


class RowBuilder:
    """Collects rows column by column for the requested schema only, and cuts Arrow batches.

    Values that are the same for every record of an entry are kept once per entry and expanded
    with one ``take`` at flush time; record values go into flat buffers (``RecordColumns``).
    """

    def __init__(self, split: Split, schema: pa.Schema, level: str, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        self.schema = schema
        self.level = level
        self.max_rows = max_rows
        self.constants = {"topic": split.segment.topic, "partition": split.segment.partition,
                          "segment": split.segment.base_offset, "path": shown_location(split.segment.log),
                          "log_dir": split.segment.log_dir, "broker": split.segment.broker}
        per_record = _PER_RECORD if level == "record" else ()
        self.record_fields = {f.name: f.type for f in schema if f.name in per_record}
        self.entry_cols = [n for n in schema.names if n not in per_record and n not in self.constants]
        self.records = RecordColumns()
        self.aborted: bool | None = None    # the ``aborted`` value of the entry being added
        self._reset()

    def _reset(self) -> None:
        self.rows = 0
        self.counts: list[int] = []
        self.per_entry: dict[str, list] = {n: [] for n in self.entry_cols}

    @property
    def full(self) -> bool:
        """Time to cut an Arrow batch: enough rows, or enough key/value bytes to bound memory."""
        return self.rows >= self.max_rows or self.records.data_bytes >= MAX_BATCH_BYTES

    def _add_rows(self, n: int, position: int, batch: Batch | None, valid: bool, error: str | None) -> None:
        self.counts.append(n)
        self.rows += n
        given = {"batchPosition": position, "isvalid": valid, "error": error,
                 "aborted": None if batch is None or not valid else self.aborted}
        for name, values in self.per_entry.items():
            getter = _BATCH_VALUES.get(name)
            values.append(given[name] if getter is None else None if batch is None else getter(batch))

    def add_v2_batch(self, position: int, buf: memoryview, batch: Batch) -> int | None:
        """A valid v2 batch's records straight into columns; None when the general path must read it."""
        n = self.records.add_batch(buf, batch)
        if n:
            self._add_rows(n, position, batch, True, None)
        return n

    def add_records(self, position: int, batch: Batch, records: list[Record], valid: bool,
                    error: str | None) -> None:
        if not records:
            return                                        # an emptied (compacted) batch has no rows
        self.records.add_records(records)
        self._add_rows(len(records), position, batch, valid, error)

    def add_entry(self, position: int, batch: Batch | None, valid: bool, error: str | None) -> None:
        """One row for an entry: a batch-level row, or the single row of an unreadable entry."""
        if self.level == "record":
            self.records.add_missing()
        self._add_rows(1, position, batch, valid, error)

    def _record_arrays(self) -> dict[str, pa.Array]:
        """RecordColumns' arrays, and the two timestamp columns from its int64 milliseconds."""
        fields = dict(self.record_fields)
        times = {name: fields.pop(name) for name in ("timestamp", "timestamp_ms") if name in fields}
        if times:
            fields["timestamp"] = pa.int64()
        arrays = self.records.arrays(fields)
        if times:
            millis = arrays.pop("timestamp")
            for name, type_ in times.items():
                arrays[name] = _timestamps(millis, type_) if pa.types.is_timestamp(type_) else millis.cast(type_)
        return arrays

    def flush(self) -> Iterator[pa.RecordBatch]:
        """The rows collected so far as one Arrow batch (none when there are none); then starts over."""
        if not self.rows:
            return
        n = self.rows
        take = None
        if len(self.counts) != n:                         # some entries span several rows
            take = pa.array(np.repeat(np.arange(len(self.counts), dtype=np.int32), self.counts))
        per_record = self._record_arrays() if self.level == "record" else {}
        per_entry = {f.name: pa.array(self.per_entry[f.name], f.type) for f in self.schema if f.name in self.per_entry}
        if take is not None and per_entry:                # one take for all of them: a call costs ~25 us
            spread = pa.RecordBatch.from_pydict(per_entry).take(take)
            per_entry = dict(zip(spread.schema.names, spread.columns, strict=True))
        arrays = []
        for f in self.schema:
            if f.name in self.constants:
                arrays.append(pa.repeat(pa.scalar(self.constants[f.name], f.type), n))
            else:
                arrays.append(per_record[f.name] if f.name in per_record else per_entry[f.name])
        self._reset()
        yield pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def _timestamps(millis: pa.Array, ts_type: pa.DataType) -> pa.Array:
    """Kafka's epoch milliseconds as a timestamp column; -1 (Kafka's NO_TIMESTAMP, v0 messages) is null."""
    ms = pc.if_else(pc.equal(millis, -1), pa.scalar(None, pa.int64()), millis)
    return pc.multiply(ms, 1000 if ts_type.unit == "us" else 1).cast(ts_type)


def crc_problem(entry: Entry) -> str:
    """Kafka's wording for a failed checksum, with the value the bytes really have."""
    batch, buf = entry.batch, entry.buf
    assert batch is not None and buf is not None
    if batch.is_legacy:
        computed = crc32(buf[LEGACY_CRC_START:])
    else:
        computed = crc32c(buf[V2_ATTRIBUTES_OFFSET:])
    return f"Record is corrupt (stored crc = {batch.crc}, computed crc = {computed})"


def _skip(batch: Batch, pruning: Pruning) -> bool:
    """True when no record of a valid entry can pass the pushed bounds (Spark re-checks rows)."""
    if batch.is_legacy:              # a v0/v1 wrapper's header offset is its last inner offset
        return pruning.offset_min is not None and batch.last_offset < pruning.offset_min
    if not pruning.may_hold(batch.base_offset, batch.last_offset):
        return True
    if (pruning.timestamp_max is not None and batch.max_timestamp > pruning.timestamp_max
            and batch.timestamp_type is TimestampType.LOG_APPEND_TIME):
        return True
    return pruning.timestamp_min is not None and batch.max_timestamp < pruning.timestamp_min


def _is_abort_marker(entry: Entry) -> bool:
    assert entry.buf is not None
    try:
        records = decode_records(entry.buf, entry.local())
        return bool(records) and parse_control_key(records[0].key) == ControlType.ABORT
    except FormatError:
        return False                 # an unreadable marker ends nothing, as it never reaches a consumer


def _consumer_skips(entry: Entry, aborts: AbortedTransactions, builder: RowBuilder, committed_only: bool) -> bool:
    """Run the consumer's read_committed rules over a valid entry (every one, even those pruned later, so
    markers close what they end); True when a read_committed consumer never returns it."""
    batch = entry.batch
    assert batch is not None
    aborted = aborts.is_aborted(batch, lambda: _is_abort_marker(entry))
    builder.aborted = aborted if aborts.known else None
    return committed_only and (aborted or batch.is_control)


def read_split(split: Split, schema: pa.Schema | None = None,
               options: ReadOptions = ReadOptions()) -> Iterator[pa.RecordBatch]:
    """Arrow batches for one split, with exactly ``schema``'s columns (default: the level's schema)."""
    schema = schema if schema is not None else arrow_schema(options.level)
    builder = RowBuilder(split, schema, options.level, options.max_rows)
    records_level = options.level == "record"
    check_pruning = not options.pruning.is_empty
    aborts = AbortedTransactions(split.aborted, known=split.aborts_known)
    committed_only = options.isolation == READ_COMMITTED
    if committed_only and not split.aborts_known:
        raise ValueError("read_committed needs the partition's aborted transactions: plan(..., with_aborts=True)")
    for entry in scan_range(split.segment.log, split.start, split.end, options.chunk_bytes):
        batch = entry.batch
        if batch is None:
            builder.add_entry(entry.position, None, False, entry.error)
        elif not batch.is_valid:
            builder.add_entry(entry.position, batch, False, crc_problem(entry))
        elif _consumer_skips(entry, aborts, builder, committed_only) or (
                check_pruning and _skip(batch, options.pruning)):
            continue
        elif not records_level:
            builder.add_entry(entry.position, batch, True, None)
        else:
            assert entry.buf is not None
            local = entry.local()
            try:
                if builder.add_v2_batch(entry.position, entry.buf, local) is None:
                    records = decode_records(entry.buf, local)
                    bad = batch.is_legacy and any(r.legacy_valid is False for r in records)
                    builder.add_records(entry.position, batch, records, not bad,
                                        "CRC-32 mismatch in an inner message" if bad else None)
            except FormatError as err:
                builder.add_entry(entry.position, batch, False, err.reason)
        if builder.full:
            yield from builder.flush()
    yield from builder.flush()
