"""Every rule about one segment, in one walk of its ``.log`` with the index entries read alongside.

``SegmentCheck(seg)`` is iterated for its findings; afterwards ``facts`` holds what the partition
rules need (offsets, epochs, transaction events), a few numbers per segment whatever its size.

Checked per batch: framing (one finding where it breaks; nothing after it is checked against it),
CRC, header sanity (codec), offsets increasing, offsets against the file name's base offset
(``offset_range_problem``); with ``deep``, every record decoded. A compressed v0/v1 wrapper is always
decompressed, because its inner messages are the records it holds.

The indexes are opened (and their valid entries counted) before the log: a broker appends to the
log first and to the indexes after (LogSegment.append), so every entry counted then points into the
log as kdump reads it next, even while the broker keeps writing. For the same reason a partial
batch at the end of the partition's active segment is an append in progress, not corruption.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kdump.broker.recovery import offset_range_problem
from kdump.errors import FormatError, KdumpError
from kdump.findings import ERROR, NOTE, Finding
from kdump.format.batch import (
    ATTR_CONTROL,
    ATTR_TRANSACTIONAL,
    INT32_MAX,
    Batch,
)
from kdump.format.control import ControlType, parse_control_record
from kdump.format.index import OFFSET_ENTRY_SIZE, TIME_ENTRY_SIZE
from kdump.format.records import Record
from kdump.log.batches import LogBatches
from kdump.log.index_builder import DEFAULT_INDEX_INTERVAL_BYTES
from kdump.log.indexes import OffsetIndex, TimeIndex
from kdump.log.logdir import SegmentFiles
from kdump.log.segment import FileChangedError, ReadOnlyFile
from kdump.verify.index_checks import (
    OffsetIndexChecker,
    OffsetIndexDensity,
    TimeIndexChecker,
    check_padding,
    check_size,
)
from kdump.verify.kafka_index_compare import TimeEntryLookup

Opener = Callable[[str], Any]
"""Opens a path for reading: ``ReadOnlyFile`` here, a remote-file adapter in Spark tasks."""

BEGIN, COMMIT, ABORT = "begin", "commit", "abort"
_TXN_OR_CONTROL = ATTR_TRANSACTIONAL | ATTR_CONTROL


@dataclass
class SegmentFacts:
    """What the partition rules need from one segment (small: no per-batch lists)."""

    base_offset: int
    log: str | None
    size: int = 0
    batches: int = 0
    records: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    complete: bool = True                 # framing held to the end (padding and appends allowed)
    epochs: list[tuple[int, int]] = field(default_factory=list)   # (leader epoch, first offset) at changes
    # Transaction events in log order: (BEGIN, producer id, first offset) for the first transactional
    # batch of a producer after a marker, (COMMIT|ABORT, producer id, marker offset) for markers.
    txn_events: list[tuple[str, int, int]] = field(default_factory=list)


def _control_outcome(record: Record) -> str | None:
    info = parse_control_record(record.key, record.value)
    outcomes: dict[int, str] = {ControlType.ABORT: ABORT, ControlType.COMMIT: COMMIT}
    return outcomes.get(info.type_id)


class Decoded(NamedTuple):
    """What decoding one batch's records found: how many, a transaction marker's outcome (COMMIT or ABORT),
    or why they cannot be decoded (``records`` is then the header's)."""

    records: int
    outcome: str | None = None
    problem: str | None = None


def header_count(batch: Batch) -> int:
    """The records a batch's header says it holds (a v0/v1 entry: one message)."""
    return batch.records_count if batch.records_count is not None else 1


def decodes_records(batch: Batch, deep: bool, *, valid: bool | None = None) -> bool:
    """Whether the walk decodes the batch's records: with ``deep`` those of every batch whose CRC holds; a
    compressed v0/v1 wrapper's always (its inner messages are the records it holds), a marker's (its outcome).
    ``valid``: whether its CRC holds, if not the batch's own word (``is_valid``)."""
    return bool(batch.is_valid if valid is None else valid) and (
        deep or (batch.is_legacy and batch.codec_id != 0) or (batch.is_control and batch.is_transactional))


def decode_batch(batches: LogBatches, batch: Batch) -> Decoded:
    """The records of the batch ``batches`` just yielded, decoded a group at a time (an oversized batch is read
    from the file a window at a time), so memory does not grow with them; only a marker's first is looked at."""
    marker = batch.is_control and batch.is_transactional
    count = 0
    outcome = None
    try:
        for group in batches.iter_records(batch, values=False):
            if marker and not count and group:
                outcome = _control_outcome(group[0])
            count += len(group)
    except FileChangedError:
        raise
    except KdumpError as err:
        return Decoded(batch.records_count or 0, problem=err.reason)
    return Decoded(count, outcome)


class RangeRecords(NamedTuple):
    """A worker's share of a segment's walk (``decode_range``): the records of the batches in ``[start, end)``
    decoded as the walk decodes them, where that found anything but the header's count (by batch position:
    a compressed v0/v1 wrapper's count, a marker's outcome, records that cannot be decoded), and where its
    walk ended (``broken``: at an error, of the framing or of the file)."""

    start: int
    end: int
    valid_end: int
    broken: bool
    decoded: dict[int, Decoded]


def decode_range(log: Any, start: int, end: int, deep: bool) -> RangeRecords:
    """The records of the batches of ``log`` in ``[start, end)`` that the walk decodes (``decodes_records``), as
    if every CRC held: the walk checks them, and does not look up the records of a batch whose CRC fails."""
    batches = LogBatches(log, start, end, check_crc=False)
    found: dict[int, Decoded] = {}
    broken = False
    try:
        for batch in batches:
            if decodes_records(batch, deep, valid=True):
                decoded = decode_batch(batches, batch)
                if decoded.records != header_count(batch) or decoded.outcome or decoded.problem:
                    found[batch.position] = decoded
    except KdumpError:
        broken = True       # the walk meets the framing error too; a file that changed is read again there
    return RangeRecords(start, end, batches.valid_end, broken, found)


class DecodedRanges:
    """The decoded records of a segment's batches that workers decoded a range at a time (``decode_range``),
    ``ranges`` giving them in order as the walk reaches them (``kdump.verify.driver``), for ``SegmentCheck``.

    A range's results hold for the walk from its start when the walk reaches that start at a batch: the first
    range starts at 0, as the walk; each next one where the one before it ended whole (its walk met no error
    and read a batch ending at its end), since both walks then read the same batches from there. Any other
    batch (a range that broke, and every one after it; bytes appended since the ranges were planned) is
    decoded here, as without workers.
    """

    def __init__(self, ranges: Iterator[RangeRecords]) -> None:
        self._ranges = ranges
        self._current: RangeRecords | None = None
        self._aligned = True        # the walk reaches the current range's start at a batch
        self._more = True

    def _covering(self, position: int) -> RangeRecords | None:
        while self._more and (self._current is None or position >= self._current.end):
            previous, self._current = self._current, next(self._ranges, None)
            if self._current is None:
                self._more = False
            elif previous is not None:
                self._aligned = (self._aligned and not previous.broken and previous.valid_end == previous.end
                                 and previous.end == self._current.start)
        current = self._current
        if current is None or not self._aligned or not current.start <= position < current.valid_end:
            return None
        return current

    def __call__(self, batches: LogBatches, batch: Batch) -> Decoded:
        current = self._current
        if current is None or not current.start <= batch.position < current.valid_end or not self._aligned:
            current = self._covering(batch.position)
            if current is None:
                return decode_batch(batches, batch)
        return current.decoded.get(batch.position) or Decoded(header_count(batch))

    def close(self) -> None:
        """Take the ranges the walk did not reach (it stopped before them), so whatever gives them moves on."""
        for _ in self._ranges:
            pass


class SegmentCheck:
    """Iterate for the findings of one segment; see the module docstring."""

    def __init__(self, seg: SegmentFiles, *, strict: bool = False, deep: bool = False, active: bool = False,
                 interval: int = DEFAULT_INDEX_INTERVAL_BYTES, open_file: Opener = ReadOnlyFile,
                 decoded: Callable[[LogBatches, Batch], Decoded] = decode_batch) -> None:
        self.seg = seg
        self.strict = strict
        self.deep = deep
        self.active = active
        self.interval = interval
        self.open_file = open_file
        self.decoded = decoded      # the records of a batch the walk decodes (workers': ``DecodedRanges``)
        self.facts = SegmentFacts(seg.base_offset, seg.log)

    def __iter__(self) -> Iterator[Finding]:
        seg = self.seg
        if seg.log is None:
            orphans = [(p, size) for p, size in ((seg.index, OFFSET_ENTRY_SIZE), (seg.time_index, TIME_ENTRY_SIZE))
                       if p is not None]
            for path, _ in orphans:
                yield Finding(NOTE, "log-missing", path, "log file missing: nothing to check against (the broker "
                                                         "deletes such orphan indexes at start-up)")
            for path, entry_size in orphans:
                with self.open_file(path) as orphan:
                    yield from check_size(path, orphan.size, entry_size)
            return
        if seg.index is None:
            yield Finding(NOTE, "index-missing", seg.log, "no .index beside this log (the broker rebuilds it at "
                                                          "start-up by recovering the segment)")
        if seg.time_index is None:
            yield Finding(NOTE, "timeindex-missing", seg.log, "no .timeindex beside this log")
        with ExitStack() as files:
            index = tindex = None
            if seg.index is not None:
                index = files.enter_context(OffsetIndex(self.open_file(seg.index), seg.base_offset, seg.index))
            if seg.time_index is not None:
                tindex = files.enter_context(TimeIndex(self.open_file(seg.time_index), seg.base_offset,
                                                       seg.time_index))
            log = files.enter_context(self.open_file(seg.log))
            for idx, entry_size in ((index, OFFSET_ENTRY_SIZE), (tindex, TIME_ENTRY_SIZE)):
                if idx is not None:
                    yield from check_size(idx.path or "", idx.size, entry_size)
                    yield from check_padding(idx.path or "", idx, active=self.active)
            yield from self._walk(log, index, tindex)

    def _walk(self, log: Any, index: OffsetIndex | None, tindex: TimeIndex | None) -> Iterator[Finding]:
        facts, path = self.facts, self.seg.log or ""
        facts.size = log.size
        offsets = OffsetIndexChecker(index, log, strict=self.strict) if index is not None else None
        times = None
        if tindex is not None:
            found = TimeEntryLookup(log, index).found if self.strict else None
            times = TimeIndexChecker(tindex, strict=self.strict, kafka_found=found)
        if offsets is not None:
            yield from offsets.start()
        if times is not None:
            yield from times.start()
        batches = LogBatches(log, check_crc=True)
        base, deep = self.seg.base_offset, self.deep
        density = OffsetIndexDensity(base, self.interval) if deep and index is not None else None
        above = base + INT32_MAX
        prev_last: int | None = None
        prev_batch: Batch | None = None
        largest = -1
        epoch = None
        open_txns: set[int] = set()
        broke: FormatError | None = None
        count = records = 0
        try:
            # The common batch costs a few comparisons; a rule's generator runs only when it has work.
            for batch in batches:
                count += 1
                if facts.first_offset is None:
                    facts.first_offset = batch.base_offset
                if (not batch.is_valid or batch.base_offset < base or batch.last_offset > above
                        or (prev_last is not None and batch.base_offset <= prev_last) or batch.codec_id > 4):
                    yield from self._batch_rules(batch, prev_last, batches)
                if deep or (batch.magic == 2 and batch.attributes & _TXN_OR_CONTROL) or \
                        (batch.magic < 2 and batch.codec_id):
                    if density is not None:
                        density.add(batch)
                    n, undecodable = self._records(batches, batch, open_txns)
                    records += n
                    if undecodable is not None:
                        yield undecodable
                else:
                    records += batch.records_count if batch.records_count is not None else 1
                leader_epoch = batch.partition_leader_epoch
                if leader_epoch != epoch and leader_epoch >= 0:
                    epoch = leader_epoch
                    facts.epochs.append((epoch, batch.base_offset))
                before = largest
                if batch.max_timestamp > largest:
                    largest = batch.max_timestamp
                if offsets is not None and batch.position >= offsets.due_position:
                    yield from offsets.on_batch(batch, prev_last, prev_batch)
                if times is not None and batch.last_offset >= times.due_offset:
                    yield from times.on_batch(batch, before, largest, prev_last is None)
                if prev_last is None or batch.last_offset > prev_last:
                    prev_last = batch.last_offset
                prev_batch = batch
        except FormatError as err:   # framing; a file that cannot be read (InputError) is the caller's
            broke = err
        facts.batches, facts.records, facts.last_offset = count, records, prev_last
        valid_end = batches.valid_end
        partial = broke is None and batches.zero_padding_from is None and valid_end < log.size
        broken = broke is not None or (partial and not self.active)
        facts.complete = not broken
        if offsets is not None:
            yield from offsets.finish(prev_last, valid_end, broken)
        if times is not None:
            yield from times.finish(prev_last, largest, not self.active and tindex is not None
                                    and tindex.padding_slots == 0, broken)
        unchecked = (offsets.unchecked if offsets else 0) + (times.unchecked if times else 0)
        rest = f"; {unchecked} index entries after it were not checked against the log" if unchecked else ""
        if broke is not None:
            yield Finding(ERROR, "framing", path, f"batch framing breaks here: {broke.reason}; the "
                          f"{log.size - valid_end} bytes from here on were not checked{rest}",
                          position=broke.position if broke.position is not None else valid_end)
        elif batches.zero_padding_from is not None:
            yield Finding(NOTE, "log-padding", path, f"{log.size - valid_end} bytes of zero padding after the last "
                          f"batch (a preallocated or crashed active segment)", position=valid_end)
        elif partial and self.active:
            yield Finding(NOTE, "append-in-progress", path, f"the last {log.size - valid_end} bytes are the start "
                          f"of a batch still being written (append in progress)", position=valid_end)
        elif partial:
            yield Finding(ERROR, "incomplete-batch", path, f"the last {log.size - valid_end} bytes are not a "
                          f"complete batch, and this is not the partition's active segment (a broker's recovery "
                          f"truncates them){rest}", position=valid_end)
        if density is not None and index is not None:
            yield from density.findings(index.path or "", index.entries, valid_end, facts.batches)

    def _batch_rules(self, batch: Batch, prev_last: int | None, batches: LogBatches) -> Iterator[Finding]:
        path = self.seg.log or ""
        if not batch.is_valid:
            computed = batches.computed_crc(batch)
            yield Finding(ERROR, "crc", path, f"Record is corrupt (stored crc = {batch.crc}, computed crc = "
                          f"{computed}): the batch's bytes changed after it was written", offset=batch.base_offset,
                          position=batch.position)
        problem = offset_range_problem(batch, self.seg.base_offset)
        if problem is not None:
            yield Finding(ERROR, "offset-range", path, problem, offset=batch.base_offset, position=batch.position)
        if prev_last is not None and batch.base_offset <= prev_last:
            yield Finding(ERROR, "offset-not-increasing", path, f"the batch starts at offset {batch.base_offset}, "
                          f"not above the previous batch's last offset {prev_last}", offset=batch.base_offset,
                          position=batch.position)
        try:
            batch.codec  # noqa: B018 - raises for a codec id Kafka does not know
        except KdumpError as err:
            yield Finding(ERROR, "records", path, err.reason, offset=batch.base_offset, position=batch.position)

    def _records(self, batches: LogBatches, batch: Batch, open_txns: set[int]) -> tuple[int, Finding | None]:
        """The batch's record count, and why its records cannot be decoded (None: they can, or were not).

        Decodes when deep, for a legacy wrapper, or for a transaction marker (``decodes_records``)."""
        if batch.is_transactional and not batch.is_control and batch.producer_id not in open_txns:
            open_txns.add(batch.producer_id)
            self.facts.txn_events.append((BEGIN, batch.producer_id, batch.base_offset))
        if not decodes_records(batch, self.deep):
            return header_count(batch), None
        decoded = self.decoded(batches, batch)
        if decoded.problem is not None:
            return decoded.records, Finding(
                ERROR, "records", self.seg.log or "", f"the batch's CRC is valid but its records cannot be "
                f"decoded: {decoded.problem}", offset=batch.base_offset, position=batch.position)
        if decoded.outcome is not None:
            open_txns.discard(batch.producer_id)
            self.facts.txn_events.append((decoded.outcome, batch.producer_id, batch.base_offset))
        return decoded.records, None
