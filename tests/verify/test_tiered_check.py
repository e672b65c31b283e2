"""`kdump tiered` and `verify --remote` over a small tiered partition with one thing damaged at a time.

The layout and the state rules come from Kafka 4.3.0's source (RemoteLogSegmentFileset,
RemoteTopicPartitionDirectory, RemoteLogSegmentState.isValidTransition); the same checks run against a real
broker's files in tests/kafka/test_real_broker_tiered.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tiered_testing import COPY_FINISHED, DELETE_FINISHED, DELETE_STARTED, T0, build_tiered

from kdump.broker.remote_log_metadata import valid_transition
from kdump.format.snapshot import ProducerSnapshotEntry, encode_producer_snapshot
from kdump.log.remote_layout import parse_remote_partition_name, parse_remote_segment_name, remote_files
from kdump_testing import run_kdump


def _tiered(t) -> tuple[int, dict]:  # type: ignore[no-untyped-def]
    result = run_kdump("tiered", str(t.log_dir), "--remote", str(t.remote_root), "--json")
    (obj,) = [json.loads(line) for line in result.stdout.splitlines()]
    return result.exit_code, obj


def _kinds(obj: dict) -> list[tuple[str, int | None]]:
    return [(p["kind"], p["offset"]) for p in obj["problems"]]


def test_names_from_kafkas_javadoc() -> None:
    # RemoteLogSegmentFileset / RemoteTopicPartitionDirectory javadoc examples
    assert parse_remote_segment_name("0-oAtiIQ95REujbuzNd_lkLQ.log") == (0, "oAtiIQ95REujbuzNd_lkLQ", "log")
    assert parse_remote_segment_name("00000000000000000082-sPCCVhUyTZShBMgj-mBkHw.leader_epoch_checkpoint") == (
        82, "sPCCVhUyTZShBMgj-mBkHw", "leader_epoch_checkpoint")
    assert parse_remote_segment_name("00000000000000000082.log") is None
    assert parse_remote_partition_name("topic-3-5fEBmixCR5-dMntYSLIr1g") == ("topic", 3, "5fEBmixCR5-dMntYSLIr1g")
    assert parse_remote_partition_name("my-topic-0-_fEBmixCR5-dMntYSLIr1g") == ("my-topic", 0, "_fEBmixCR5-dMntYSLIr1g")


def test_state_transitions_are_kafkas() -> None:
    # RemoteLogSegmentState.isValidTransition, 4.3.0
    assert valid_transition(None, "COPY_SEGMENT_STARTED")
    assert not valid_transition(None, "COPY_SEGMENT_FINISHED")
    assert valid_transition("COPY_SEGMENT_STARTED", "DELETE_SEGMENT_STARTED")
    assert valid_transition("COPY_SEGMENT_FINISHED", "COPY_SEGMENT_FINISHED")
    assert not valid_transition("COPY_SEGMENT_FINISHED", "DELETE_SEGMENT_FINISHED")
    assert not valid_transition("DELETE_SEGMENT_FINISHED", "COPY_SEGMENT_STARTED")


def test_healthy_partition(tmp_path: Path) -> None:
    t = build_tiered(tmp_path)
    code, obj = _tiered(t)
    assert code == 0 and obj["problems"] == []
    assert (obj["logStartOffset"], obj["localLogStartOffset"], obj["logEndOffset"]) == (0, 30, 40)
    assert [(s["startOffset"], s["endOffset"], s["segmentId"], s["state"], s["present"])
            for s in obj["remoteSegments"]] == [(i * 10, i * 10 + 9, t.segment_ids[i], "COPY_SEGMENT_FINISHED", True)
                                                 for i in range(3)]
    text = run_kdump("tiered", str(t.log_dir), "--remote", str(t.remote_root))
    assert text.exit_code == 0 and text.stdout.endswith("1 tiered partition: ok, 0 notes\n")


def test_copy_never_finished(tmp_path: Path) -> None:
    t = build_tiered(tmp_path, {0: [COPY_FINISHED], 1: [], 2: [COPY_FINISHED]})
    code, obj = _tiered(t)
    assert code == 1      # the note alone would not fail; the offsets no finished copy holds do
    assert _kinds(obj) == [("remote-copy-unfinished", 10), ("remote-segments-gap", 10)]


def test_copy_cut_short_then_copied_again_is_healthy(tmp_path: Path) -> None:
    """A shutdown mid-copy leaves the segment at COPY_SEGMENT_STARTED with its files; the next leader copies it
    again under a new id (RemoteLogManager.copyLogSegment, 4.3.0). The broker reads the second copy only."""
    t = build_tiered(tmp_path, {0: [COPY_FINISHED], 1: [], 2: [COPY_FINISHED]}, retry=1)
    code, obj = _tiered(t)
    assert code == 0
    assert _kinds(obj) == [("remote-copy-unfinished", 10)]
    assert [(s["startOffset"], s["state"]) for s in obj["remoteSegments"]] == [
        (0, "COPY_SEGMENT_FINISHED"), (10, "COPY_SEGMENT_STARTED"), (10, "COPY_SEGMENT_FINISHED"),
        (20, "COPY_SEGMENT_FINISHED")]
    result = run_kdump("verify", str(t.log_dir), "--remote", str(t.remote_root))
    assert result.exit_code == 0, result.stdout + result.stderr
    # the store alone cannot say which copy the broker reads: a note, not a false alarm
    result = run_kdump("verify", str(t.remote_dir))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "remote segment starts at 10, the previous one holds offsets up to 19" in result.stdout


def test_files_left_after_delete_finished(tmp_path: Path) -> None:
    t = build_tiered(tmp_path, {0: [COPY_FINISHED, DELETE_STARTED, DELETE_FINISHED], 1: [COPY_FINISHED],
                                2: [COPY_FINISHED]})
    code, obj = _tiered(t)
    assert code == 0          # a note: the broker no longer reads it; the log start moved past it
    assert _kinds(obj) == [("remote-segment-deleted-left", 0)]


def test_transition_the_broker_drops(tmp_path: Path) -> None:
    t = build_tiered(tmp_path, {0: [COPY_FINISHED, DELETE_FINISHED], 1: [COPY_FINISHED], 2: [COPY_FINISHED]})
    code, obj = _tiered(t)
    assert code == 0
    assert _kinds(obj) == [("remote-metadata-anomaly", None)]
    assert "can not be transitioned" in obj["problems"][0]["message"]


def test_segment_with_no_metadata_at_all(tmp_path: Path) -> None:
    t = build_tiered(tmp_path, {0: [COPY_FINISHED], 1: [COPY_FINISHED]})
    code, obj = _tiered(t)
    assert code == 1
    assert ("remote-segment-unreferenced", 20) in _kinds(obj)
    assert obj["remoteSegments"][2]["state"] is None


def test_size_differs_from_the_record(tmp_path: Path) -> None:
    t = build_tiered(tmp_path)
    with open(t.remote_log(1), "ab") as f:
        f.write(b"\0" * 5)
    code, obj = _tiered(t)
    assert code == 1 and _kinds(obj) == [("remote-segment-mismatch", 10)]
    assert "size" in obj["problems"][0]["message"]


def test_leader_epochs_disagree_with_the_checkpoint(tmp_path: Path) -> None:
    t = build_tiered(tmp_path)
    (t.log_dir / "t-0" / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n1 25\n")
    code, obj = _tiered(t)
    # the segment's metadata (epoch 1 from 20) and its own epoch checkpoint (1 20) both disagree
    assert code == 1 and _kinds(obj) == [("remote-leader-epoch-mismatch", 20)] * 2


def test_remote_state_files_cut_at_the_segments_end(tmp_path: Path) -> None:
    t = build_tiered(tmp_path)
    epochs = t.remote_log(1).with_suffix(".leader_epoch_checkpoint")
    epochs.write_text("0\n2\n0 0\n1 15\n")      # an epoch after the segment's start, unknown to the local history
    snapshot = t.remote_log(0).with_suffix(".snapshot")
    snapshot.write_bytes(encode_producer_snapshot([ProducerSnapshotEntry(7, 0, 4, 12, 4, T0)]))   # past offset 9
    code, obj = _tiered(t)
    assert code == 1
    assert _kinds(obj) == [("remote-snapshot-past-segment", 12), ("remote-leader-epoch-mismatch", 10)]


def test_gap_between_remote_end_and_local_start(tmp_path: Path) -> None:
    t = build_tiered(tmp_path, {0: [COPY_FINISHED], 1: [COPY_FINISHED]})
    for path in t.remote_dir.glob(f"{20:020d}-*"):
        path.unlink()
    code, obj = _tiered(t)
    assert code == 1 and _kinds(obj) == [("remote-local-gap", 20)]


def test_verify_remote_counts_the_problems(tmp_path: Path) -> None:
    t = build_tiered(tmp_path)
    t.remote_log(0).unlink()
    result = run_kdump("verify", str(t.log_dir), "--remote", str(t.remote_root), "--json")
    findings = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.exit_code == 1
    assert {f["check"] for f in findings if f.get("type") == "finding"} >= {"remote-segment-missing"}
    # without --remote the log dir alone is fine: the log start below the local segments is a tiered note
    plain = run_kdump("verify", str(t.log_dir))
    assert plain.exit_code == 0 and "log start offset 0 is in remote storage" in plain.stdout


def test_remote_root_read_by_files_verify_and_summary(tmp_path: Path) -> None:
    t = build_tiered(tmp_path)
    files = remote_files(str(t.remote_root))
    assert files is not None and [Path(p).name.split("-")[0] for p in files if p.endswith(".log")] == [
        f"{i * 10:020d}" for i in range(3)]
    dump = run_kdump("--files", f"{t.remote_root},{t.log_dir / 't-0'}")
    assert dump.exit_code == 0
    offsets = [int(line.split()[1]) for line in dump.stdout.splitlines() if line.startswith("baseOffset:")]
    assert offsets == [0, 10, 20, 30]
    assert "kdump: the producer state at the end of the remote segment starting at offset 10" in dump.stdout
    assert "kdump: the partition's leader epochs up to the end of the remote segment starting at offset 20" in dump.stdout
    assert run_kdump("verify", str(t.remote_root)).exit_code == 0
    summary = run_kdump("summary", str(t.remote_root))
    assert summary.exit_code == 0 and "logEndOffset: 30" in summary.stdout


@pytest.mark.parametrize("args", [["--remote", "{remote}"], []])
def test_usage_errors(tmp_path: Path, args: list[str]) -> None:
    t = build_tiered(tmp_path)
    result = run_kdump("tiered", str(tmp_path / "missing"), *[a.format(remote=t.remote_root) for a in args])
    assert result.exit_code == 2
