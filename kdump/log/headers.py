"""Batch headers only: the batches of a partition's segments without reading their records.

``kdump replicas`` compares replicas by (base offset, last offset, partition leader epoch, CRC),
which a v2 header holds in its first 61 bytes. ``HeaderReader`` reads a header where the previous
batch ends, so a log of large batches costs one small ``pread`` per batch and only the headers'
bytes; where batches are small it reads a window instead (a ``pread`` per 100-byte batch costs
more than the bytes it saves). The CRC is not checked: that needs every byte (``kdump verify`` does it).
Framing follows ``kdump.format.batch.scan_batches`` (Kafka's FileLogInputStream.nextBatch): a tail
of 17 bytes or fewer, or an entry that runs past the end of the file, ends the segment.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from kdump.errors import CorruptRecordError
from kdump.format.batch import (
    FRAMING,
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_OVERHEAD,
    MIN_RECORD_OVERHEAD,
    V2_HEADER_SIZE,
    Batch,
    read_batch,
)
from kdump.log.locations import open_any
from kdump.log.logdir import SegmentFiles
from kdump.log.lookup import index_position
from kdump.log.segment import ReadOnlyFile

SMALL_BATCH_BYTES = 4096
"""Below this a batch's successor is read with a window rather than a header-sized pread."""
WINDOW_BYTES = 64 << 10
# A legacy message's header fields lie within its first 26 bytes; a v2 header is 61.
_HEADER_READ = max(V2_HEADER_SIZE, LOG_OVERHEAD + 14 + 8)


@dataclass(frozen=True, slots=True)
class SegmentHeader:
    """One batch header and where it is: the segment's ``.log`` path and the batch's file position."""

    path: str
    batch: Batch


class ReadCounter:
    """Bytes read by header readers (what the benchmark reports)."""

    def __init__(self) -> None:
        self.bytes_read = 0


def segment_headers(path: str, *, counter: ReadCounter | None = None, start: int = 0,
                    end: int | None = None) -> Iterator[Batch]:
    """The batch headers of one ``.log`` from file position ``start`` (to ``end``: a piece of a split
    segment); zero padding ends it quietly.

    Raises CorruptRecordError (with the position) where a size field is below Kafka's minimum.
    """
    with open_any(path) as file:   # a local path or a URI (kdump.log.locations)
        yield from file_headers(file, counter=counter, start=start, end=end)


def file_headers(file: ReadOnlyFile, *, counter: ReadCounter | None = None, start: int = 0,
                 end: int | None = None) -> Iterator[Batch]:
    """``segment_headers`` over a file already open (the caller reads records of some batches from it)."""
    size = file.size if end is None else min(end, file.size)
    window = b""
    window_base = 0
    position = start
    small = True
    while position < size - HEADER_SIZE_UP_TO_MAGIC:
        offset_in = position - window_base
        if offset_in < 0 or offset_in + _HEADER_READ > len(window):
            want = WINDOW_BYTES if small else _HEADER_READ
            window = file.read(position, min(want, size - position))
            window_base = position
            offset_in = 0
            if counter is not None:
                counter.bytes_read += len(window)
        _, length = FRAMING.unpack_from(window, offset_in)
        if length < MIN_RECORD_OVERHEAD:
            if length == 0 and file.is_zero(position, size):
                return  # preallocated or crashed active segment: padding, not corruption
            raise CorruptRecordError(f"Found record size {length} smaller than minimum record overhead "
                                     f"({MIN_RECORD_OVERHEAD})", position=position)
        total = LOG_OVERHEAD + length
        if position + total > size:
            return  # a partial tail (a crash while appending): recovery truncates it
        if offset_in + min(total, _HEADER_READ) > len(window):
            window = file.read(position, min(_HEADER_READ, size - position))
            window_base, offset_in = position, 0
            if counter is not None:
                counter.bytes_read += len(window)
        if window[offset_in + 16] >= 2 and total < V2_HEADER_SIZE:
            raise CorruptRecordError(f"Failed to load record batch at position {position}: its size {total} "
                                     f"is below the {V2_HEADER_SIZE}-byte v2 header", position=position)
        batch = read_batch(window, offset_in, check_crc=False, base=window_base)
        yield batch
        small = total < SMALL_BATCH_BYTES
        position += total


def partition_headers(segments: Sequence[SegmentFiles], *, from_offset: int | None = None,
                      counter: ReadCounter | None = None) -> Iterator[SegmentHeader]:
    """Every batch header of a partition's segments in offset order; with ``from_offset`` the walk
    starts at the segment that may hold it (the last whose base offset is at or below it), where its
    offset index puts ``from_offset``."""
    logs = [s for s in segments if s.log is not None]
    first = 0
    if from_offset is not None:
        for index, seg in enumerate(logs):
            if seg.base_offset <= from_offset:
                first = index
    for number, seg in enumerate(logs[first:]):
        assert seg.log is not None
        with open_any(seg.log) as file:
            start = index_position(file, seg, from_offset) if number == 0 and from_offset is not None else 0
            for batch in file_headers(file, counter=counter, start=start):
                yield SegmentHeader(seg.log, batch)
