"""Tiered storage against a real Kafka 4.3.0 broker (LocalTieredStorage, topic-based metadata manager).

One broker run (tests/kafka/tiered_broker.py: plain, gzip, a committed and an aborted transaction, a restart
that moves the leader epoch on, segments copied and deleted locally, later segments kept local) serves every
case. The oracles are the broker's own: the files LocalTieredStorage wrote, what a consumer reading from
offset 0 got at both isolation levels, and the local files the broker kept. Then damaged copies (a remote
segment deleted, a byte flipped in one, a local segment never copied deleted) must each be reported, and the
healthy copy must not be. Needs java and mvn (skipped with the reason otherwise; failed under CI=true).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from broker import BrokerError
from real_jars import _unavailable
from tiered_broker import TOPIC, TieredRun, run_scenario, tiered_lib

from kdump_testing import run_kdump

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> TieredRun:
    for tool in ("java", "mvn"):
        if shutil.which(tool) is None:
            _unavailable(f"{tool} not found on PATH (needed to fetch and run Kafka 4.3.0)")
    try:
        lib = tiered_lib()
    except (BrokerError, OSError) as exc:
        _unavailable(f"Kafka 4.3.0 jars with the kafka-storage test jar could not be fetched: {exc}")
    return run_scenario(lib, tmp_path_factory.mktemp("tiered"))


def _copy(run: TieredRun, dest: Path) -> TieredRun:
    shutil.copytree(run.log_dir, dest / "logdir", symlinks=True)
    shutil.copytree(run.remote_root, dest / "remote", symlinks=True)
    return TieredRun(dest / "logdir", dest / "remote", run.topic_id, run.consumed, run.end_offset, run.remote_states)


def _tiered_json(run: TieredRun) -> tuple[int, dict]:
    result = run_kdump("tiered", str(run.log_dir), "--remote", str(run.remote_root), "--json")
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    parts = [o for o in objects if o["topic"] == TOPIC]
    assert len(parts) == 1, result.stdout
    return result.exit_code, parts[0]


def _remote_files(run: TieredRun) -> dict[str, int]:
    """segment id -> start offset of every .log LocalTieredStorage holds (the names it wrote)."""
    out = {}
    for name in os.listdir(run.remote_partition_dir):
        if name.endswith(".log"):
            start, segment_id = name[:-4].split("-", 1)
            out[segment_id] = int(start)
    return out


def _remote_logs(run: TieredRun) -> dict[int, str]:
    """start offset -> segment id of every remote segment the broker finished copying (its metadata says so)."""
    return {start: segment_id for segment_id, start in _remote_files(run).items()
            if run.remote_states[segment_id][2] == "COPY_SEGMENT_FINISHED"}


def _cut_short(run: TieredRun) -> list[tuple[str, int]]:
    """("remote-copy-unfinished", start) of every copy the broker left at COPY_SEGMENT_STARTED (a shutdown
    mid-copy: timing decides whether the scenario's restart leaves one)."""
    return sorted(("remote-copy-unfinished", start) for segment_id, start in _remote_files(run).items()
                  if run.remote_states[segment_id][2] == "COPY_SEGMENT_STARTED")


def _errors_and_notes(part: dict) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    problems = [(p["severity"], (p["kind"], p["offset"])) for p in part["problems"]]
    return [k for level, k in problems if level == "error"], sorted(k for level, k in problems if level != "error")


def test_tiered_sees_every_copied_segment_and_the_metadata_agrees(run: TieredRun) -> None:
    code, part = _tiered_json(run)
    remote = _remote_logs(run)
    local_bases = sorted(int(p.name[:-4]) for p in run.partition_dir.glob("*.log"))
    assert len(remote) >= 3 and local_bases, "the scenario tiered too little to test"
    assert code == 0 and _errors_and_notes(part) == ([], _cut_short(run))
    assert part["topicId"] == run.topic_id
    assert {s["startOffset"]: s["segmentId"] for s in part["remoteSegments"]
            if s["state"] == "COPY_SEGMENT_FINISHED"} == remote
    assert {s["segmentId"]: (s["startOffset"], s["endOffset"], s["state"]) for s in part["remoteSegments"]} == {
        segment_id: run.remote_states[segment_id] for segment_id in _remote_files(run)}
    assert all(s["present"] for s in part["remoteSegments"])
    assert part["logStartOffset"] == 0
    assert part["localLogStartOffset"] == local_bases[0]
    assert part["logEndOffset"] == run.end_offset
    # the restart moved the leader epoch on: some remote segment was written under a later epoch
    epochs = {line.split()[0] for p in run.remote_partition_dir.glob("*.leader_epoch_checkpoint")
              for line in p.read_text().splitlines()[2:]}
    assert len(epochs) >= 2


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_export_of_both_tiers_equals_the_consumer(run: TieredRun, isolation: str, tmp_path: Path) -> None:
    """`kdump export` over the remote store and the local partition dir: the remote segments, then the local
    ones, each offset once (kdump.arrow.tiers), as a consumer reading from offset 0 got them."""
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "history.parquet"
    result = run_kdump("export", str(run.remote_partition_dir), str(run.partition_dir), "--isolation", isolation,
                       "--to", str(out), "--jobs", "1")
    assert result.exit_code == 0, result.stderr
    table = pq.read_table(out, columns=["offset", "key", "value", "isControl", "aborted"]).to_pylist()
    rows = [(r["offset"], r["key"], r["value"]) for r in table
            if not r["isControl"] and not (isolation == "read_committed" and r["aborted"])]
    assert rows == run.consumed[isolation]


def test_files_over_remote_root_and_log_dir_in_offset_order(run: TieredRun) -> None:
    result = run_kdump("--files", f"{run.remote_root},{run.partition_dir}")
    assert result.exit_code == 0, result.stderr
    dumped = [line.split()[1] for line in result.stdout.splitlines() if line.startswith("Dumping ")]
    logs = [p for p in dumped if p.endswith(".log")]
    starts = [int(os.path.basename(p).split(".")[0].split("-")[0]) for p in logs]
    assert starts == sorted(starts) and len(logs) == len(_remote_files(run)) + len(list(run.partition_dir.glob("*.log")))
    assert any(p.endswith(".leader_epoch_checkpoint") for p in dumped)


def test_verify_reads_remote_segments_and_the_tiered_log_dir(run: TieredRun) -> None:
    result = run_kdump("verify", str(run.remote_partition_dir))
    assert result.exit_code == 0, result.stdout + result.stderr
    result = run_kdump("verify", str(run.log_dir), "--remote", str(run.remote_root))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "the broker uses the base offset" not in result.stdout


def test_deleted_remote_segment_is_reported(run: TieredRun, tmp_path: Path) -> None:
    copy = _copy(run, tmp_path)
    start, segment_id = sorted(_remote_logs(copy).items())[1]
    (copy.remote_partition_dir / f"{start:020d}-{segment_id}.log").unlink()
    code, part = _tiered_json(copy)
    assert code == 1
    errors, notes = _errors_and_notes(part)
    assert ("remote-segment-missing", start) in errors and notes == _cut_short(run)
    assert {k for k, _ in errors} <= {"remote-segment-missing", "remote-segments-gap"}
    assert [s["present"] for s in part["remoteSegments"]].count(False) == 1


def test_flipped_byte_in_a_remote_segment_is_reported(run: TieredRun, tmp_path: Path) -> None:
    copy = _copy(run, tmp_path)
    start, segment_id = sorted(_remote_logs(copy).items())[2]
    path = copy.remote_partition_dir / f"{start:020d}-{segment_id}.log"
    data = bytearray(path.read_bytes())
    data[100] ^= 0x01      # inside the first batch's records: its CRC covers them
    path.write_bytes(bytes(data))
    code, part = _tiered_json(copy)
    assert code == 1
    assert _errors_and_notes(part) == ([("remote-segment-mismatch", start)], _cut_short(run))
    assert "CRC" in next(p["message"] for p in part["problems"] if p["kind"] == "remote-segment-mismatch")


def test_deleted_local_segment_never_copied_is_reported(run: TieredRun, tmp_path: Path) -> None:
    copy = _copy(run, tmp_path)
    remote_end = max(s["endOffset"] for s in _tiered_json(copy)[1]["remoteSegments"])
    local = sorted(copy.partition_dir.glob("*.log"))
    never_copied = [p for p in local if int(p.name[:-4]) > remote_end]
    assert len(never_copied) >= 2, "the scenario should keep segments that were never copied"
    first = never_copied[0]
    for path in copy.partition_dir.glob(first.name[:-4] + ".*"):
        path.unlink()
    code, part = _tiered_json(copy)
    assert code == 1
    assert _errors_and_notes(part) == ([("remote-local-gap", remote_end + 1)], _cut_short(run))


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_spark_source_reads_remote_then_local_once(run: TieredRun, isolation: str) -> None:
    """The kafka-log data source (partitions() and read(), no JVM) over the remote root and the log dir."""
    pytest.importorskip("pyarrow", reason="pyarrow not installed: pip install 'kdump[spark]'")
    from kdump.spark.datasource import KafkaLogDataSource
    from kdump.spark.schema import spark_schema

    source = KafkaLogDataSource({"paths": json.dumps([str(run.remote_root), str(run.partition_dir)]),
                                 "isolation": isolation, "splitbytes": "4k"})
    reader = source.reader(spark_schema("record"))
    rows = [row for p in reader.partitions() for b in reader.read(p) for row in b.to_pylist()]
    # the consumer never returns control records (markers); read_committed drops them already
    got = [(r["offset"], r["key"], r["value"]) for r in rows if r["topic"] == TOPIC and not r["isControl"]]
    assert got == run.consumed[isolation]
