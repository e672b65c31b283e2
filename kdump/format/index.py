"""Offset index (``.index``) and time index (``.timeindex``) entries.

Mirrors org.apache.kafka.storage.internals.log.OffsetIndex / TimeIndex: fixed-size big-endian
entries holding offsets relative to the segment's base offset. Files may be preallocated and
zero-padded; ``count_entries`` follows Kafka (file length // entry size) and ``is_padding``
applies the dump tool's rule (relative offset 0 in a slot after the first).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from kdump.errors import IndexFormatError
from kdump.format.batch import INT32_MAX

OFFSET_ENTRY = struct.Struct(
    ">i"  # relativeOffset = offset - baseOffset
    "i"   # position of a batch in the .log
)
TIME_ENTRY = struct.Struct(
    ">q"  # timestamp: largest timestamp seen so far in the segment
    "i"   # relativeOffset of the batch holding it
)
OFFSET_ENTRY_SIZE = OFFSET_ENTRY.size   # 8
TIME_ENTRY_SIZE = TIME_ENTRY.size       # 12
DEFAULT_MAX_INDEX_BYTES = 10 * 1024 * 1024  # segment.index.bytes

Buffer = bytes | bytearray | memoryview


@dataclass(frozen=True, slots=True)
class OffsetIndexEntry:
    slot: int
    offset: int      # absolute
    position: int


@dataclass(frozen=True, slots=True)
class TimeIndexEntry:
    slot: int
    timestamp: int
    offset: int      # absolute


def count_entries(file_size: int, entry_size: int) -> int:
    return file_size // entry_size


def read_offset_entry(buf: Buffer, base_offset: int, slot: int) -> OffsetIndexEntry:
    relative, position = OFFSET_ENTRY.unpack_from(buf, slot * OFFSET_ENTRY_SIZE)
    return OffsetIndexEntry(slot, base_offset + relative, position)


def read_time_entry(buf: Buffer, base_offset: int, slot: int) -> TimeIndexEntry:
    timestamp, relative = TIME_ENTRY.unpack_from(buf, slot * TIME_ENTRY_SIZE)
    return TimeIndexEntry(slot, timestamp, base_offset + relative)


def is_padding(slot: int, offset: int, base_offset: int) -> bool:
    """DumpLogSegments' zero-entry stop: relative offset 0 in any slot but the first."""
    return slot > 0 and offset == base_offset


def encode_offset_entry(base_offset: int, offset: int, position: int) -> bytes:
    relative = offset - base_offset
    if not 0 <= relative <= INT32_MAX:
        raise ValueError(f"offset {offset} does not fit an index with base offset {base_offset}")
    return OFFSET_ENTRY.pack(relative, position)


def encode_time_entry(base_offset: int, timestamp: int, offset: int) -> bytes:
    relative = offset - base_offset
    if not 0 <= relative <= INT32_MAX:
        raise ValueError(f"offset {offset} does not fit a time index with base offset {base_offset}")
    return TIME_ENTRY.pack(timestamp, relative)


def offset_index_sanity_check(first: OffsetIndexEntry | None, last: OffsetIndexEntry | None, file_size: int,
                              base_offset: int, abs_path: str) -> None:
    """OffsetIndex.sanityCheck with Kafka's exact messages (the tool's ``--index-sanity-check``).

    ``first`` and ``last`` are the file's first and last slots (None for an empty file): all it reads.
    """
    if last is not None and last.offset < base_offset:
        raise IndexFormatError(f"Corrupt index found, index file {abs_path} has non-zero size but the last "
                               f"offset is {last.offset} which is less than the base offset {base_offset}")
    if file_size % OFFSET_ENTRY_SIZE:
        raise IndexFormatError(f"Index file {abs_path} is corrupt, found {file_size} bytes which is neither "
                               f"positive nor a multiple of {OFFSET_ENTRY_SIZE}")


def time_index_sanity_check(first: TimeIndexEntry | None, last: TimeIndexEntry | None, file_size: int,
                            base_offset: int, abs_path: str) -> None:
    """TimeIndex.sanityCheck with Kafka's exact messages."""
    if first is not None and last is not None:
        if last.timestamp < first.timestamp:
            raise IndexFormatError(f"Corrupt time index found, time index file ({abs_path}) has non-zero size "
                                   f"but the last timestamp is {last.timestamp} which is less than the first "
                                   f"timestamp {first.timestamp}")
        if last.offset < base_offset:
            raise IndexFormatError(f"Corrupt time index found, time index file ({abs_path}) has non-zero size "
                                   f"but the last offset is {last.offset} which is less than the first offset "
                                   f"{base_offset}")
    if file_size % TIME_ENTRY_SIZE:
        raise IndexFormatError(f"Time index file {abs_path} is corrupt, found {file_size} bytes which is neither "
                               f"positive nor a multiple of {TIME_ENTRY_SIZE}")
