"""Where a broker splits a segment whose offsets overflow its index (KAFKA-6264), read-only.

LogSegment.recover (storage/src/main/java/org/apache/kafka/storage/internals/log/LogSegment.java,
Kafka 4.3.0; core/src/main/scala/kafka/log/LogSegment.scala before 3.6) throws
LogSegmentOffsetOverflowException for a valid batch whose last offset is not in
[base, base + Integer.MAX_VALUE]. LogLoader.retryOnOffsetOverflow then calls
LocalLog.splitOverflowedSegment, which requires ``hasOverflow`` (the segment's last offset is out of
range), copies the file's batches from position 0 into new segments, each starting at the base
offset of its first batch and taking batches while their last offset fits (appendFromFile), swaps
them in for the old segment and loads the partition again. The split reads whole batches up to the
end of the file: a cut, garbage or zero-padded tail makes it fail (the broker does not start).
"""

from __future__ import annotations

from dataclasses import dataclass

from kdump.broker.recovery import fits_segment
from kdump.errors import KdumpError
from kdump.log.batches import LogBatches
from kdump.log.segment import ReadOnlyFile


@dataclass(frozen=True)
class SplitPiece:
    """One new segment of a split: the bytes [start, end) of the old segment's file."""

    base_offset: int
    start: int
    end: int


class SplitFailure(Exception):
    """The broker's split of this segment fails (it stops); ``position`` is where, in the old file."""

    def __init__(self, reason: str, position: int | None = None) -> None:
        super().__init__(reason)
        self.reason, self.position = reason, position


def split_pieces(log_path: str, base_offset: int, start: int = 0, end: int | None = None) -> list[SplitPiece]:
    """The segments LocalLog.splitOverflowedSegment makes of the bytes [start, end) of ``log_path``."""
    pieces: list[SplitPiece] = []
    last_offset = None
    with ReadOnlyFile(log_path) as log:
        stop = log.size if end is None else end
        batches = LogBatches(log, start, stop, check_crc=False)
        try:
            for batch in batches:
                piece = pieces[-1] if pieces else None
                if piece is not None and fits_segment(piece.base_offset, batch.last_offset):
                    pieces[-1] = SplitPiece(piece.base_offset, piece.start, batch.end)
                else:
                    pieces.append(SplitPiece(batch.base_offset, batch.position, batch.end))
                last_offset = batch.last_offset
        except KdumpError as err:
            raise SplitFailure(f"splitting the overflowed segment fails: {err.reason}", err.position) from None
        if batches.zero_padding_from is not None or (pieces and pieces[-1].end < stop):
            at = pieces[-1].end if pieces else start
            raise SplitFailure(f"splitting the overflowed segment fails: the {stop - at} bytes after the last "
                               f"complete batch are not a batch", at)
    if last_offset is None or last_offset < base_offset or fits_segment(base_offset, last_offset):
        # LocalLog.splitOverflowedSegment: require(segment.hasOverflow()) fails
        raise SplitFailure(f"a batch overflows the segment's offsets but its last offset {last_offset} does not, so "
                           f"the split is refused (\"Split operation is only permitted for segments with overflow\")")
    return pieces
