"""What Kafka's ``--verify-index-only`` compares index entries with (the index dumps' mismatches).

DumpLogSegments reads the log at each entry's offset (``log.read(offset)``): the first batch whose
last offset is at or above it. The entries of a healthy time index come in offset order, so one
forward walk of the log answers all of them, holding one batch; an entry whose offset goes back
(a corrupt index) starts the walk again from the beginning of the log, so memory stays flat.
"""

from __future__ import annotations

from collections.abc import Iterator

from kdump.errors import KdumpError
from kdump.format.batch import Batch
from kdump.log.batches import LogBatches, batch_at, iter_records_at
from kdump.log.indexes import OffsetIndex
from kdump.log.segment import ReadOnlyFile


def offset_at_position(log: ReadOnlyFile, position: int, max_message_size: int,
                       first_record: bool) -> tuple[int | None, str | None]:
    """What Kafka compares an offset-index entry with: the lastOffset of the first batch in the
    ``max_message_size`` window at ``position`` (Kafka 2.2: its first record's offset).

    Returns (offset, note): offset None where Kafka's tool would crash, and a note saying why; a
    batch larger than the window is compared in full, with a note.
    """
    if position < 0 or position > log.size:
        return None, f"position is past the end of the log ({log.size} bytes); Kafka's tool crashes here, kdump goes on"
    window_end = min(log.size, position + max_message_size)
    note = None
    try:
        batch = batch_at(log, position, window_end)
        if batch is None:
            batch = batch_at(log, position)
            if batch is None:
                return None, (f"no complete batch at this position (the log has {log.size} bytes); Kafka's tool "
                              f"crashes here, kdump goes on")
            note = (f"the batch here is {batch.size} bytes, larger than --max-message-size {max_message_size} "
                    f"(Kafka's tool crashes here); compared in full")
        return (_first_record_offset(log, batch) if first_record else batch.last_offset), note
    except KdumpError as err:
        return None, f"cannot read a batch here: {err.reason}; Kafka's tool crashes here, kdump goes on"


def _first_record_offset(log: ReadOnlyFile, batch: Batch) -> int | None:
    candidates = LogBatches(log, batch.position, check_crc=False)
    for candidate in candidates:
        records = candidates.records(candidate)
        if records:
            return records[0].offset
    return None


def max_record_timestamp(log: ReadOnlyFile, batch: Batch) -> int:
    """The dump tool recomputes a batch's max timestamp from its records (-1 when it has none)."""
    return max((r.timestamp for group in iter_records_at(log, batch) for r in group), default=-1)


def kafka_lookup_position(index: OffsetIndex | None, target: int) -> int:
    """OffsetIndex.lookup(target).position as Kafka computes it: a read-only index counts every slot
    (zero padding included), and its binary search returns the first exact match it meets."""
    if index is None or index.slots == 0:
        return 0

    def relative(slot: int) -> int:
        return index.entry(slot).offset - index.base_offset

    key = target - index.base_offset
    first_hot = max(0, index.slots - 1 - 8192 // OffsetIndex.entry_size)
    if relative(first_hot) < key:
        lo, hi = first_hot, index.slots - 1
    elif relative(0) > key:
        return 0
    else:
        lo, hi = 0, first_hot
    while lo < hi:
        mid = (lo + hi + 1) // 2
        found = relative(mid)
        if found > key:
            hi = mid - 1
        elif found < key:
            lo = mid
        else:
            return index.entry(mid).position
    return index.entry(lo).position


class TimeEntryLookup:
    """What Kafka's --verify-index-only finds for a time-index entry's offset: the first batch, from
    where the offset index points, that ends at or after it (``batch``; ``found``: its lastOffset, -1
    for none). The time-index dump and ``verify --strict`` both ask this; ``error`` is where the log's
    framing broke, once met."""

    def __init__(self, log: ReadOnlyFile, offsets: OffsetIndex | None) -> None:
        self.log = log
        self.offsets = offsets
        self.error: KdumpError | None = None
        self._restart()

    def _restart(self) -> None:
        self._batches: Iterator[Batch] = iter(LogBatches(self.log, check_crc=False))
        self._current: Batch | None = None
        self._ended = False
        self._asked = (-1, -1)

    def batch(self, offset: int) -> Batch | None:
        """The log is walked once while the questions go forward, from the top again when one goes back."""
        start = kafka_lookup_position(self.offsets, offset)
        if offset < self._asked[0] or start < self._asked[1]:
            self._restart()
        self._asked = (offset, start)
        while not self._ended and (self._current is None or self._current.last_offset < offset
                                   or self._current.position < start):
            try:
                self._current = next(self._batches)
            except StopIteration:
                self._ended = True
            except KdumpError as err:
                self.error = err
                self._ended = True
        if self._current is None or self._current.last_offset < offset or self._current.position < start:
            return None
        return self._current

    def found(self, offset: int) -> int:
        batch = self.batch(offset)
        return -1 if batch is None else batch.last_offset
