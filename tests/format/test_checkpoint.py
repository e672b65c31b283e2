"""Text checkpoint files and their Kafka error messages (CheckpointFile and its readers)."""

from __future__ import annotations

import pytest

from kdump.format.checkpoint import (
    CheckpointError,
    EpochEntry,
    OffsetCheckpointEntry,
    encode_leader_epoch_checkpoint,
    encode_offset_checkpoint,
    encode_partition_metadata,
    encode_properties,
    parse_clean_shutdown,
    parse_leader_epoch_checkpoint,
    parse_offset_checkpoint,
    parse_partition_metadata,
    parse_properties,
    parse_quorum_state,
    uuid_to_string,
)

NAME = "/data/recovery-point-offset-checkpoint"


def test_offset_checkpoint_golden_bytes_and_parse() -> None:
    entries = [OffsetCheckpointEntry("orders", 0, 42), OffsetCheckpointEntry("my.topic", 11, 7)]
    data = encode_offset_checkpoint(entries)
    assert data == b"0\n2\norders 0 42\nmy.topic 11 7\n"
    parsed = parse_offset_checkpoint(data, NAME)
    assert parsed.version == 0 and parsed.expected_count == 2 and parsed.entries == tuple(entries)


def test_whitespace_runs_and_crlf_are_accepted() -> None:
    parsed = parse_offset_checkpoint("0\r\n1\r\norders \t 3   99\r\n", NAME)
    assert parsed.entries == (OffsetCheckpointEntry("orders", 3, 99),)


@pytest.mark.parametrize("text", ["", "0\n"])
def test_empty_file_or_missing_count_means_no_entries(text: str) -> None:
    assert parse_offset_checkpoint(text, NAME).entries == ()


@pytest.mark.parametrize(("text", "message", "line"), [
    ("1\n0\n", f"Unrecognised version:1, expected version: 0 in checkpoint file at: {NAME}", 1),
    ("zero\n0\n", f"Malformed line in checkpoint file [{NAME}]: zero", 1),
    ("0\ntwo\n", f"Malformed line in checkpoint file [{NAME}]: two", 2),
    ("0\n2\norders 0 1\norders 1\n", f"Malformed line in checkpoint file [{NAME}]: orders 1", 4),
    ("0\n1\norders x 1\n", f"Malformed line in checkpoint file [{NAME}]: orders x 1", 3),
    ("0\n1\n orders 0 1\n", f"Malformed line in checkpoint file [{NAME}]:  orders 0 1", 3),
    ("0\n3\norders 0 1\n", f"Expected [3] entries in checkpoint file [{NAME}], but found only [1]", None),
])
def test_checkpoint_error_messages(text: str, message: str, line: int | None) -> None:
    with pytest.raises(CheckpointError) as info:
        parse_offset_checkpoint(text, NAME)
    assert info.value.reason == message
    assert info.value.line_number == line


def test_leader_epoch_checkpoint() -> None:
    data = encode_leader_epoch_checkpoint([EpochEntry(0, 0), EpochEntry(3, 120)])
    assert data == b"0\n2\n0 0\n3 120\n"
    assert parse_leader_epoch_checkpoint(data, "lec").entries == (EpochEntry(0, 0), EpochEntry(3, 120))
    with pytest.raises(CheckpointError) as info:
        parse_leader_epoch_checkpoint("0\n1\n0 0 0\n", "lec")
    assert info.value.reason == "Malformed line in checkpoint file [lec]: 0 0 0"


def test_partition_metadata_exact_format() -> None:
    raw = bytes(range(1, 17))
    data = encode_partition_metadata(raw)
    assert data == b"version: 0\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA"  # no trailing newline
    meta = parse_partition_metadata(data, "pm")
    assert meta.version == 0 and meta.topic_id == "AQIDBAUGBwgJCgsMDQ4PEA" and meta.topic_id_bytes == raw
    assert uuid_to_string(raw) == "AQIDBAUGBwgJCgsMDQ4PEA"


@pytest.mark.parametrize(("text", "message"), [
    ("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "Invalid topic ID in partition metadata file (pm)"),
    ("version: -1\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA", "Unrecognized version of partition metadata file + (pm): -1"),
    ("version 0\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA", "Malformed line in checkpoint file [pm]: version 0"),
    ("version: x\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA", "Malformed line in checkpoint file [pm]: version: x"),
    ("version: 0\n", "Malformed line in checkpoint file [pm]: null"),
])
def test_partition_metadata_errors(text: str, message: str) -> None:
    with pytest.raises(CheckpointError) as info:
        parse_partition_metadata(text, "pm")
    assert info.value.reason == message


def test_partition_metadata_rejects_non_uuid() -> None:
    with pytest.raises(CheckpointError) as info:
        parse_partition_metadata("version: 0\ntopic_id: short", "pm")
    assert info.value.line_number == 2 and "Invalid topic ID" in info.value.reason


def test_meta_properties_subset() -> None:
    text = "#\n#Mon Jan 01 00:00:00 UTC 2024\nnode.id=1\ndirectory.id = abc\\\n  def\nversion:1\n! comment\ncluster.id  xyz\n"
    assert parse_properties(text, "mp") == {"node.id": "1", "directory.id": "abcdef", "version": "1",
                                            "cluster.id": "xyz"}
    assert parse_properties(encode_properties({"version": "1", "cluster.id": "c"}, comment="x"), "mp") == \
        {"version": "1", "cluster.id": "c"}


def test_quorum_state_and_clean_shutdown() -> None:
    state = parse_quorum_state('{"leaderId":1,"leaderEpoch":4,"votedId":-1,"data_version":0}', "qs")
    assert state["leaderEpoch"] == 4
    with pytest.raises(CheckpointError) as info:
        parse_quorum_state('{"leaderId":\n', "qs")
    assert info.value.line_number == 2 and info.value.reason.startswith("quorum state file qs is not valid JSON")
    assert parse_clean_shutdown(b"", "cs").version is None
    marker = parse_clean_shutdown(b'{"version":0,"brokerEpoch":17}', "cs")
    assert (marker.version, marker.broker_epoch) == (0, 17)
