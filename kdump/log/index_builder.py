"""The broker's sparse-index rules for one segment, with no files attached (LogSegment.append).

Used by the segment writer (``kdump.log.writer``) while it appends, and by ``kdump rebuild-index``,
which feeds it the batches of an existing ``.log`` (``kdump.format.batch.scan_batches``). The class
only keeps entries in memory; callers serialise them with ``offset_index_bytes`` /
``time_index_bytes`` and decide where the bytes go.

Rules (Kafka's storage/src/main/java/org/apache/kafka/storage/internals/log/LogSegment.java, append, at 4.3.0):
- the offset-index test is ``bytes_since_last_entry > index_interval_bytes`` (strict), checked
  *before* the batch's own bytes are counted, so the first batch of a segment is never indexed;
- an offset entry is (batch last offset, batch start position); the counter then resets to 0;
- the segment's max timestamp is tracked per batch; ties keep the earliest batch's last offset;
- a time-index entry (max timestamp so far, its offset) is attempted with every offset entry and
  written only when its timestamp is strictly greater than the previous entry's (initially -1, so
  data without timestamps never gets one);
- on roll/close one more time-index entry is attempted, ignoring the "full" check;
- an offset entry not above the previous one (OffsetIndex.append), or a time entry whose offset is below
  the previous one's (TimeIndex.maybeAppend), throws InvalidOffsetException: ``InvalidOffsetError`` here.
  Only out-of-order batches do that; LogLoader.recoverLog then truncates the segment (kdump.broker.recovery).

LogSegment.recover rebuilds a segment's indexes by the same rule (``validBytes - lastIndexEntry >
indexIntervalBytes`` at every batch), so recovery, ``kdump rebuild-index``, the writer and ``verify --deep``'s
density rule all use this class; ``keep_entries=False`` counts the entries without holding them (flat memory
over a whole segment).
"""

from __future__ import annotations

from collections.abc import Iterable

from kdump.format.batch import Batch
from kdump.format.index import (
    DEFAULT_MAX_INDEX_BYTES,
    OFFSET_ENTRY_SIZE,
    TIME_ENTRY_SIZE,
    encode_offset_entry,
    encode_time_entry,
)

DEFAULT_INDEX_INTERVAL_BYTES = 4096
NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP: the time index's notional "last entry" when empty

BatchInfo = tuple[int, int, int, int]  # (last_offset, position, size, max_timestamp)


class IndexFullError(Exception):
    """An entry was added to a full index: the caller should have rolled first."""


class InvalidOffsetError(Exception):
    """Kafka's InvalidOffsetException from OffsetIndex.append or TimeIndex.maybeAppend: why, in words."""


class SegmentIndexBuilder:
    """Offset and time index entries for one segment, as a broker would write them."""

    def __init__(self, base_offset: int, index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
                 max_index_bytes: int | None = DEFAULT_MAX_INDEX_BYTES, *, keep_entries: bool = True) -> None:
        if index_interval_bytes < 0:
            raise ValueError("index_interval_bytes must be >= 0")
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        # Kafka rounds the preallocated size down to whole entries (None: no limit, as recovery is modelled).
        self.max_offset_entries = (1 << 62) if max_index_bytes is None else max_index_bytes // OFFSET_ENTRY_SIZE
        self.max_time_entries = (1 << 62) if max_index_bytes is None else max_index_bytes // TIME_ENTRY_SIZE
        self.keep_entries = keep_entries
        self.offset_entries: list[tuple[int, int]] = []     # all of them, or the last alone (keep_entries=False)
        self.time_entries: list[tuple[int, int]] = []
        self.offset_count = self.time_count = 0
        self.base_entry_position: int | None = None   # an offset entry at the base offset itself (truncateTo)
        self.bytes_since_last_entry = 0
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = base_offset
        self.size = 0            # bytes appended to the segment so far
        self.closed = False

    # -- shouldRoll's index conditions -------------------------------------------------------
    @property
    def offset_index_full(self) -> bool:
        return self.offset_count >= self.max_offset_entries

    @property
    def time_index_full(self) -> bool:
        # TimeIndex keeps its last slot for the entry written at roll.
        return self.time_count >= self.max_time_entries - 1

    @property
    def is_full(self) -> bool:
        return self.offset_index_full or self.time_index_full

    # -- appends ------------------------------------------------------------------------------
    def add_batch(self, last_offset: int, position: int, size: int, max_timestamp: int) -> None:
        """Kafka >= 4.1 (KAFKA-806): the index test is done for every batch."""
        self._track_max(max_timestamp, last_offset)
        self._maybe_index(last_offset, position)
        self.bytes_since_last_entry += size
        self.size = max(self.size, position + size)

    def add_scanned(self, batch: Batch) -> None:
        self.add_batch(batch.last_offset, batch.position, batch.size, batch.max_timestamp)

    def add_append(self, batches: Iterable[BatchInfo]) -> None:
        """Kafka <= 4.0 leader path: one test per append call, entry = (largest offset, append start)."""
        items = list(batches)
        if not items:
            return
        for last_offset, _, _, max_ts in items:
            self._track_max(max_ts, last_offset)
        self._maybe_index(max(i[0] for i in items), items[0][1])
        total = sum(i[2] for i in items)
        self.bytes_since_last_entry += total
        self.size = max(self.size, items[0][1] + total)

    def close(self) -> None:
        """onBecomeInactiveSegment / close (LogSegment.recover's last maybeAppend too): the final time-index
        entry. Safe to call twice."""
        if not self.closed:
            self._maybe_append_time(skip_full_check=True)
            self.closed = True

    # -- serialisation ----------------------------------------------------------------------
    def offset_index_bytes(self, pad_to: int | None = None) -> bytes:
        """The ``.index`` contents; ``pad_to`` (bytes) zero-pads like a preallocated live index."""
        data = b"".join(encode_offset_entry(self.base_offset, o, p) for o, p in self.offset_entries)
        return _pad(data, pad_to, OFFSET_ENTRY_SIZE)

    def time_index_bytes(self, pad_to: int | None = None) -> bytes:
        data = b"".join(encode_time_entry(self.base_offset, t, o) for t, o in self.time_entries)
        return _pad(data, pad_to, TIME_ENTRY_SIZE)

    # -- internals ----------------------------------------------------------------------------
    def _track_max(self, timestamp: int, last_offset: int) -> None:
        # Strict ">" keeps the earliest batch holding the max, as the broker does.
        if timestamp > self.max_timestamp:
            self.max_timestamp = timestamp
            self.offset_of_max_timestamp = last_offset

    def _maybe_index(self, offset: int, position: int) -> None:
        """The index test, made before the bytes being appended are counted."""
        if self.bytes_since_last_entry > self.index_interval_bytes:
            self._append_offset(offset, position)
            self._maybe_append_time(skip_full_check=False)
            self.bytes_since_last_entry = 0

    def _append_offset(self, offset: int, position: int) -> None:
        if self.offset_index_full:
            raise IndexFullError(f"offset index of segment {self.base_offset} is full "
                                 f"({self.max_offset_entries} entries)")
        if self.offset_entries and offset <= self.offset_entries[-1][0]:
            raise InvalidOffsetError(f"the offset index entry for the batch at position {position} (offset {offset}) "
                                     f"is not above the previous entry's offset {self.offset_entries[-1][0]}: "
                                     f"OffsetIndex.append throws InvalidOffsetException")
        self._keep(self.offset_entries, (offset, position))
        self.offset_count += 1
        if offset == self.base_offset:
            self.base_entry_position = position

    def _maybe_append_time(self, *, skip_full_check: bool) -> None:
        last = self.time_entries[-1] if self.time_entries else None
        if last is not None and self.offset_of_max_timestamp < last[1]:
            # TimeIndex.maybeAppend checks the offset before the timestamp.
            raise InvalidOffsetError(f"the time index entry for offset {self.offset_of_max_timestamp} is below the "
                                     f"previous entry's offset {last[1]}: TimeIndex.maybeAppend throws "
                                     f"InvalidOffsetException")
        if self.max_timestamp <= (NO_TIMESTAMP if last is None else last[0]):
            return
        if not skip_full_check and self.time_index_full:
            raise IndexFullError(f"time index of segment {self.base_offset} is full")
        self._keep(self.time_entries, (self.max_timestamp, self.offset_of_max_timestamp))
        self.time_count += 1

    def _keep(self, entries: list[tuple[int, int]], entry: tuple[int, int]) -> None:
        if not self.keep_entries and entries:
            entries[-1] = entry
        else:
            entries.append(entry)


def _pad(data: bytes, pad_to: int | None, entry_size: int) -> bytes:
    if pad_to is None:
        return data
    size = pad_to - pad_to % entry_size
    if size < len(data):
        raise ValueError(f"cannot pad {len(data)} bytes of index entries to {size}")
    return data + bytes(size - len(data))
