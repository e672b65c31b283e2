"""Producer-state snapshot layout and Kafka's CorruptSnapshotException messages."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kdump.format.crc import crc32c
from kdump.format.snapshot import (
    CorruptSnapshotError,
    ProducerSnapshotEntry,
    encode_producer_snapshot,
    first_sequence,
    parse_producer_snapshot,
)

E1 = ProducerSnapshotEntry(1000, 3, 9, 41, 4, 1700000000000, 7, 30)
E2 = ProducerSnapshotEntry(1001, 0, -1, -1, 0, 1700000000500, -1, -1)


def hand_built(entries: list[tuple[int, ...]], version: int = 1, crc: int | None = None) -> bytes:
    """The layout written out field by field from the spec, independent of the encoder."""
    body = struct.pack(">i", len(entries))
    for pid, epoch, seq, off, delta, ts, cepoch, txn in entries:
        body += struct.pack(">q", pid) + struct.pack(">h", epoch) + struct.pack(">i", seq) + struct.pack(">q", off)
        body += struct.pack(">i", delta) + struct.pack(">q", ts) + struct.pack(">i", cepoch) + struct.pack(">q", txn)
    return struct.pack(">h", version) + struct.pack(">I", crc32c(body) if crc is None else crc) + body


def test_encoder_matches_the_spec_layout() -> None:
    expected = hand_built([(1000, 3, 9, 41, 4, 1700000000000, 7, 30), (1001, 0, -1, -1, 0, 1700000000500, -1, -1)])
    assert encode_producer_snapshot([E1, E2]) == expected
    assert len(expected) == 10 + 2 * 46


def test_parse_round_trip_and_empty_snapshot() -> None:
    snap = parse_producer_snapshot(encode_producer_snapshot([E1, E2]))
    assert snap.version == 1 and snap.entries == (E1, E2)
    empty = encode_producer_snapshot([])
    assert len(empty) == 10 and parse_producer_snapshot(empty).entries == ()


@given(st.lists(st.builds(ProducerSnapshotEntry, st.integers(-2**63, 2**63 - 1), st.integers(-2**15, 2**15 - 1),
                          st.integers(-2**31, 2**31 - 1), st.integers(-2**63, 2**63 - 1),
                          st.integers(-2**31, 2**31 - 1), st.integers(-2**63, 2**63 - 1),
                          st.integers(-2**31, 2**31 - 1), st.integers(-2**63, 2**63 - 1)), max_size=5))
def test_round_trip_property(entries: list[ProducerSnapshotEntry]) -> None:
    assert parse_producer_snapshot(encode_producer_snapshot(entries)).entries == tuple(entries)


def test_first_sequence_wraps_past_int_max() -> None:
    assert first_sequence(9, 4) == 5
    assert first_sequence(-1, 0) == 2147483647
    assert first_sequence(2, 5) == 2147483647 - 3 + 1


@pytest.mark.parametrize(("data", "message"), [
    (b"", "Snapshot failed schema validation: Error reading field 'version': java.nio.BufferUnderflowException"),
    (b"\x00\x01\x00", "Snapshot failed schema validation: Error reading field 'crc': java.nio.BufferUnderflowException"),
    (b"\x00\x01\x00\x00\x00\x00\x00", "Snapshot failed schema validation: Error reading field 'producer_entries': "
                                      "java.nio.BufferUnderflowException"),
    (b"\x00\x01\x00\x00\x00\x00\xff\xff\xff\xff", "Snapshot failed schema validation: Error reading field "
                                                  "'producer_entries': Array size -1 cannot be negative"),
    (b"\x00\x01\x00\x00\x00\x00\x00\x00\x00\x05abc", "Snapshot failed schema validation: Error reading field "
                                                     "'producer_entries': Error reading array of size 5, only 3 "
                                                     "bytes available"),
])
def test_schema_messages(data: bytes, message: str) -> None:
    with pytest.raises(CorruptSnapshotError) as info:
        parse_producer_snapshot(data)
    assert info.value.reason == message and info.value.kind == "schema"


def test_truncated_entry_names_the_field() -> None:
    data = encode_producer_snapshot([E1])[:10 + 8 + 2 + 4 + 3]  # stops inside last_offset
    with pytest.raises(CorruptSnapshotError) as info:
        parse_producer_snapshot(data)
    assert info.value.reason == ("Snapshot failed schema validation: Error reading field 'producer_entries': "
                                 "Error reading field 'last_offset': java.nio.BufferUnderflowException")


def test_unknown_version_and_its_wrapped_form() -> None:
    with pytest.raises(CorruptSnapshotError) as info:
        parse_producer_snapshot(hand_built([], version=2))
    assert info.value.reason == "Snapshot contained an unknown file version 2"
    assert info.value.message(wrap_unknown_version=True) == \
        "Snapshot failed schema validation: Snapshot contained an unknown file version 2"


def test_crc_mismatch_message() -> None:
    good = hand_built([(1, 0, 0, 0, 0, 0, 0, -1)])
    computed = crc32c(good[6:])
    with pytest.raises(CorruptSnapshotError) as info:
        parse_producer_snapshot(good[:2] + struct.pack(">I", 12345) + good[6:])
    assert info.value.reason == (f"Snapshot is corrupt (CRC is no longer valid). Stored crc: 12345. "
                                 f"Computed crc: {computed}")


def test_trailing_bytes_are_covered_by_the_crc() -> None:
    with pytest.raises(CorruptSnapshotError) as info:
        parse_producer_snapshot(encode_producer_snapshot([E1]) + b"\x00")
    assert info.value.kind == "crc"
