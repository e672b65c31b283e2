"""``spark.readStream.format("kafka-log")``: new records of a log dir, micro-batch by micro-batch.

An offset is ``{partition directory: next offset}``, one entry per partition found, as Spark's Kafka
source keeps one per topic partition. Each micro-batch reads, per partition, the offsets from the
previous end to the log end offset found now (the offset after the last complete batch of the
last segment), planned with the batch reader's pruning; rows are then kept exactly in that range,
so a batch is never read twice and segments that appear between micro-batches are picked up.
Rows without an offset (bytes that cannot be framed, such as the tail a broker is still writing)
are not streamed: ``kdump spark verify`` reports damage.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from kdump.arrow.discovery import Segment, find_segments
from kdump.arrow.planning import SplitPoints, offset_index, plan
from kdump.arrow.reading import read_split, scan_range
from kdump.arrow.schema import arrow_schema
from kdump.errors import KdumpError

if TYPE_CHECKING:
    from kdump.spark.datasource import KafkaLogReader


class RangePartition(InputPartition):
    """One split and the offsets [low, high) of this micro-batch in its partition."""

    def __init__(self, split: Any, low: int, high: int) -> None:
        super().__init__((split, low, high))
        self.split, self.low, self.high = split, low, high


def log_end_offsets(locations: list[str]) -> dict[str, int]:
    """{partition directory: the offset after its last complete batch} for every partition found."""
    last: dict[str, Segment] = {}
    for segment in find_segments(locations):
        last[posixpath.dirname(segment.log)] = segment        # segments come in offset order
    return {pdir: _segment_end(segment) for pdir, segment in last.items()}


def _segment_end(segment: Segment) -> int:
    """The next offset of a segment: scan its batches from the last index entry the log confirms."""
    start = 0
    with closing(SplitPoints(segment)) as points:
        for offset, position in reversed(offset_index(segment)):
            if points(offset, position) is not None:
                start = position
                break
    end = segment.base_offset
    for entry in scan_range(segment.log, start, segment.size):
        if entry.batch is None:
            break                                   # an unframed tail (being written, or damaged)
        end = entry.batch.last_offset + 1
    return end


class KafkaLogStreamReader(DataSourceStreamReader):
    def __init__(self, batch_reader: KafkaLogReader) -> None:
        self.batch_reader = batch_reader     # paths, schema and options as the batch reader took them

    def initialOffset(self) -> dict:
        return {}                                   # every partition from its first offset

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        ends = log_end_offsets(self.batch_reader.paths)
        previous = start or {}
        # A partition whose log went back (deleted and recreated) is not read again from the start.
        return {pdir: max(end, previous.get(pdir, 0)) for pdir, end in ends.items()}

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        out: list[InputPartition] = []
        for pdir, high in sorted(end.items()):
            low = start.get(pdir, 0)
            if high <= low:
                continue
            pruning = replace(self.batch_reader.options.pruning, offset_min=low, offset_max=high - 1)
            try:
                splits = plan([pdir], split_bytes=self.batch_reader.split_bytes, pruning=pruning,
                              with_aborts=self.batch_reader.needs_aborts)
            except KdumpError:
                continue                            # the partition was deleted since latestOffset
            out.extend(RangePartition(split, low, high) for split in splits)
        return out

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, RangePartition)
        given = self.batch_reader.options
        key = "offset" if given.level == "record" else "lastOffset"
        full = arrow_schema(given.level)
        wanted = self.batch_reader.arrow_schema
        extra = [n for n in (key, "lastOffset") if n not in wanted.names]
        schema = pa.schema(list(wanted) + [full.field(n) for n in dict.fromkeys(extra)])
        options = replace(given, pruning=replace(given.pruning, offset_min=partition.low,
                                                 offset_max=partition.high - 1))
        for batch in read_split(partition.split, schema, options):
            offsets = pc.coalesce(batch.column(key), batch.column("lastOffset"))
            keep = pc.and_(pc.greater_equal(offsets, partition.low), pc.less(offsets, partition.high))
            rows = batch.filter(pc.fill_null(keep, False))
            if rows.num_rows:
                yield pa.RecordBatch.from_arrays([rows.column(n) for n in wanted.names], schema=wanted)

    def commit(self, end: dict) -> None:
        pass                                        # nothing is held between micro-batches
