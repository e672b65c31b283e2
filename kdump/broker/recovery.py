"""What a broker's segment recovery keeps of a ``.log``: the batches before the first invalid one.

LogSegment.recover (storage/src/main/java/org/apache/kafka/storage/internals/log/LogSegment.java,
Kafka 3.x-4.3) walks the batches from position 0, calls ``ensureValid`` on each (size and CRC), and
truncates the file at the first one that fails or at a partial tail. ``RecoveredBatches`` yields the
batches it keeps, one at a time, and says afterwards where and why it stopped. ``recover_segment``,
``deleted_segment`` and ``next_offset`` are what the load plan (kdump.broker.loader) asks of one segment,
or of one piece of a segment the broker splits (a byte range of the old file).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from kdump.broker.batch_applier import BatchApplier
from kdump.broker.leader_epoch_cache import LeaderEpochFileCache
from kdump.errors import CorruptRecordError, FormatError, KdumpError
from kdump.format.batch import INT32_MAX, Batch
from kdump.log.batches import LogBatches
from kdump.log.headers import file_headers
from kdump.log.index_builder import DEFAULT_INDEX_INTERVAL_BYTES, InvalidOffsetError, SegmentIndexBuilder
from kdump.log.indexes import open_offset_index
from kdump.log.locations import open_any
from kdump.log.logdir import SegmentFiles
from kdump.log.lookup import segment_of
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


@dataclass
class SegmentRecovery:
    """One segment the broker recovers, and what recovery keeps of it."""

    base_offset: int
    log: str
    why: str
    size: int = 0
    valid_bytes: int = 0
    kept_batches: int = 0
    next_offset: int = 0                      # the segment's next offset after recovery
    stopped: str | None = None                # why recovery stopped before the end, if it did
    lost_batches: int = 0                     # complete batches after the stop point
    lost_records: int = 0
    lost_offsets: tuple[int, int] | None = None
    lost_producers: set[int] = field(default_factory=set)
    zero_padding: bool = False                # the truncated bytes are a zero-padded tail, not data
    invalid_offset: str | None = None         # an index append threw InvalidOffsetException: why

    @property
    def truncated_bytes(self) -> int:
        return self.size - self.valid_bytes


@dataclass
class DeletedSegment:
    """A whole segment the broker deletes while loading, and what it holds."""

    segment: SegmentFiles
    why: str
    size: int = 0
    batches: int = 0
    records: int = 0
    offsets: tuple[int, int] | None = None

    @property
    def base_offset(self) -> int:
        return self.segment.base_offset

    @property
    def log(self) -> str:
        assert self.segment.log is not None
        return self.segment.log




def end_offset_on_disk(seg: SegmentFiles) -> int:
    """One past the last complete batch of the segment's bytes as they lie (before any loading), else its base
    offset: every batch header from the first, up to the first that does not frame."""
    assert seg.log is not None
    last = None
    with open_any(seg.log) as log:
        try:
            for batch in file_headers(log, start=seg.start, end=seg.end):
                last = batch.last_offset
        except KdumpError:
            pass
    return seg.base_offset if last is None else last + 1


def next_offset(seg: SegmentFiles) -> int:
    """LogSegment.readNextOffset (Kafka 4.3.0): ``read(offsetIndex.lastOffset, log size)`` and the next offset of
    the last batch read, else the base offset. The read trusts the index as the broker does: it starts at the
    position of the index's last entry (OffsetIndex.lookup, not checked against the log), takes the first batch
    there whose last offset reaches the entry's offset (FileRecords.searchForOffsetFromPosition) and every batch
    after it. So a last entry past the file or inside a batch gives the base offset, as it does to the broker,
    and a size field below the minimum raises CorruptRecordError (CorruptRecordException: the partition does not
    load). Batch headers only. A piece of a segment the
    broker splits (written by the split with its indexes) is read whole."""
    log_path, base_offset = seg.log, seg.base_offset
    assert log_path is not None
    if seg.start != 0 or seg.end is not None:
        return end_offset_on_disk(seg)
    last = None
    with open_any(log_path) as log:
        target, position = base_offset, 0
        index = segment_of(log_path, base_offset).index
        if index is not None:
            with open_offset_index(index, base_offset) as entries:
                if entries.entries:
                    target = entries.entry(entries.entries - 1).offset          # OffsetIndex.lastOffset
                    found = entries.lookup(target)
                    position = found.position if found.slot >= 0 else 0
        if position < 0:
            return base_offset
        reached = False
        try:
            for batch in file_headers(log, start=position):
                reached = reached or batch.last_offset >= target
                if reached:
                    last = batch.last_offset
        except KdumpError as err:
            raise CorruptRecordError(f"reading the last segment from its offset index's last entry (position "
                                      f"{position}): {err.reason}", path=log_path, position=err.position) from None
    return base_offset if last is None else last + 1


class SegmentOverflow(Exception):
    """LogSegmentOffsetOverflowException: a valid batch of this segment is outside its index's range."""

    def __init__(self, segment: SegmentFiles, reason: str) -> None:
        super().__init__(reason)
        self.segment, self.reason = segment, reason


def recover_segment(seg: SegmentFiles, why: str, epochs: LeaderEpochFileCache,
                    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES) -> SegmentRecovery:
    """LogSegment.recover: keep batches until one fails ensureValid; count what the rest holds.

    When an index append throws InvalidOffsetException (kdump.log.index_builder) the segment is
    truncated to its base offset instead (LogLoader.recoverLog catches it, LogSegment.truncateTo) and
    ``invalid_offset`` says why.
    """
    base, log = seg.base_offset, seg.log
    assert log is not None
    result = SegmentRecovery(base, log, why)
    applier = BatchApplier(epochs)   # the producer state is replayed once the segments are known (unified_log)
    with open_any(log) as f:
        recovered = RecoveredBatches(f, seg.start, seg.end)
        result.size = recovered.end - recovered.start
        appends = SegmentIndexBuilder(base, index_interval_bytes, None, keep_entries=False)
        last = None
        try:
            for batch in recovered:
                if not fits_segment(base, batch.last_offset):
                    raise SegmentOverflow(seg, f"the batch at position {batch.position - recovered.start} "
                                          f"holds offsets {batch.base_offset}..{batch.last_offset}, outside what an "
                                          f"index based at {base} can hold")
                appends.add_batch(batch.last_offset, batch.position - recovered.start, batch.size,
                                  batch.max_timestamp)
                applier.apply(batch)
                last = batch.last_offset
            appends.close()     # LogSegment.recover's last timeIndex.maybeAppend
        except InvalidOffsetError as err:
            result.invalid_offset = str(err)
        if result.invalid_offset is not None:
            # LogSegment.truncateTo(base): the first batch at or after the index's entry for the base
            # offset (position 0 without one) whose last offset reaches the base offset.
            start = recovered.start + (appends.base_entry_position or 0)
            cut = next((b.position for b in file_headers(f, start=start, end=recovered.end)
                        if b.last_offset >= base), None)
            result.valid_bytes = result.size if cut is None else cut - recovered.start
            kept = _count(f, recovered.start, recovered.start + result.valid_bytes)
            result.kept_batches = kept[0]
            result.next_offset = base if kept[2] is None else kept[2][1] + 1
            result.stopped = result.invalid_offset + "; the broker truncates the segment to its base offset"
        else:
            result.valid_bytes = recovered.valid_bytes
            result.kept_batches = recovered.count
            result.next_offset = base if last is None else last + 1
            result.stopped = recovered.stopped
        if result.truncated_bytes:
            result.zero_padding = result.invalid_offset is None and recovered.zero_padding_from is not None
            # What the truncated bytes hold: the complete batches that frame after the stop point.
            result.lost_batches, result.lost_records, result.lost_offsets, result.lost_producers = _count(
                f, recovered.start + result.valid_bytes, recovered.start + result.size)
    return result


@dataclass
class UncheckedSegment:
    """A segment the broker keeps without recovering it, and what recovering it would have found."""

    base_offset: int
    log: str
    why: str                                   # why the broker does not recover it
    rebuilt_by_unclean_restart: bool           # at or above the recovery point: an unclean restart would
    damage: str | None = None                  # where and why LogSegment.recover would stop, if it would
    index_entries: int | None = None           # the entries its .index holds (None: no .index)
    rebuilt_entries: int = 0                   # the entries LogSegment.recover would write

    @property
    def missing_index_entries(self) -> bool:
        return self.index_entries is not None and self.index_entries < self.rebuilt_entries


def inspect_unrecovered(segment: UncheckedSegment,
                        index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES) -> UncheckedSegment:
    """Walk a segment the broker will not recover as LogSegment.recover would (CRCs, index appends) and
    fill in ``damage`` and ``rebuilt_entries``; a zero-padded tail is not damage."""
    with open_any(segment.log) as f:
        recovered = RecoveredBatches(f)   # a whole segment: split pieces are written by the split, not kept
        appends = SegmentIndexBuilder(segment.base_offset, index_interval_bytes, None, keep_entries=False)
        try:
            for batch in recovered:
                appends.add_batch(batch.last_offset, batch.position - recovered.start, batch.size,
                                  batch.max_timestamp)
        except InvalidOffsetError as err:
            segment.damage = str(err)
            return segment
        if recovered.stopped is not None and recovered.zero_padding_from is None:
            segment.damage = f"{recovered.stopped}: recovery would truncate it at position {recovered.valid_bytes}"
        segment.rebuilt_entries = appends.offset_count
    return segment


def _count(log: ReadOnlyFile, start: int, end: int | None) -> tuple[int, int, tuple[int, int] | None, set[int]]:
    """The complete batches that frame in [start, end): how many, their records, offsets and producers
    (batch headers only)."""
    batches = records = 0
    offsets: tuple[int, int] | None = None
    producers: set[int] = set()
    try:
        for batch in file_headers(log, start=start, end=end):
            batches += 1
            records += max(batch.records_count if batch.records_count is not None else 1, 0)
            offsets = (batch.base_offset if offsets is None else offsets[0], batch.last_offset)
            if batch.producer_id >= 0:
                producers.add(batch.producer_id)
    except KdumpError:
        pass
    return batches, records, offsets, producers


def deleted_segment(seg: SegmentFiles, why: str) -> DeletedSegment:
    """A segment to be deleted, with the batches and records that go with it."""
    assert seg.log is not None
    segment = DeletedSegment(seg, why)
    with open_any(seg.log) as f:
        segment.size = (f.size if seg.end is None else seg.end) - seg.start
        segment.batches, segment.records, segment.offsets, _ = _count(f, seg.start, seg.end)
    return segment
