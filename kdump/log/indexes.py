"""Offset and time indexes read from their files a bounded number of entries at a time.

An index file may be preallocated: Kafka sizes it to ``segment.index.bytes`` when the segment
becomes active and trims it only on roll or clean close, so a live or crashed segment's index ends
in zero slots. Two counts therefore matter:

* ``slots``   - file length // entry size: what Kafka's dump tool (and the sanity check) iterates;
* ``entries`` - the unpadded prefix: slots before the first padding slot. A slot is padding when
  its relative offset is 0 and it is either not the first slot (the dump tool's rule) or, for the
  first slot, entirely zero (no broker ever indexes the first batch at position 0).

Lookups binary-search ``entries`` only; on a padded index Kafka's own search over all slots
degenerates to (base offset, 0), which yields the same answer after the forward scan, only slower.
Nothing here holds the file: a 1 GiB preallocated index costs one window of memory, and a binary
search reads one entry per probe.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Protocol, Self

from kdump.format.index import (
    OFFSET_ENTRY,
    OFFSET_ENTRY_SIZE,
    TIME_ENTRY,
    TIME_ENTRY_SIZE,
    OffsetIndexEntry,
    TimeIndexEntry,
)
from kdump.log.locations import open_any

_ENTRIES_PER_READ = 1 << 16


class RandomAccess(Protocol):
    """What an index needs of its file: ReadOnlyFile, or arrow_files.ArrowFile for a remote one."""

    size: int

    def read(self, position: int, length: int) -> bytes: ...

    def is_zero(self, start: int, end: int) -> bool: ...

    def close(self) -> None: ...


class _Index:
    """What the offset and time index share: slots, the unpadded prefix, chunked entry reads."""

    entry_struct: struct.Struct
    entry_size: int

    def __init__(self, file: RandomAccess, base_offset: int, path: str | None = None) -> None:
        self.file = file
        self.base_offset = base_offset
        self.path = path
        self.size = self.file.size
        self.slots = self.size // self.entry_size
        try:
            self.entries = self._unpadded_entries()
        except BaseException:
            self.file.close()
            raise

    @property
    def padding_slots(self) -> int:
        return self.slots - self.entries

    def raw_entries(self, first: int = 0, stop: int | None = None) -> Iterator[tuple[int, int, int]]:
        """(slot, field, field) for slots ``first..stop`` (default: the entries), a window at a time."""
        stop = self.entries if stop is None else stop
        unpack = self.entry_struct.iter_unpack
        for chunk_start in range(first, stop, _ENTRIES_PER_READ):
            chunk_stop = min(stop, chunk_start + _ENTRIES_PER_READ)
            data = self.file.read(chunk_start * self.entry_size, (chunk_stop - chunk_start) * self.entry_size)
            for slot, (a, b) in enumerate(unpack(data), chunk_start):
                yield slot, a, b

    def _is_padding(self, slot: int, a: int, b: int) -> bool:
        raise NotImplementedError

    def _unpadded_entries(self) -> int:
        for slot, a, b in self.raw_entries(0, self.slots):
            if self._is_padding(slot, a, b):
                return slot
        return self.slots

    def _unpack(self, slot: int) -> tuple[int, int]:
        data = self.file.read(slot * self.entry_size, self.entry_size)
        a, b = self.entry_struct.unpack(data)
        return a, b

    def _slot_for(self, key: int) -> int:
        """Slot of the last entry whose first field (relative offset, timestamp) is <= ``key``, or -1
        (a binary search over the entries, as Kafka's lookups)."""
        lo, hi = 0, self.entries - 1
        found = -1
        while lo <= hi:
            mid = (lo + hi) // 2
            if self._unpack(mid)[0] <= key:
                found = mid
                lo = mid + 1
            else:
                hi = mid - 1
        return found

    def padding_is_zero(self) -> bool:
        """Whether the slots after the counted entries are zero padding.

        Also true when the first of them has become an entry since the entries were counted: a live
        broker appends into the preallocated slots, so bytes there are new entries, not corruption.
        """
        if self.entries == self.slots:
            return True
        start, end = self.entries * self.entry_size, self.slots * self.entry_size
        if self.file.is_zero(start, end):
            return True
        # An append writes one field after the other: a first slot with bytes and nothing after it is
        # an entry being written (or one a crash cut short), which lookups never reach.
        if self.file.is_zero(start + self.entry_size, end):
            return True
        # Entries are appended in slot order, so once later bytes are non-zero the first counted padding
        # slot, read again now, holds an entry if and only if the broker appended since the count.
        return not self._is_padding(self.entries, *self._unpack(self.entries))

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class OffsetIndex(_Index):
    """A ``.index``: entries (absolute offset, position), sparse and strictly increasing when healthy."""

    entry_struct = OFFSET_ENTRY
    entry_size = OFFSET_ENTRY_SIZE

    def _is_padding(self, slot: int, relative: int, position: int) -> bool:
        return relative == 0 and (slot > 0 or position == 0)

    def _unpadded_entries(self) -> int:
        entries = super()._unpadded_entries()
        # OffsetIndex.append writes the relative offset, then the position: a reader can see the first
        # without the second. (offset, 0) after the first slot, with nothing after it, is that torn
        # entry (a broker appending now, or a crash between the two writes); lookups would start at
        # position 0 for it, which is safe, so it is not counted as an entry.
        if entries > 1:
            relative, position = self._unpack(entries - 1)
            if position == 0 and relative != 0 and (entries == self.slots or
                                                    self._is_padding(entries, *self._unpack(entries))):
                return entries - 1
        return entries

    def entry(self, slot: int) -> OffsetIndexEntry:
        relative, position = self._unpack(slot)
        return OffsetIndexEntry(slot, self.base_offset + relative, position)

    def __iter__(self) -> Iterator[OffsetIndexEntry]:
        base = self.base_offset
        return (OffsetIndexEntry(slot, base + relative, position) for slot, relative, position in self.raw_entries())

    def lookup(self, target: int) -> OffsetIndexEntry:
        """Kafka's OffsetIndex.lookup: the largest entry <= target, else (base offset, position 0)."""
        slot = self._slot_for(target - self.base_offset)
        return self.entry(slot) if slot >= 0 else OffsetIndexEntry(-1, self.base_offset, 0)


class TimeIndex(_Index):
    """A ``.timeindex``: entries (timestamp, absolute offset), timestamps strictly increasing when healthy."""

    entry_struct = TIME_ENTRY
    entry_size = TIME_ENTRY_SIZE

    def _is_padding(self, slot: int, timestamp: int, relative: int) -> bool:
        return relative == 0 and (slot > 0 or timestamp == 0)

    def entry(self, slot: int) -> TimeIndexEntry:
        timestamp, relative = self._unpack(slot)
        return TimeIndexEntry(slot, timestamp, self.base_offset + relative)

    def __iter__(self) -> Iterator[TimeIndexEntry]:
        base = self.base_offset
        return (TimeIndexEntry(slot, timestamp, base + relative) for slot, timestamp, relative in self.raw_entries())

    def last_entry(self) -> TimeIndexEntry | None:
        return self.entry(self.entries - 1) if self.entries else None

    def lookup(self, target_timestamp: int) -> TimeIndexEntry:
        """Kafka's TimeIndex.lookup: the largest entry <= target, else (-1, base offset)."""
        slot = self._slot_for(target_timestamp)
        return self.entry(slot) if slot >= 0 else TimeIndexEntry(-1, -1, self.base_offset)


def open_offset_index(path: str, base_offset: int) -> OffsetIndex:
    """The ``.index`` at ``path`` (a local path or a URI), read-only; use as a context manager."""
    return OffsetIndex(open_any(path), base_offset, path)


def open_time_index(path: str, base_offset: int) -> TimeIndex:
    return TimeIndex(open_any(path), base_offset, path)
