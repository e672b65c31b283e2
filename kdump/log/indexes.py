"""Offset and time indexes as read-only views over their bytes (spec §3.7, §3.8, §5.1, §5.2).

An index file may be preallocated: Kafka sizes it to ``segment.index.bytes`` when the segment
becomes active and trims it only on roll or clean close, so a live or crashed segment's index ends
in zero slots. Two counts therefore matter:

* ``slots``   - file length // entry size: what Kafka's dump tool (and the sanity check) iterates;
* ``entries`` - the unpadded prefix: slots before the first padding slot. A slot is padding when
  its relative offset is 0 and it is either not the first slot (the dump tool's rule) or, for the
  first slot, entirely zero (no broker ever indexes the first batch at position 0).

Lookups binary-search ``entries`` only; on a padded index Kafka's own search over all slots
degenerates to (base offset, 0), which yields the same answer after the forward scan, only slower.
"""

from __future__ import annotations

from dataclasses import dataclass

from kdump.format.index import (
    OFFSET_ENTRY,
    OFFSET_ENTRY_SIZE,
    TIME_ENTRY,
    TIME_ENTRY_SIZE,
    Buffer,
    OffsetIndexEntry,
    TimeIndexEntry,
)
from kdump.log.segment import MappedFile

_ZERO_CHUNK = bytes(1 << 20)


def is_zero(buf: Buffer, start: int, end: int) -> bool:
    """True when ``buf[start:end]`` is all zero bytes (compared a MiB at a time)."""
    view = memoryview(buf)
    pos = start
    while pos < end:
        stop = min(end, pos + len(_ZERO_CHUNK))
        if view[pos:stop] != _ZERO_CHUNK[:stop - pos]:
            return False
        pos = stop
    return True


def _unpadded_offset_entries(buf: Buffer, slots: int) -> int:
    # iter_unpack walks the entries in C; the loop stops at the first padding slot.
    view = memoryview(buf)[:slots * OFFSET_ENTRY_SIZE]
    for slot, (relative, position) in enumerate(OFFSET_ENTRY.iter_unpack(view)):
        if relative == 0 and (slot > 0 or position == 0):
            return slot
    return slots


def _unpadded_time_entries(buf: Buffer, slots: int) -> int:
    view = memoryview(buf)[:slots * TIME_ENTRY_SIZE]
    for slot, (timestamp, relative) in enumerate(TIME_ENTRY.iter_unpack(view)):
        if relative == 0 and (slot > 0 or timestamp == 0):
            return slot
    return slots


class OffsetIndex:
    """A ``.index``: entries (absolute offset, position), sparse and strictly increasing when healthy."""

    entry_size = OFFSET_ENTRY_SIZE

    def __init__(self, buf: Buffer, base_offset: int, path: str | None = None) -> None:
        self.buf = buf
        self.base_offset = base_offset
        self.path = path
        self.size = len(buf)
        self.slots = self.size // OFFSET_ENTRY_SIZE
        self.entries = _unpadded_offset_entries(buf, self.slots)

    @property
    def padding_slots(self) -> int:
        return self.slots - self.entries

    def entry(self, slot: int) -> OffsetIndexEntry:
        relative, position = OFFSET_ENTRY.unpack_from(self.buf, slot * OFFSET_ENTRY_SIZE)
        return OffsetIndexEntry(slot, self.base_offset + relative, position)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return (self.entry(slot) for slot in range(self.entries))

    def slot_for(self, target: int) -> int:
        """Slot of the largest entry with offset <= target, or -1 (binary search, as Kafka's lookup)."""
        lo, hi = 0, self.entries - 1
        unpack = OFFSET_ENTRY.unpack_from
        relative_target = target - self.base_offset
        found = -1
        while lo <= hi:
            mid = (lo + hi) // 2
            relative, _ = unpack(self.buf, mid * OFFSET_ENTRY_SIZE)
            if relative <= relative_target:
                found = mid
                lo = mid + 1
            else:
                hi = mid - 1
        return found

    def lookup(self, target: int) -> OffsetIndexEntry:
        """Kafka's OffsetIndex.lookup: the largest entry <= target, else (base offset, position 0)."""
        slot = self.slot_for(target)
        return self.entry(slot) if slot >= 0 else OffsetIndexEntry(-1, self.base_offset, 0)


class TimeIndex:
    """A ``.timeindex``: entries (timestamp, absolute offset), timestamps strictly increasing when healthy."""

    entry_size = TIME_ENTRY_SIZE

    def __init__(self, buf: Buffer, base_offset: int, path: str | None = None) -> None:
        self.buf = buf
        self.base_offset = base_offset
        self.path = path
        self.size = len(buf)
        self.slots = self.size // TIME_ENTRY_SIZE
        self.entries = _unpadded_time_entries(buf, self.slots)

    @property
    def padding_slots(self) -> int:
        return self.slots - self.entries

    def entry(self, slot: int) -> TimeIndexEntry:
        timestamp, relative = TIME_ENTRY.unpack_from(self.buf, slot * TIME_ENTRY_SIZE)
        return TimeIndexEntry(slot, timestamp, self.base_offset + relative)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return (self.entry(slot) for slot in range(self.entries))

    def last_entry(self) -> TimeIndexEntry | None:
        return self.entry(self.entries - 1) if self.entries else None

    def slot_for(self, target_timestamp: int) -> int:
        """Slot of the entry with the largest timestamp <= target, or -1."""
        lo, hi = 0, self.entries - 1
        unpack = TIME_ENTRY.unpack_from
        found = -1
        while lo <= hi:
            mid = (lo + hi) // 2
            timestamp, _ = unpack(self.buf, mid * TIME_ENTRY_SIZE)
            if timestamp <= target_timestamp:
                found = mid
                lo = mid + 1
            else:
                hi = mid - 1
        return found

    def lookup(self, target_timestamp: int) -> TimeIndexEntry:
        """Kafka's TimeIndex.lookup: the largest entry <= target, else (-1, base offset)."""
        slot = self.slot_for(target_timestamp)
        return self.entry(slot) if slot >= 0 else TimeIndexEntry(-1, -1, self.base_offset)


@dataclass
class OpenIndex:
    """An index file mapped read-only together with its parsed view; close it when done."""

    mapped: MappedFile
    index: OffsetIndex | TimeIndex

    def close(self) -> None:
        self.index.buf = b""
        self.mapped.close()

    def __enter__(self) -> "OpenIndex":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_offset_index(path: str, base_offset: int) -> OpenIndex:
    mapped = MappedFile(path)
    return OpenIndex(mapped, OffsetIndex(mapped.buf, base_offset, path))


def open_time_index(path: str, base_offset: int) -> OpenIndex:
    mapped = MappedFile(path)
    return OpenIndex(mapped, TimeIndex(mapped.buf, base_offset, path))
