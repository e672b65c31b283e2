"""OffsetIndex / TimeIndex over files: slot counts, padding, binary search against brute force."""

from __future__ import annotations

import os
import tempfile

from hypothesis import given
from hypothesis import strategies as st

from kdump.format.index import encode_offset_entry, encode_time_entry
from kdump.log.indexes import OffsetIndex, TimeIndex
from kdump.log.segment import ReadOnlyFile

BASE = 1000


def opened(data: bytes) -> ReadOnlyFile:
    """``data`` as a file: written to a temporary file that is unlinked once open."""
    fd, path = tempfile.mkstemp(prefix="kdump-index-test-")
    try:
        os.write(fd, data)
        return ReadOnlyFile(path)
    finally:
        os.close(fd)
        os.unlink(path)


def offset_index(entries: list[tuple[int, int]], pad_slots: int = 0) -> OffsetIndex:
    data = b"".join(encode_offset_entry(BASE, o, p) for o, p in entries) + bytes(8 * pad_slots)
    return OffsetIndex(opened(data), BASE)


def test_counts_trimmed_and_padded() -> None:
    with offset_index([(1010, 500), (1020, 1100)], pad_slots=5) as index:
        assert (index.slots, index.entries, index.padding_slots) == (7, 2, 5)
        assert [(e.offset, e.position) for e in index] == [(1010, 500), (1020, 1100)]


def test_all_zero_index_has_no_entries() -> None:
    with OffsetIndex(opened(bytes(80)), BASE) as index:
        assert (index.slots, index.entries) == (10, 0)
        assert index.lookup(5000).offset == BASE and index.lookup(5000).position == 0


def test_first_slot_with_relative_zero_but_a_position_is_an_entry() -> None:
    with offset_index([(BASE, 64)]) as index:
        assert index.entries == 1


def test_partial_trailing_bytes_are_not_a_slot() -> None:
    with OffsetIndex(opened(encode_offset_entry(BASE, 1001, 8) + b"\x01\x02\x03"), BASE) as index:
        assert index.slots == 1


def test_time_index_padding_and_lookup() -> None:
    data = encode_time_entry(BASE, 100, BASE) + encode_time_entry(BASE, 200, 1005) + bytes(24)
    with TimeIndex(opened(data), BASE) as index:
        assert (index.slots, index.entries) == (4, 2)
        assert index.lookup(150).offset == BASE
        assert index.lookup(200).offset == 1005
        assert index.lookup(99).slot == -1 and index.lookup(99).offset == BASE and index.lookup(99).timestamp == -1
        assert index.last_entry().timestamp == 200  # type: ignore[union-attr]


def test_is_zero_crosses_chunks() -> None:
    data = bytearray(3 << 20)
    with opened(bytes(data)) as f:
        assert f.is_zero(0, len(data))
    data[(2 << 20) + 7] = 1
    with opened(bytes(data)) as f:
        assert not f.is_zero(0, len(data))
        assert f.is_zero(0, 2 << 20)


@given(st.lists(st.integers(1, 50), min_size=0, max_size=60), st.integers(BASE - 5, BASE + 3000),
       st.integers(0, 10))
def test_offset_lookup_is_largest_entry_at_or_below(gaps: list[int], target: int, pad: int) -> None:
    offsets, o = [], BASE
    for g in gaps:
        o += g
        offsets.append(o)
    with offset_index([(x, 10 * i + 1) for i, x in enumerate(offsets)], pad_slots=pad) as index:
        entry = index.lookup(target)
    below = [x for x in offsets if x <= target]
    if below:
        assert entry.offset == max(below) and entry.slot == offsets.index(max(below))
    else:
        assert (entry.slot, entry.offset, entry.position) == (-1, BASE, 0)


@given(st.lists(st.integers(1, 50), min_size=0, max_size=60), st.integers(-10, 3000))
def test_time_lookup_is_largest_timestamp_at_or_below(gaps: list[int], target: int) -> None:
    stamps, t = [], 0
    for g in gaps:
        t += g
        stamps.append(t)
    data = b"".join(encode_time_entry(BASE, ts, BASE + 1 + i) for i, ts in enumerate(stamps))
    with TimeIndex(opened(data), BASE) as index:
        entry = index.lookup(target)
    below = [x for x in stamps if x <= target]
    assert entry.timestamp == (max(below) if below else -1)
