"""The ``kdump spark`` jobs: verify every segment in parallel, export records to Parquet.

``verify`` sends one segment per task (``mapInArrow`` over pickled ``Segment``s, so it runs on
Spark 3.3+ too). A task streams its ``.log`` once, checking each entry's framing and CRC, and checks
the indexes against what it sees on the way: it reads the ``.index``/``.timeindex`` first (at most
``segment.index.bytes``, 10 MiB) rather than remembering every batch, so memory stays bounded.

Index checks follow kafka-dump-log's ``--verify-index-only``: an offset index entry must point at
the start of a batch whose last offset is the entry's offset; a time index entry's timestamp must
be the max timestamp of the batch holding its offset; both must increase.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from kdump.format.index import (
    OFFSET_ENTRY_SIZE,
    TIME_ENTRY_SIZE,
    count_entries,
    is_padding,
    read_offset_entry,
    read_time_entry,
)
from kdump.spark.planning import Segment, find_segments, read_small_file
from kdump.spark.reading import DEFAULT_CHUNK_BYTES, crc_problem, scan_range

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PROBLEM_TYPE = pa.struct([
    pa.field("file", pa.string(), nullable=False),
    pa.field("check", pa.string(), nullable=False),     # crc, framing, index, timeindex
    pa.field("position", pa.int64()),                   # byte position in the .log (or entry slot)
    pa.field("offset", pa.int64()),
    pa.field("message", pa.string(), nullable=False),
])
VERIFY_SCHEMA = pa.schema([
    pa.field("topic", pa.string(), nullable=False),
    pa.field("partition", pa.int32(), nullable=False),
    pa.field("segment", pa.int64(), nullable=False),
    pa.field("bytes", pa.int64(), nullable=False),
    pa.field("batches", pa.int64(), nullable=False),
    pa.field("records", pa.int64(), nullable=False),
    pa.field("problems", pa.list_(pa.field("element", PROBLEM_TYPE, nullable=False)), nullable=False),
])


@dataclass
class SegmentReport:
    topic: str
    partition: int
    segment: int
    bytes: int = 0
    batches: int = 0
    records: int = 0
    problems: list[dict[str, Any]] = field(default_factory=list)

    def problem(self, file: str, check: str, message: str, position: int | None = None,
                offset: int | None = None) -> None:
        self.problems.append({"file": file, "check": check, "position": position, "offset": offset,
                              "message": message})


def _offset_entries(segment: Segment, report: SegmentReport) -> dict[int, int]:
    """position -> offset of the .index entries (problems with the file itself go to ``report``)."""
    if segment.index is None:
        return {}
    data = read_small_file(segment.index)
    if len(data) % OFFSET_ENTRY_SIZE:
        report.problem(segment.index, "index", f"Index file {segment.index} is corrupt, found {len(data)} "
                       f"bytes which is neither positive nor a multiple of {OFFSET_ENTRY_SIZE}")
    entries: dict[int, int] = {}
    last = None
    for slot in range(count_entries(len(data), OFFSET_ENTRY_SIZE)):
        entry = read_offset_entry(data, segment.base_offset, slot)
        if is_padding(slot, entry.offset, segment.base_offset):
            break
        if last is not None and entry.offset <= last:
            report.problem(segment.index, "index", f"Index offset {entry.offset} in slot {slot} is not "
                           f"larger than the previous entry's {last}", entry.position, entry.offset)
        last = entry.offset
        if entry.position >= segment.size:
            report.problem(segment.index, "index", f"Index entry (offset {entry.offset}, position "
                           f"{entry.position}) points past the end of the log ({segment.size} bytes)",
                           entry.position, entry.offset)
        else:
            entries[entry.position] = entry.offset
    return entries


def _time_entries(segment: Segment, report: SegmentReport) -> list[tuple[int, int]]:
    """(offset, timestamp) of the .timeindex entries, in file order."""
    if segment.time_index is None:
        return []
    data = read_small_file(segment.time_index)
    if len(data) % TIME_ENTRY_SIZE:
        report.problem(segment.time_index, "timeindex", f"Time index file {segment.time_index} is corrupt, "
                       f"found {len(data)} bytes which is neither positive nor a multiple of {TIME_ENTRY_SIZE}")
    out: list[tuple[int, int]] = []
    for slot in range(count_entries(len(data), TIME_ENTRY_SIZE)):
        entry = read_time_entry(data, segment.base_offset, slot)
        if slot > 0 and entry.offset == segment.base_offset and entry.timestamp == 0:
            break                                                # preallocated zeros
        if out and entry.timestamp < out[-1][1]:
            report.problem(segment.time_index, "timeindex", f"Found timestamp mismatch: timestamp "
                           f"{entry.timestamp} in slot {slot} is smaller than the previous {out[-1][1]}",
                           None, entry.offset)
        out.append((entry.offset, entry.timestamp))
    return out


def verify_segment(segment: Segment, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> SegmentReport:
    report = SegmentReport(segment.topic, segment.partition, segment.base_offset, segment.size)
    index = _offset_entries(segment, report)
    times = _time_entries(segment, report)
    t = 0
    for entry in scan_range(segment.log, 0, segment.size, chunk_bytes):
        batch = entry.batch
        if batch is None:
            report.problem(segment.log, "framing", entry.error or "unreadable entry", entry.position)
            break
        report.batches += 1
        report.records += batch.records_count if batch.records_count is not None else 1
        if not batch.is_valid:
            report.problem(segment.log, "crc", crc_problem(entry), entry.position, batch.base_offset)
        expected = index.pop(entry.position, None)
        if expected is not None and expected != batch.last_offset:
            report.problem(segment.index or "", "index", f"Index position {entry.position} offset {expected} "
                           f"does not match the batch there (last offset {batch.last_offset})",
                           entry.position, expected)
        while t < len(times) and times[t][0] <= batch.last_offset:
            offset, timestamp = times[t]
            if offset >= batch.base_offset and timestamp != batch.max_timestamp:
                report.problem(segment.time_index or "", "timeindex", f"Time index entry (timestamp "
                               f"{timestamp}, offset {offset}) does not match the max timestamp "
                               f"{batch.max_timestamp} of the batch holding that offset", entry.position, offset)
            t += 1
    for position, offset in sorted(index.items()):
        report.problem(segment.index or "", "index", f"Index entry (offset {offset}, position {position}) "
                       f"does not point at the start of a batch", position, offset)
    for offset, timestamp in times[t:]:
        report.problem(segment.time_index or "", "timeindex", f"Time index entry (timestamp {timestamp}, "
                       f"offset {offset}) names an offset past the end of the log", None, offset)
    return report


@dataclass
class VerifyResult:
    segments: list[SegmentReport]

    @property
    def problems(self) -> list[dict[str, Any]]:
        return [dict(p, topic=s.topic, partition=s.partition, segment=s.segment)
                for s in self.segments for p in s.problems]

    def to_json(self) -> dict[str, Any]:
        return {"segments": len(self.segments), "batches": sum(s.batches for s in self.segments),
                "records": sum(s.records for s in self.segments), "bytes": sum(s.bytes for s in self.segments),
                "problems": self.problems}


def verify(spark: "SparkSession", paths: list[str], chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> VerifyResult:
    """Verify every segment under ``paths``, one Spark task per segment."""
    from kdump.spark.schema import spark_struct

    segments = find_segments(paths)
    if not segments:
        return VerifyResult([])
    rows = [(bytearray(pickle.dumps(s)),) for s in segments]
    frame = spark.createDataFrame(spark.sparkContext.parallelize(rows, len(rows)), "segment binary")

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            reports = [asdict(verify_segment(pickle.loads(blob), chunk_bytes))
                       for blob in batch.column(0).to_pylist()]
            yield pa.RecordBatch.from_pylist(reports, schema=VERIFY_SCHEMA)

    collected = frame.mapInArrow(run, spark_struct(VERIFY_SCHEMA)).collect()
    reports = [SegmentReport(r.topic, r.partition, r.segment, r.bytes, r.batches, r.records,
                             [p.asDict() for p in r.problems]) for r in collected]
    reports.sort(key=lambda r: (r.topic, r.partition, r.segment))
    return VerifyResult(reports)


def export(spark: "SparkSession", paths: list[str], out: str, *, fmt: str = "parquet",
           partition_by: tuple[str, ...] = (), level: str = "record", mode: str = "errorifexists",
           options: dict[str, str] | None = None) -> int:
    """Write the ``kafka-log`` rows of ``paths`` to ``out``; returns the number of rows written."""
    from kdump.spark import load

    frame = load(spark, paths, level=level, **(options or {}))
    writer = frame.write.format(fmt).mode(mode)
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.save(out)
    # Counting the written files reads Parquet footers only; counting `frame` would decode twice.
    return int(spark.read.format(fmt).load(out).count())
