"""Index checks for ``kdump verify-index``: one small generator per rule, each yielding findings.

The rules check what Kafka's lookups rely on (spec §5.1, §5.2), not the dump tool's strict
comparison, which raises false alarms on healthy data (spec §2.3, §2.4, §4.2):

* followers before Kafka 4.1 indexed (last offset of a fetched chunk, position of its first batch);
* the log cleaner writes its own entries the same chunked way;
* time-index entries may name the record with the largest timestamp, inside a batch;
* live and crashed segments carry preallocated zero padding.

Errors mean a lookup would read out of bounds or return the wrong data; notes are facts worth
knowing. ``verify_segment`` runs every rule over one segment's files.
"""

from __future__ import annotations

import bisect
import itertools
from array import array
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass

from kdump.errors import KdumpError
from kdump.format.index import OFFSET_ENTRY_SIZE, TIME_ENTRY_SIZE
from kdump.log.batches import LogBatches
from kdump.log.indexes import OffsetIndex, TimeIndex, open_offset_index, open_time_index
from kdump.log.logdir import SegmentFiles
from kdump.log.segment import ReadOnlyFile
from kdump.verify.findings import ERROR, NOTE, Finding

DEFAULT_INDEX_INTERVAL_BYTES = 4096


@dataclass
class LogLayout:
    """The shallow facts about one ``.log`` the checks need, gathered in one pass over batch headers.

    Kept in ``array('q')`` columns: 32 bytes a batch, a quarter of what lists of ints take.
    """

    size: int
    positions: array
    base_offsets: array
    last_offsets: array
    max_timestamps: array
    valid_end: int                 # end of the last complete batch
    scan_error: str | None = None  # why the scan stopped early, if it did
    padding_from: int | None = None  # where a zero-padded (preallocated) tail starts
    _running_max: array | None = None

    @property
    def last_offset(self) -> int | None:
        return self.last_offsets[-1] if self.last_offsets else None

    def running_max(self) -> array:
        """Largest batch maxTimestamp up to and including each batch (what the broker tracks)."""
        if self._running_max is None:
            self._running_max = array("q", itertools.accumulate(self.max_timestamps, max))
        return self._running_max

    def describe(self, i: int) -> str:
        return f"batch at position {self.positions[i]} holds offsets {self.base_offsets[i]}..{self.last_offsets[i]}"


def scan_layout(log: ReadOnlyFile) -> LogLayout:
    positions, bases, lasts, max_ts = array("q"), array("q"), array("q"), array("q")
    error = None
    batches = LogBatches(log, check_crc=False)
    try:
        for batch in batches:
            positions.append(batch.position)
            bases.append(batch.base_offset)
            lasts.append(batch.last_offset)
            max_ts.append(batch.max_timestamp)
    except KdumpError as err:
        error = str(err)
    return LogLayout(log.size, positions, bases, lasts, max_ts, batches.valid_end, error,
                     batches.zero_padding_from)


# --- structure of the index files --------------------------------------------------------------------------


def check_size(path: str, size: int, entry_size: int) -> Iterator[Finding]:
    if size % entry_size:
        yield Finding(ERROR, "index-size", path, f"{size} bytes is not a multiple of {entry_size} (Kafka's sanity "
                                                 f"check fails; the trailing {size % entry_size} bytes are ignored)")


def check_padding(path: str, index: OffsetIndex | TimeIndex) -> Iterator[Finding]:
    if not index.padding_slots:
        return
    if index.padding_is_zero():
        yield Finding(NOTE, "padding", path, f"preallocated, {index.entries} valid entries then {index.padding_slots} "
                                             f"zero slots (active segment, or the broker stopped without "
                                             f"closing it)", entry=index.entries)
    else:
        entry = index.entry(index.entries)
        yield Finding(ERROR, "padding-not-zero", path, "an entry with relative offset 0 after the first slot ends "
                      "the entries, but non-zero bytes follow it (Kafka's lookups read them as entries)",
                      entry=index.entries, offset=entry.offset)


# --- offset index ------------------------------------------------------------------------------------------


def check_offset_entries(path: str, index: OffsetIndex, log: LogLayout) -> Iterator[Finding]:
    """Every entry must let a lookup start at a batch boundary no later than the target's batch."""
    base = index.base_offset
    positions, lasts = log.positions, log.last_offsets
    log_last = log.last_offset
    bisect_right = bisect.bisect_right
    prev_offset = prev_position = -1
    for slot, relative, p in index.raw_entries():
        o = base + relative
        if relative < 0:
            yield Finding(ERROR, "offset-below-base", path, f"offset is below the base offset {base}",
                          slot, o, p)
        elif slot and o <= prev_offset:
            yield Finding(ERROR, "offset-not-increasing", path,
                          f"offset is not above the previous entry's {prev_offset}", slot, o, p)
        if slot and p <= prev_position:
            yield Finding(ERROR, "position-not-increasing", path,
                          f"position is not above the previous entry's {prev_position}", slot, o, p)
        prev_offset, prev_position = o, p
        if p < 0 or p > log.size:
            yield Finding(ERROR, "position-past-log", path, f"position is outside the log ({log.size} bytes)",
                          slot, o, p)
            continue
        i = bisect_right(positions, p) - 1
        if i < 0 or positions[i] != p:
            says = f"the log's last complete batch ends at {log.valid_end}" if p >= log.valid_end else log.describe(i)
            yield Finding(ERROR, "position-not-batch", path, "position is not the start of a batch", slot, o, p,
                          log_says=says)
            continue
        if o == lasts[i] and (i == 0 or o > lasts[i - 1]):
            continue  # the leader layout: nothing to say
        if i > 0 and o <= lasts[i - 1]:
            yield Finding(ERROR, "offset-behind-position", path,
                          f"offset is not above the batches before this position: a lookup for offsets "
                          f"{o}..{lasts[i - 1]} would start after them", slot, o, p, log_says=log.describe(i - 1))
        elif log_last is not None and o > log_last:
            yield Finding(ERROR, "offset-past-log", path, f"offset is beyond the log's last offset {log_last}",
                          slot, o, p)
        else:
            yield Finding(NOTE, "offset-not-batch-last", path,
                          f"not the last offset of the batch here (pre-4.1 follower or log-cleaner layout); "
                          f"Kafka's dump reports \"Index offset: {o}, log offset: {lasts[i]}\"", slot, o, p,
                          log_says=log.describe(i))


def check_offset_density(path: str, index: OffsetIndex, log: LogLayout, interval: int) -> Iterator[Finding]:
    """``--deep``: entries should come about every index.interval.bytes of log."""
    if log.valid_end <= 2 * interval or not log.positions:
        return
    average_batch = log.valid_end / len(log.positions)
    gap = log.valid_end / (index.entries + 1)
    if gap < interval or gap > 4 * (interval + average_batch):
        yield Finding(NOTE, "density", path, f"{index.entries} entries for {log.valid_end} bytes of log: one per "
                                             f"{gap:.0f} bytes, far from index.interval.bytes={interval} (average "
                                             f"batch {average_batch:.0f} bytes)")


# --- time index --------------------------------------------------------------------------------------------


def check_time_entries(path: str, index: TimeIndex, log: LogLayout) -> Iterator[Finding]:
    """Each entry must hold the largest timestamp up to its offset, first reached in that batch."""
    base = index.base_offset
    lasts = log.last_offsets
    log_last = log.last_offset
    running = log.running_max() if index.entries else []
    bisect_left = bisect.bisect_left
    prev_ts = prev_offset = 0
    for slot, t, relative in index.raw_entries():
        o = base + relative
        if relative < 0:
            yield Finding(ERROR, "offset-below-base", path, f"offset is below the base offset {base}", slot, o,
                          timestamp=t)
            continue
        if slot and t <= prev_ts:
            yield Finding(ERROR, "timestamp-not-increasing", path,
                          f"timestamp is not above the previous entry's {prev_ts}", slot, o, timestamp=t)
        if slot and o < prev_offset:
            yield Finding(ERROR, "offset-decreasing", path, f"offset is below the previous entry's {prev_offset}",
                          slot, o, timestamp=t)
        prev_ts, prev_offset = t, o
        if log_last is None or o > log_last:
            says = f"the log's last offset is {log_last}" if log_last is not None else "the log holds no batch"
            yield Finding(ERROR, "offset-past-log", path, "offset is beyond the end of the log", slot, o,
                          timestamp=t, log_says=says)
            continue
        i = bisect_left(lasts, o)
        if running[i] != t:
            yield Finding(ERROR, "timestamp-not-max", path,
                          f"timestamp is not the largest timestamp of the records up to offset {o}", slot, o,
                          timestamp=t, log_says=f"largest timestamp up to the {log.describe(i)} is {running[i]}")
            continue
        if i and running[i - 1] >= t:
            first = bisect_left(running, t)
            yield Finding(ERROR, "timestamp-reached-earlier", path,
                          f"the log reaches timestamp {t} before offset {o}: a lookup for it would skip records",
                          slot, o, timestamp=t, log_says=f"first reached in the {log.describe(first)}")
        elif o != lasts[i]:
            yield Finding(NOTE, "offset-inside-batch", path,
                          f"points inside a batch (at the record with the largest timestamp); Kafka's dump reports "
                          f"\"Indexed offset: {o}, found log offset: {lasts[i]}\"", slot, o, timestamp=t,
                          log_says=log.describe(i))


def check_time_index_tail(path: str, index: TimeIndex, log: LogLayout, active: bool) -> Iterator[Finding]:
    """A rolled segment's last entry holds its largest timestamp (segment choice for ListOffsets uses it)."""
    if not log.max_timestamps or active:
        return
    largest = log.running_max()[-1]
    last = index.last_entry()
    if largest >= 0 and (last is None or last.timestamp < largest):
        held = "no entry" if last is None else f"last entry has {last.timestamp}"
        yield Finding(NOTE, "time-index-no-roll-entry", path,
                      f"the segment's largest timestamp {largest} is not in the time index ({held}); Kafka then "
                      f"chooses segments for ListOffsets by the .log's mtime or misses this one")


# --- the files of one segment ------------------------------------------------------------------------------


def check_companions(seg: SegmentFiles) -> Iterator[Finding]:
    if seg.log is None:
        for path in (seg.index, seg.time_index):
            if path is not None:
                yield Finding(NOTE, "log-missing", path, "log file missing: nothing to check against (the broker "
                                                         "deletes such orphan indexes at start-up)")
        return
    if seg.index is None:
        yield Finding(NOTE, "index-missing", seg.log, "no .index beside this log (the broker rebuilds it at "
                                                      "start-up by recovering the segment)")
    if seg.time_index is None:
        yield Finding(NOTE, "timeindex-missing", seg.log, "no .timeindex beside this log")


def verify_segment(seg: SegmentFiles, *, deep: bool = False, interval: int = DEFAULT_INDEX_INTERVAL_BYTES,
                   active: bool = False) -> Iterator[Finding]:
    """Every rule over one segment. Raises InputError when a file cannot be read at all.

    The indexes are opened (and their valid entries counted) before the log: a broker appends to the
    log first and to the indexes after (LogSegment.append), so every entry counted then points into
    the log as it is when kdump reads it next, even while the broker keeps writing.
    """
    yield from check_companions(seg)
    if seg.log is None:
        for path, entry_size in ((seg.index, OFFSET_ENTRY_SIZE), (seg.time_index, TIME_ENTRY_SIZE)):
            if path is not None:
                with ReadOnlyFile(path) as orphan:
                    yield from check_size(path, orphan.size, entry_size)
        return
    if seg.index is None and seg.time_index is None:
        return
    with ExitStack() as files:
        index = files.enter_context(open_offset_index(seg.index, seg.base_offset)) if seg.index else None
        tindex = files.enter_context(open_time_index(seg.time_index, seg.base_offset)) if seg.time_index else None
        with ReadOnlyFile(seg.log) as log_file:
            layout = scan_layout(log_file)
        if layout.scan_error is not None:
            yield Finding(ERROR, "log-unreadable", seg.log, f"batch framing is broken ({layout.scan_error}); "
                                                            f"checked against the {len(layout.positions)} batches "
                                                            f"before it")
        if index is not None:
            yield from check_size(index.path or "", index.size, OFFSET_ENTRY_SIZE)
            yield from check_padding(index.path or "", index)
            yield from check_offset_entries(index.path or "", index, layout)
            if deep:
                yield from check_offset_density(index.path or "", index, layout, interval)
        if tindex is not None:
            yield from check_size(tindex.path or "", tindex.size, TIME_ENTRY_SIZE)
            yield from check_padding(tindex.path or "", tindex)
            yield from check_time_entries(tindex.path or "", tindex, layout)
            yield from check_time_index_tail(tindex.path or "", tindex, layout, active or tindex.padding_slots > 0)
