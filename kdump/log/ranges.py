"""A segment cut into byte ranges of about ``segment.SPLIT_BYTES`` for several processes (``--jobs``): each range
starts at a batch, so the walks of the ranges, one after the other, read the batches one walk of the whole
segment reads, where each range starts at a batch that walk reaches.

The cuts come from the segment's offset index where it has one: the entry nearest each cut, checked against the
log as ``kdump find`` checks an entry before it trusts it (``checked_entry``, CRC included), a few small reads a
range. Without an index, and after its last entry the log confirms, they come from the framing walk itself (the
C scan of runs of v2 batches, framing only), which reads every byte. An entry the log confirms starts a batch,
though not always one the walk from position 0 reaches (a record's bytes can hold a whole batch): so the readers
of the ranges check that each ended where the next begins, and read on by themselves where it did not
(``kdump.dump.log.join_ranges``, ``kdump.verify.segment_check.DecodedRanges``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from kdump.errors import KdumpError
from kdump.log.batches import LogBatches
from kdump.log.indexes import open_offset_index
from kdump.log.logdir import SegmentFiles
from kdump.log.lookup import checked_entry
from kdump.log.segment import ReadOnlyFile

_TRIES = 8
"""Index entries tried after the one nearest a cut, before the rest of the segment is cut by the framing walk."""


def batch_ranges(seg: SegmentFiles, log: ReadOnlyFile, split_bytes: int,
                 end: int | None = None) -> Iterator[tuple[int, int]]:
    """``[start, stop)`` ranges of about ``split_bytes`` that cover ``[0, end)`` of ``seg``'s ``log``, each but the
    first starting at a batch (see the module docstring), yielded as they are found. Where the framing walk stops
    early (an error, zero padding, a partial entry) the last range runs on to ``end``, for its reader to meet what
    stopped it. A file of up to ``split_bytes`` is one range."""
    end = log.size if end is None else min(end, log.size)
    start = 0
    if end > split_bytes and seg.index is not None:
        for cut in _index_cuts(seg, log, split_bytes, end):
            yield start, cut
            start = cut
    yield from _walk_ranges(log, start, split_bytes, end)


def _index_cuts(seg: SegmentFiles, log: ReadOnlyFile, split_bytes: int, end: int) -> Iterator[int]:
    """Positions of offset-index entries about ``split_bytes`` apart that the log confirms, until the entries run
    out or stop being confirmed (a binary search by position: a healthy index's positions increase)."""
    assert seg.index is not None
    start = slot = 0
    try:
        with open_offset_index(seg.index, seg.base_offset) as index:
            while start + split_bytes < end:
                slot = bisect.bisect_left(range(index.entries), start + split_bytes, lo=slot,
                                          key=lambda s: index.entry(s).position)
                for tried in range(slot, min(slot + _TRIES, index.entries)):
                    entry = index.entry(tried)
                    if start < entry.position < end and \
                            checked_entry(log, entry.offset, entry.position, check_crc=True)[0] is not None:
                        break
                else:
                    return
                start, slot = entry.position, tried + 1
                yield start
    except KdumpError:
        return   # an index that cannot be read: the framing walk cuts the rest


def _walk_ranges(log: ReadOnlyFile, start: int, split_bytes: int, end: int) -> Iterator[tuple[int, int]]:
    """``batch_ranges`` from ``start`` (a batch) on, cut where the framing walk from there reaches, lazily."""
    if end - start > split_bytes:
        batches = LogBatches(log, start, end, check_crc=False)
        try:
            for run in batches.runs():
                if run[-1].position + run[-1].size - start < split_bytes:
                    continue    # the common run: a cut is looked for only in a run that passes one
                for batch in run:
                    stop = batch.position + batch.size
                    if stop - start >= split_bytes and stop < end:
                        yield start, stop
                        start = stop
        except KdumpError:
            pass    # framing breaks, or the file changed: the reader of the last range meets it
    yield start, end
