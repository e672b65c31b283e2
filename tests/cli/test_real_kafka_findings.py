"""Differences the diff against the real tools (tests/kafka/test_real_dump.py) found, pinned here so
they are checked without Java too. Expected lines are the real tools' output for the fixtures."""

from __future__ import annotations

import os
from pathlib import Path

from kdump_testing import run_kdump

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SEG = "00000000000000000000"


def test_kafka_22_lists_a_files_mismatches_newest_first_repeats_included() -> None:
    index = FIXTURES / "corrupt-index" / "bad-offset-not-increasing-0" / f"{SEG}.index"
    result = run_kdump("--files", str(index), "--verify-index-only", "--kafka-version", "2.2.2")
    pairs = [(68, 66), (62, 60), (56, 54), (50, 48), (44, 42), (38, 36), (32, 30), (26, 24), (14, 18), (14, 12),
             (8, 6)]
    assert result.stderr.splitlines() == [f"Mismatches in :{os.path.abspath(index)}"] + \
        [f"  Index offset: {i}, log offset: {o}" for i, o in pairs]


def test_java_tool_keeps_one_mismatch_per_index_offset() -> None:
    index = FIXTURES / "corrupt-index" / "bad-offset-not-increasing-0" / f"{SEG}.index"
    result = run_kdump("--files", str(index), "--verify-index-only", "--kafka-version", "4.3.0")
    assert result.stderr.splitlines() == [f"Mismatches in :{os.path.abspath(index)}",
                                          "  Index offset: 14, log offset: 20"]


def test_kafka_28_legacy_base_offset_is_the_first_inner_record() -> None:
    log = FIXTURES / "logdirs" / "v1-snappy-0" / f"{SEG}.log"
    result = run_kdump("--files", str(log), "--deep-iteration", "--kafka-version", "2.8.2")
    line = result.stdout.splitlines()[3]
    assert line.startswith("| offset: 0 isValid: true crc: 1222858701 keySize: 5 valueSize: 78 "
                           "LogAppendTime: 1700000002831 baseOffset: 0 lastOffset: 4 ")


def test_kafka_40_snapshot_schema_errors_are_the_generated_readers(tmp_path: Path) -> None:
    """4.0+ read producer snapshots with a generated class; 3.x with a Struct schema."""
    cases = {
        b"\x00\x01" + b"\x00" * 7: ("Error reading field 'producer_entries': java.nio.BufferUnderflowException", "null"),
        b"\x00\x01" + b"\x00" * 4 + b"\xff\xff\xff\xff": (
            "Error reading field 'producer_entries': Array size -1 cannot be negative",
            "non-nullable field producerEntries was serialized as null"),
        b"\x00\x01" + b"\x00" * 4 + (1000).to_bytes(4, "big") + b"\x00" * 20: (
            "Error reading field 'producer_entries': Error reading array of size 1000, only 20 bytes available",
            "Tried to allocate a collection of size 1000, but there are only 20 bytes remaining."),
    }
    for i, (data, (scala, generated)) in enumerate(cases.items()):
        path = tmp_path / f"{i:020d}.snapshot"
        path.write_bytes(data)
        for version, detail in (("3.9.2", scala), ("4.0.2", generated), ("4.3.0", generated)):
            result = run_kdump("--files", str(path), "--kafka-version", version)
            assert result.stderr == f"Snapshot failed schema validation: {detail}\n", (version, data)
