"""From paths to work: the segments ``discovery`` finds, cut into byte ranges, pruned.

Runs once on the driver (Spark's planner process). Everything returned is a plain frozen dataclass
so it pickles into tasks without pyspark. Splits are cut only at batch positions taken from the
segment's ``.index`` that the ``.log`` confirms (a CRC-valid batch starts there, at or before the
entry's offset), so a task never starts in the middle of a batch, whatever the index says.

Pruning relies on Kafka's invariants (offsets increase through a partition, a rolled segment's last
time-index entry holds its largest timestamp) only through index entries the log confirms: a split
starts at an ``.index`` position where a CRC-valid batch begins, and a segment is skipped by time
only when the batch its last ``.timeindex`` entry names has that maxTimestamp. It only ever drops
work that cannot hold a matching row, and Spark still re-applies every filter, so a damaged index
costs speed, not rows.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from kdump.arrow.discovery import Segment, require_segments

if TYPE_CHECKING:
    from kdump.arrow.cluster_plan import FatedRange
from kdump.broker.isolation import AbortedRange
from kdump.errors import InputError, KdumpError
from kdump.format.batch import Batch
from kdump.format.index import (
    OFFSET_ENTRY_SIZE,
    TIME_ENTRY_SIZE,
    count_entries,
    is_padding,
    read_offset_entry,
    read_time_entry,
)
from kdump.format.txnindex import iter_aborted_txns
from kdump.log.batches import LogBatches
from kdump.log.locations import open_any
from kdump.log.lookup import checked_entry
from kdump.log.segment import SPLIT_BYTES, ReadOnlyFile, read_small_file
from kdump.log.state_files import MAX_SNAPSHOT_BYTES

DEFAULT_SPLIT_BYTES = SPLIT_BYTES   # kdump.log.segment: the one split size (dump, verify, export)


@dataclass(frozen=True, slots=True)
class Split:
    """A byte range [start, end) of a segment that starts at a batch and ends before one."""

    segment: Segment
    start: int
    end: int
    min_offset: int                 # no entry in the range holds a smaller offset
    max_offset: int | None          # ... nor a larger one (None: unknown)
    # The partition's aborted transactions that may reach into the range, when planned with them
    # (``aborts_known``); otherwise the ``aborted`` column is null: unknown, not false.
    aborted: tuple[AbortedRange, ...] = ()
    aborts_known: bool = False
    # Under ``export --cluster``: the offsets of the range that are written, each with its fate (only rows
    # inside one are kept; kdump.arrow.cluster_plan). Empty: every row, no fate columns.
    fates: tuple[FatedRange, ...] = ()


@dataclass(frozen=True, slots=True)
class Pruning:
    """Conjunctive bounds taken from pushed filters; None means unbounded."""

    topics: frozenset[str] | None = None
    partitions: frozenset[int] | None = None
    offset_min: int | None = None
    offset_max: int | None = None
    timestamp_min: int | None = None    # indexes keep maxima: a lower bound prunes segments and batches
    offsets: frozenset[int] | None = None   # offset = / IN: only ranges holding one of these
    # An upper bound prunes only LogAppendTime batches (every record has the batch's maxTimestamp):
    # Kafka keeps no minimum timestamps, and CreateTime records may be older than the first one.
    timestamp_max: int | None = None

    @property
    def is_empty(self) -> bool:
        return self == Pruning()

    def may_hold(self, low: int, high: int | None) -> bool:
        """Whether a range of offsets [low, high] (high None: unbounded) can hold an offset the bounds let through."""
        if (self.offset_max is not None and low > self.offset_max) or (
                self.offset_min is not None and high is not None and high < self.offset_min):
            return False
        return self.offsets is None or any(o >= low and (high is None or o <= high) for o in self.offsets)


# ---- splitting and pruning ---------------------------------------------------------------------

def _read_index(location: str) -> bytes:
    """An index the listing found: unreadable is an error, never a plan that silently has fewer splits."""
    try:
        return read_small_file(location, MAX_SNAPSHOT_BYTES)
    except KdumpError as err:
        raise InputError(f"cannot read the index: {err.reason}", path=location) from None


def offset_index(segment: Segment) -> list[tuple[int, int]]:
    """(offset, position) entries that pass Kafka's ordering rules; [] when there is no usable index."""
    if segment.index is None:
        return []
    data = _read_index(segment.index)
    entries: list[tuple[int, int]] = []
    for slot in range(count_entries(len(data), OFFSET_ENTRY_SIZE)):
        entry = read_offset_entry(data, segment.base_offset, slot)
        if is_padding(slot, entry.offset, segment.base_offset):
            break                                       # preallocated zeros: the end of real entries
        if entry.position >= segment.size or entry.offset < segment.base_offset or (
                entries and (entry.offset <= entries[-1][0] or entry.position <= entries[-1][1])):
            break                                       # stop trusting the index at its first bad entry
        entries.append((entry.offset, entry.position))
    return entries


def time_entries(segment: Segment) -> list[tuple[int, int]] | None:
    """(timestamp, offset) entries of the segment's ``.timeindex``; None when one breaks Kafka's rules.

    ``TimeIndex.maybeAppend`` (storage/.../log/TimeIndex.java, Kafka 4.3) appends only a timestamp
    above the last entry's, at an offset not below it, inside the segment; an index that does not
    follow them is not used at all (pruning a segment on it could lose rows).
    """
    if segment.time_index is None:
        return None
    data = _read_index(segment.time_index)
    entries: list[tuple[int, int]] = []
    for slot in range(count_entries(len(data), TIME_ENTRY_SIZE)):
        entry = read_time_entry(data, segment.base_offset, slot)
        if slot > 0 and entry.offset == segment.base_offset and entry.timestamp == 0:
            break                                       # zero padding
        if entry.offset < segment.base_offset or (
                segment.next_base_offset is not None and entry.offset >= segment.next_base_offset) or (
                entries and (entry.timestamp < entries[-1][0] or entry.offset < entries[-1][1])):
            return None
        entries.append((entry.timestamp, entry.offset))
    return entries


def largest_timestamp(segment: Segment, index: list[tuple[int, int]] | None = None,
                      check: BoundaryCheck | None = None) -> int | None:
    """The largest timestamp of a rolled segment, only when the log confirms it (None: unknown).

    It is the time index's last entry (Kafka appends the segment's largest timestamp, at the offset
    of the batch holding it, when the segment rolls: ``LogSegment.onBecomeInactiveSegment``). The
    entry is checked as split points are: the batch holding its offset must start at a position an
    ``.index`` entry gives and the log confirms (or be found by scanning from the segment's start),
    pass its CRC check and have exactly that maxTimestamp. A damaged entry is then not used, which
    costs reading the segment, never rows.
    """
    if segment.time_index is None or segment.next_base_offset is None:
        return None                                     # the active segment's index lags its data
    entries = time_entries(segment)
    if not entries:
        return None
    timestamp, offset = entries[-1]
    if check is None:
        with closing(SplitPoints(segment)) as points:
            return largest_timestamp(segment, index, points)
    batch = _batch_holding(segment, offset, offset_index(segment) if index is None else index, check)
    return timestamp if batch is not None and batch.max_timestamp == timestamp else None


def _batch_holding(segment: Segment, offset: int, index: list[tuple[int, int]], check: BoundaryCheck) -> Batch | None:
    """The CRC-valid batch holding ``offset``, scanned for from the last confirmed index entry at or below it."""
    start = 0
    for entry_offset, position in reversed([e for e in index if e[0] <= offset]):
        if check(entry_offset, position) is not None:
            start = position
            break
    with open_any(segment.log) as file:
        try:
            for batch in LogBatches(file, start, window_bytes=PROBE_BYTES):
                if batch.last_offset >= offset:
                    return batch if batch.is_valid and batch.base_offset <= offset else None
        except KdumpError:
            return None
    return None


PROBE_BYTES = 64 * 1024


BoundaryCheck = Callable[[int, int], "Batch | None"]
"""(index offset, position) -> the batch that really starts there, or None when it cannot start a split."""


class SplitPoints:
    """Checks, on the driver, that an index entry points at a real batch before a split starts there.

    A wrong ``.index`` entry (one that points inside a batch) would make a task start reading in the
    middle of a batch: it would see garbage, stop, and lose every record after it, while the split
    before it would end in the middle of that batch. So a split point must be a batch the log itself
    confirms, by the rule ``kdump find`` applies to an index entry before it trusts it
    (``kdump.log.lookup.checked_entry``), with the batch's CRC checked as well. An entry that fails
    is not used: the split before it runs on to the next confirmed point, scanning from a batch
    boundary it knows.
    """

    def __init__(self, segment: Segment) -> None:
        self.segment = segment
        self._file: ReadOnlyFile | None = None
        self.checked: dict[int, Batch | None] = {}

    def __call__(self, offset: int, position: int) -> Batch | None:
        if position not in self.checked:
            if self._file is None:
                self._file = open_any(self.segment.log)
            self.checked[position] = checked_entry(self._file, offset, position, check_crc=True)[0]
        return self.checked[position]

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def split_segment(segment: Segment, split_bytes: int, index: list[tuple[int, int]],
                  check: BoundaryCheck | None = None) -> list[Split]:
    """Cut ``segment`` into ranges of about ``split_bytes``, at confirmed batch positions from its index.

    Offset bounds per range (why they hold, offsets increasing through a partition): the batch b that
    starts a range was read at its position, so every offset before it is below b's base offset (for
    a v0/v1 wrapper, whose header holds its last inner offset, below that too), and, for a v2 batch,
    every offset from it on is at least its base offset.
    """
    upper = None if segment.next_base_offset is None else segment.next_base_offset - 1
    if segment.size <= split_bytes or not index:
        return [Split(segment, 0, segment.size, segment.base_offset, upper)]
    if check is None:
        with closing(SplitPoints(segment)) as points:
            return split_segment(segment, split_bytes, index, points)
    splits = []
    start, low, target = 0, segment.base_offset, split_bytes
    for offset, position in index:
        if position < target or position <= start:
            continue
        batch = check(offset, position)
        if batch is None:
            continue                    # not a batch boundary: the range runs on to the next entry
        splits.append(Split(segment, start, position, low, batch.base_offset - 1))
        start, target = position, position + split_bytes
        if not batch.is_legacy:
            low = batch.base_offset
    splits.append(Split(segment, start, segment.size, low, upper))
    return splits


def narrow_split(split: Split, index: list[tuple[int, int]], pruning: Pruning, check: BoundaryCheck) -> Split | None:
    """Drop or shrink a split using offset bounds (None when nothing in it can match).

    A range is moved or cut only at index positions ``check`` confirms (see ``SplitPoints``).
    """
    lo, hi = pruning.offset_min, pruning.offset_max
    if not pruning.may_hold(split.min_offset, split.max_offset):
        return None
    inside = [(offset, position) for offset, position in index if split.start < position < split.end]
    start, end = split.start, split.end
    if lo is not None:
        # The last confirmed batch whose base is <= lo: every offset before it is below its base.
        for offset, position in reversed([e for e in inside if e[0] <= lo]):
            batch = check(offset, position)
            if batch is not None and batch.base_offset <= lo:
                start = position
                break
    if hi is not None:
        # The first confirmed v2 batch whose base is > hi: every offset from it on is too.
        for offset, position in inside:
            if offset <= hi or position <= start:
                continue
            batch = check(offset, position)
            if batch is not None and not batch.is_legacy and batch.base_offset > hi:
                end = position
                break
    if start >= end:
        return None
    return replace(split, start=start, end=end) if (start, end) != (split.start, split.end) else split


def partition_aborts(segments: list[Segment]) -> dict[str, list[AbortedRange]]:
    """The aborted transactions of each partition directory, from all of its segments' ``.txnindex``.

    A transaction's entry is written to the index of the segment holding its ABORT marker, which may
    come after the segments holding its records: a split only knows about it from here.
    """
    aborts: dict[str, list[AbortedRange]] = {}
    for segment in segments:
        found = aborts.setdefault(segment.history or posixpath.dirname(segment.log), [])
        if segment.txn_index is not None:
            data = read_small_file(segment.txn_index, MAX_SNAPSHOT_BYTES)
            found.extend(AbortedRange(e.producer_id, e.first_offset, e.last_offset)
                         for e in iter_aborted_txns(data, segment.txn_index))
    return aborts


def _reaching(aborts: list[AbortedRange], split: Split) -> tuple[AbortedRange, ...]:
    return tuple(a for a in aborts if a.last_offset >= split.min_offset
                 and (split.max_offset is None or a.first_offset <= split.max_offset))


def plan(locations: Iterable[str], *, split_bytes: int = DEFAULT_SPLIT_BYTES,
         pruning: Pruning = Pruning(), with_aborts: bool = False) -> list[Split]:
    """All splits to read, in topic/partition/offset order, after pruning.

    ``with_aborts``: give each split the aborted transactions of its partition that may reach into it
    (what read_committed and the ``aborted`` column need).
    """
    if split_bytes <= 0:
        raise ValueError("splitBytes must be positive")
    splits: list[Split] = []
    segments = require_segments(locations)
    aborts = partition_aborts(segments) if with_aborts else {}
    for segment in segments:
        if pruning.topics is not None and segment.topic not in pruning.topics:
            continue
        if pruning.partitions is not None and segment.partition not in pruning.partitions:
            continue
        if segment.size == 0:
            continue
        if not pruning.may_hold(segment.base_offset,
                                None if segment.next_base_offset is None else segment.next_base_offset - 1):
            continue
        # The driver reads an index only when it can change the plan (thousands of small remote
        # reads add up): to split a large segment, to narrow ranges for an offset filter, or to
        # find the batch a time-index entry names.
        by_time = (pruning.timestamp_min is not None and segment.time_index is not None
                   and segment.next_base_offset is not None)
        needs_index = (segment.size > split_bytes or pruning.offset_min is not None
                       or pruning.offset_max is not None or by_time)
        index = offset_index(segment) if needs_index else []
        with closing(SplitPoints(segment)) as points:
            if by_time:
                largest = largest_timestamp(segment, index, points)
                if largest is not None and pruning.timestamp_min is not None and largest < pruning.timestamp_min:
                    continue
            for split in split_segment(segment, split_bytes, index, points):
                narrowed = narrow_split(split, index, pruning, points)
                if narrowed is not None and pruning.may_hold(narrowed.min_offset, narrowed.max_offset):
                    if with_aborts:
                        in_partition = aborts.get(segment.history or posixpath.dirname(segment.log), [])
                        narrowed = replace(narrowed, aborted=_reaching(in_partition, narrowed), aborts_known=True)
                    splits.append(narrowed)
    return splits


DEFAULT_PACK_BYTES = 16 * 1024 * 1024


def pack(splits: Sequence[Split], target_bytes: int) -> list[tuple[Split, ...]]:
    """Consecutive splits grouped into tasks of at most ``target_bytes`` (a larger split is a task alone).

    Partitions that roll segments on time, or compacted topics, leave many segments of a few KB;
    a task each costs a Spark task and a Python worker round trip for almost no bytes. Order is
    kept, so a task reads one partition's segments in offset order.
    """
    tasks: list[tuple[Split, ...]] = []
    current: list[Split] = []
    size = 0
    for split in splits:
        length = split.end - split.start
        if current and size + length > target_bytes:
            tasks.append(tuple(current))
            current, size = [], 0
        current.append(split)
        size += length
    if current:
        tasks.append(tuple(current))
    return tasks


def parse_size(text: str | int) -> int:
    """'134217728', '128m', '64k', '1g' -> bytes (Spark-style size strings for options)."""
    if isinstance(text, int):
        return text
    value = text.strip().lower().removesuffix("b")
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(value[-1:], 1)
    number = value[:-1] if scale > 1 else value
    try:
        return int(float(number) * scale)
    except ValueError:
        raise ValueError(f"not a size: {text!r} (use bytes or a k/m/g suffix)") from None
