"""``kdump replicas`` answers from the logs the brokers' loaders leave, not from the files as they lie (issue
"One log model"): a replica whose restart recovery truncates it holds less, a leader's own load truncation
loses what its followers then truncate, and what the metadata records stays apart from kdump's prediction.

Replicas come from ``kdump gen --brokers 3 --replica-scenario agree`` (R records at epoch 0 on every
broker, leader 2 at epoch 1, high watermark R everywhere), damaged here. Expected values follow from the
damage and Kafka's rules: LogLoader.recoverLog recovers every segment from the one holding the recovery point
after an unclean shutdown and truncates at the first batch that fails its CRC; a segment without ``.index``
is recovered whatever the shutdown (LogLoader.loadSegmentFiles); followers then fetch from the leader and
truncate to its end of their epoch (AbstractFetcherThread). Batch offsets and positions are read with
struct here, not with kdump.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from kdump.broker.replica_report import ReplicasOptions, analyze_partition, plan_partitions
from kdump.broker.restart import after_restart
from kdump.format.checkpoint import OffsetCheckpointEntry, encode_offset_checkpoint
from kdump.gen.cluster_generator import ClusterGenSpec, generate_cluster
from kdump.log.writer import LogConfig
from kdump.render.replicas_text import partition_lines, partition_object
from kdump_testing import run_kdump

R = 200


def _batches(log: Path) -> list[tuple[int, int, int]]:
    """(position, size, base offset) of each batch of a .log."""
    data, out, pos = log.read_bytes(), [], 0
    while pos + 12 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        out.append((pos, 12 + length, base))
        pos += 12 + length
    return out


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    out = tmp_path / "c"
    generate_cluster(str(out), ClusterGenSpec("t", 3, 1, "agree", R, records_per_batch=10, value_bytes=40,
                                              log=LogConfig(segment_bytes=2048)))
    return out


def _corrupt_last_segment(partition: Path, batch: int = 1) -> tuple[int, int]:
    """Flip a byte inside the value bytes of batch ``batch`` of the last segment: (the segment's base offset,
    the damaged batch's base offset)."""
    last = max(partition.glob("*.log"))
    position, size, base = _batches(last)[batch]
    data = bytearray(last.read_bytes())
    data[position + size - 5] ^= 0xFF
    last.write_bytes(bytes(data))
    return int(last.name[:20]), base


def _unclean(log_dir: Path, recovery_point: int) -> None:
    (log_dir / ".kafka_cleanshutdown").unlink(missing_ok=True)
    (log_dir / "recovery-point-offset-checkpoint").write_bytes(
        encode_offset_checkpoint([OffsetCheckpointEntry("t", 0, recovery_point)]))


def _replicas(path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = run_kdump("replicas", str(path), "--json", *args)
    [line] = result.stdout.splitlines()
    return result.exit_code, json.loads(line)


def _recovered_end(log_dir: Path) -> int:
    result = run_kdump("recover", str(log_dir), "--json")
    [plan] = [o for o in map(json.loads, result.stdout.splitlines()) if o["type"] == "partition"]
    return int(plan["logEndOffset"])


def _by_broker(items: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {item["broker"]: item for item in items}


def _damage_leader_candidate(cluster: Path) -> int:
    """Broker 1 stopped uncleanly with its recovery point at its last segment's base; a batch of that
    segment is corrupt. Returns the damaged batch's base offset, where its loader truncates."""
    partition = cluster / "broker-1" / "t-0"
    segment, damaged = _corrupt_last_segment(partition)
    _unclean(cluster / "broker-1", segment)
    assert segment < damaged < R
    return damaged


def test_the_leaders_own_recovery_truncates_its_followers(cluster: Path) -> None:
    """Case 1: broker 1 loads to X and leads; followers ask for epoch 0's end, get X and truncate: R - X
    records lost, all below the high watermark R, counted once for the partition."""
    x = _damage_leader_candidate(cluster)
    assert _recovered_end(cluster / "broker-1") == x
    code, part = _replicas(cluster, "--if-leader", "1")
    assert code == 3 and part["verdict"] == "data-loss"
    assert (part["leader"], part["leaderEpoch"]) == (2, 1)           # what the metadata records
    assert part["election"] == {"leader": 1, "leaderEpoch": 2, "reason": "--if-leader 1", "source": "if-leader"}
    replicas = _by_broker(part["replicas"])
    assert (replicas[1]["logEndOffset"], replicas[1]["logEndOffsetOnDisk"]) == (x, R)
    assert replicas[1]["loadTruncation"] == {"from": R, "to": x, "records": R - x, "committedRecords": R - x}
    assert (replicas[1]["highWatermark"], replicas[1]["highWatermarkCheckpoint"]) == (x, R)
    truncations = _by_broker(part["truncations"])
    for follower in (2, 3):
        t = truncations[follower]
        assert (t["truncateTo"], t["recordsLost"], t["committedRecordsLost"]) == (x, R - x, R - x)
    assert part["loss"] == {"records": R - x, "committedRecords": R - x, "offsets": [[x, R]]}


def test_a_follower_that_loads_less_lags_instead_of_holding_the_same_batches(cluster: Path) -> None:
    """Case 2: the same damage, leader 2 as the metadata records: broker 1 loads to X and refetches the
    rest from the leader; nothing is lost, and the verdict does not say every replica holds the same batches."""
    x = _damage_leader_candidate(cluster)
    code, part = _replicas(cluster)
    assert code == 0 and part["verdict"] == "lagging" and part["election"] is None
    replicas = _by_broker(part["replicas"])
    assert (replicas[1]["logEndOffset"], replicas[1]["logEndOffsetOnDisk"]) == (x, R)
    assert replicas[1]["loadTruncation"]["records"] == R - x
    assert part["loss"]["records"] == 0
    text = run_kdump("replicas", str(cluster)).stdout
    assert "every replica holds the same batches" not in text and f"logEnd={x}(on-disk:{R})" in text


def test_a_missing_index_after_a_clean_shutdown_recovers_that_segment(cluster: Path) -> None:
    """Case 3: broker 2 keeps its clean-shutdown marker but loses its last segment's .index, and a batch
    of that segment is corrupt: LogLoader.loadSegmentFiles recovers the segment (NoSuchFileException in
    sanityCheck), so broker 2 loads to X, and it leads: its followers truncate to X."""
    partition = cluster / "broker-2" / "t-0"
    segment, x = _corrupt_last_segment(partition)
    (partition / f"{segment:020d}.index").unlink()
    assert (cluster / "broker-2" / ".kafka_cleanshutdown").exists()
    assert _recovered_end(cluster / "broker-2") == x
    code, part = _replicas(cluster)
    replicas = _by_broker(part["replicas"])
    assert (replicas[2]["logEndOffset"], replicas[2]["logEndOffsetOnDisk"]) == (x, R)
    assert code == 3 and part["loss"]["records"] == R - x


def test_no_recorded_leader_is_a_fact_and_the_election_a_prediction(cluster: Path) -> None:
    """Case 4: the metadata ends with no leader (leader -1 at epoch 1, ISR empty, ELR [1, 2]): ``leader`` and
    ``leaderEpoch`` say so, and the election kdump predicts (the first ELR member in assignment order, at
    epoch 2: PartitionChangeBuilder.electAnyLeader) is named as a prediction."""
    [work] = plan_partitions([str(cluster)], ReplicasOptions(topic="t", partition=0))
    assert work[3] is not None
    _topic_id, registration = work[3].partition("t", 0)  # type: ignore[misc]
    registration.leader, registration.leader_epoch, registration.isr, registration.elr = -1, 1, [], [1, 2]
    report = analyze_partition(*work)
    obj = partition_object(report)
    assert (obj["leader"], obj["leaderEpoch"], obj["isr"], obj["elr"]) == (-1, 1, [], [1, 2])
    assert obj["election"]["leader"] == 1 and obj["election"]["leaderEpoch"] == 2
    assert obj["election"]["source"] == "elr"
    assert partition_lines(report)[0].startswith("t-0 no leader at epoch 1; at restart broker 1 would be "
                                                 "elected at epoch 2 (elr: ")


def test_the_partition_after_restart(cluster: Path) -> None:
    """The state after restart that consumers and the cluster export read: case 1's leader, its loaded log,
    its leadership epoch from its log end (Partition.makeLeader), the high watermark once its followers
    caught up (its log end: Partition.maybeIncrementLeaderHW), and its answer to OffsetsForLeaderEpoch."""
    x = _damage_leader_candidate(cluster)
    [work] = plan_partitions([str(cluster)], ReplicasOptions(topic="t", partition=0, if_leader=1))
    state = after_restart(analyze_partition(*work))
    assert state is not None and state.leader.broker == 1
    assert (state.log_start_offset, state.log_end_offset, state.high_watermark, state.last_stable_offset) == \
        (0, x, x, x)
    assert [(e.epoch, e.start_offset) for e in state.epochs] == [(0, 0), (2, x)]
    assert state.end_offset_for(0) == (0, x) and state.end_offset_for(2) == (2, x)
    assert [t.plan.truncate_to for t in state.truncations] == [x, x]
    assert state.loss.records == R - x
