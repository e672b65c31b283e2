"""Which records a dump prints (``--offsets``, ``--from``/``--to``, ``--key``/``--value``, ``--limit``).

A filtered dump prints Kafka's lines for the matching records only, each after the line of its
batch (a batch without a matching record prints nothing). It starts where Kafka's own lookups
would (``kdump.log.lookup.scan_start``: the sparse ``.index``, and the ``.timeindex`` for ``--from``)
and stops at the first batch past the last offset, so a dump of a few offsets of a large segment
reads kilobytes. Timestamps need not increase along a log, so ``--to`` alone does not end the scan.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kdump.errors import KdumpError, UsageError
from kdump.format.batch import Batch
from kdump.format.records import Record
from kdump.log.files import base_offset_of, sibling

if TYPE_CHECKING:
    from kdump.log.logdir import SegmentFiles
    from kdump.log.segment import ReadOnlyFile

_RANGE = re.compile(r"^(\d*)\.\.(\d*)$")


@dataclass(frozen=True)
class RecordFilter:
    first_offset: int | None = None     # inclusive bounds; None: open
    last_offset: int | None = None
    from_time: int | None = None
    to_time: int | None = None
    key: re.Pattern[str] | None = None   # searched in the key's text as printed (its decoder's output)
    value: re.Pattern[str] | None = None
    limit: int | None = None             # records printed by the whole run

    def __post_init__(self) -> None:
        if self.first_offset is not None and self.last_offset is not None and self.first_offset > self.last_offset:
            raise UsageError(f"--offsets {self.first_offset}..{self.last_offset}: the first offset is after the last")
        if self.from_time is not None and self.to_time is not None and self.from_time > self.to_time:
            raise UsageError(f"--from {self.from_time} is after --to {self.to_time}")
        if self.limit is not None and self.limit < 1:
            raise UsageError(f"--limit must be at least 1, not {self.limit}")

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.first_offset, self.last_offset, self.from_time, self.to_time,
                                           self.key, self.value, self.limit))

    def past_end(self, batch: Batch, previous_last: int | None) -> bool:
        """Neither ``batch`` nor any later one can hold a matching record (offsets grow along a log; a
        v0/v1 wrapper's offset is its last record's, so only the batch before it bounds its first)."""
        last = self.last_offset
        return last is not None and ((batch.magic >= 2 and batch.base_offset > last)
                                     or (previous_last is not None and previous_last >= last))

    def matcher(self, texts: Callable[[Record], tuple[str | None, str | None]]) -> Callable[[Record, bool], bool]:
        """``match(record, is_control)``; ``texts`` gives a record's key and value text as printed."""
        lo, hi = self.first_offset, self.last_offset
        t0, t1 = self.from_time, self.to_time
        key, value = self.key, self.value

        def match(record: Record, is_control: bool) -> bool:
            if (lo is not None and record.offset < lo) or (hi is not None and record.offset > hi):
                return False
            if (t0 is not None and record.timestamp < t0) or (t1 is not None and record.timestamp > t1):
                return False
            if key is None and value is None:
                return True
            if is_control:  # a control record prints no key or payload for a pattern to find
                return False
            key_text, value_text = texts(record)
            return ((key is None or (key_text is not None and key.search(key_text) is not None))
                    and (value is None or (value_text is not None and value.search(value_text) is not None)))

        return match


def parse_offset_range(text: str) -> tuple[int | None, int | None]:
    """``A..B``, ``A..``, ``..B`` (inclusive) or a single offset ``A``."""
    if text.strip().isdigit():
        return int(text), int(text)
    match = _RANGE.match(text.strip())
    if match is None or match.group(0) == "..":
        raise UsageError(f"--offsets {text!r}: give A..B, A.. or ..B with offsets >= 0 (or one offset)")
    first, last = (int(g) if g else None for g in match.groups())
    return first, last


def segment_of(log_path: str) -> SegmentFiles:
    """A ``.log`` and the indexes beside it."""
    from kdump.log.logdir import SegmentFiles  # here, as the lookups below: only a filtered dump needs them

    index, time_index = sibling(log_path, ".index"), sibling(log_path, ".timeindex")
    return SegmentFiles(base_offset_of(log_path), log=log_path, index=index if os.path.exists(index) else None,
                        time_index=time_index if os.path.exists(time_index) else None)


def start_position(records: RecordFilter, log_path: str, log: ReadOnlyFile) -> tuple[int, str | None]:
    """Where the filtered scan of this segment starts, and a note when its indexes could not be used."""
    if (records.first_offset is None and records.from_time is None) or not log_path.endswith(".log"):
        return 0, None  # a KRaft snapshot (.checkpoint) has no index
    from kdump.log.lookup import scan_start

    return scan_start(segment_of(log_path), log, records.first_offset, records.from_time)


def segments_to_filter(files: list[str], records: RecordFilter) -> list[str]:
    """A directory's files a filtered dump reads: the ``.log`` segments that can hold offsets in range
    (a segment holds its base offset up to the next segment's) and, but for a partition's last
    segment, whose time index reaches ``--from`` (its last entry is the segment's largest timestamp).
    A name or time index that cannot be read keeps its segment, so the dump reports it."""
    from kdump.log.lookup import segment_largest_timestamp

    logs = [path for path in files if path.endswith(".log")]
    bases = [_base_offset(path) for path in logs] + [None]
    first, last = records.first_offset, records.last_offset
    kept = []
    for i, path in enumerate(logs):
        base, following = bases[i], bases[i + 1]
        is_last = i + 1 >= len(logs) or os.path.dirname(logs[i + 1]) != os.path.dirname(path)
        if base is not None and ((last is not None and base > last) or
                                 (first is not None and not is_last and following is not None and following <= first)):
            continue
        if base is not None and records.from_time is not None and not is_last:
            try:
                largest = segment_largest_timestamp(segment_of(path))
            except KdumpError:
                largest = None
            if largest is not None and largest < records.from_time:
                continue
        kept.append(path)
    return kept


def _base_offset(path: str) -> int | None:
    try:
        return base_offset_of(path)
    except KdumpError:
        return None
