"""What a broker's segment recovery keeps of a ``.log``: the batches before the first invalid one.

LogSegment.recover (storage/src/main/java/org/apache/kafka/storage/internals/log/LogSegment.java,
Kafka 3.x-4.3) walks the batches from position 0, calls ``ensureValid`` on each (size and CRC), and
truncates the file at the first one that fails or at a partial tail. ``RecoveredBatches`` yields the
batches it keeps, one at a time, and says afterwards where and why it stopped.
"""

from __future__ import annotations

from collections.abc import Iterator

from kdump.errors import FormatError, KdumpError
from kdump.format.batch import Batch
from kdump.log.batches import LogBatches
from kdump.log.segment import ReadOnlyFile


class RecoveredBatches:
    """Iterate the batches recovery keeps; then ``stopped`` says why it ended early (None: it did not)."""

    def __init__(self, log: ReadOnlyFile, start: int = 0, end: int | None = None) -> None:
        self.log = log
        self.start, self.end = start, log.size if end is None else end   # a piece of a split segment
        self.stopped: str | None = None
        self.valid_bytes = 0                          # counted from ``start``
        self.count = 0
        self.zero_padding_from: int | None = None   # where a zero-padded (preallocated) tail starts

    def __iter__(self) -> Iterator[Batch]:
        batches = LogBatches(self.log, self.start, self.end, check_crc=True)
        try:
            for batch in batches:
                if not batch.is_valid:
                    self.stopped = f"the batch at position {batch.position} fails its CRC check"
                    return
                self.valid_bytes = batch.end - self.start
                self.count += 1
                yield batch
        except KdumpError as err:
            self.stopped = f"position {err.position}: {err.reason}"
            return
        size = self.end - self.start
        if batches.zero_padding_from is not None:
            self.zero_padding_from = batches.zero_padding_from
            self.stopped = (f"{size - self.valid_bytes} bytes of zero padding from position "
                            f"{self.valid_bytes} (a preallocated or crashed active segment)")
        elif self.valid_bytes < size:
            self.stopped = (f"{size - self.valid_bytes} bytes after position {self.valid_bytes} are not a "
                            f"complete batch")


INT32_MAX = 2**31 - 1


def fits_segment(base_offset: int, offset: int) -> bool:
    """OffsetIndex.canAppendOffset: ``offset`` relative to ``base_offset`` fits an index entry's 4 bytes."""
    return 0 <= offset - base_offset <= INT32_MAX


def offset_range_problem(batch: Batch, base_offset: int) -> str | None:
    """Why ``batch`` cannot belong to the segment named ``base_offset``, or None when it can.

    Index entries hold offsets relative to the base offset in 4 bytes (OffsetIndex.relativeOffset),
    so a segment's offsets must lie in [base, base + Integer.MAX_VALUE]. Older brokers could write
    past that (KAFKA-6264); a broker that meets such a segment at start-up splits it
    (LogLoader.splitOverflowedSegment). A batch below the base offset is in the wrong file.
    """
    if batch.base_offset < base_offset:
        return (f"the batch at position {batch.position} starts at offset {batch.base_offset}, below the "
                f"segment's base offset {base_offset} in its file name")
    if batch.last_offset - base_offset > INT32_MAX:
        return (f"the batch at position {batch.position} holds offset {batch.last_offset}, more than "
                f"Integer.MAX_VALUE above the segment's base offset {base_offset}: no index can hold it "
                f"(the offset-overflow shape of KAFKA-6264; a broker splits such a segment at start-up)")
    return None


def check_fits_segment(batch: Batch, base_offset: int) -> None:
    """Raise FormatError (with the batch's position) when ``offset_range_problem`` finds one."""
    problem = offset_range_problem(batch, base_offset)
    if problem is not None:
        raise FormatError(problem, position=batch.position)
