"""``kdump replicas`` over replicas ``kdump gen --brokers`` writes (kdump.gen.cluster_generator).

Expected values are worked out from Kafka's algorithm (see tests/broker/test_follower_truncation.py for
the rules and their source files) and the scenario's construction, never from kdump's output: R
records are replicated everywhere at epoch 0, then each scenario adds what its docstring says.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kdump.broker.cluster_metadata import PartitionRegistration, replay_metadata
from kdump.broker.election import predict_leader
from kdump.broker.replica_report import ReplicasOptions, analyze_partition, plan_partitions
from kdump.gen.cluster_generator import ClusterGenSpec, generate_cluster
from kdump.log.logdir import read_partition_dir
from kdump.log.writer import LogConfig
from kdump_testing import run_kdump

R = 200
REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real-broker"


def replicas_json(tmp_path: Path, scenario: str, *extra: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / scenario
    generate_cluster(str(out), ClusterGenSpec("t", 3, 1, scenario, R, records_per_batch=10, value_bytes=40,
                                              log=LogConfig(segment_bytes=2048)))
    result = run_kdump("replicas", str(out), "--json", *extra)
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result.stderr
    return result.exit_code, json.loads(lines[0])


def by_broker(items: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    return {item["broker"]: item for item in items}


def test_agreeing_replicas_with_an_epoch_no_batch_carries(tmp_path: Path) -> None:
    code, obj = replicas_json(tmp_path, "agree")
    assert code == 0
    assert (obj["topic"], obj["partition"], obj["leader"], obj["leaderEpoch"], obj["isr"]) == ("t", 0, 2, 1, [1, 2, 3])
    assert obj["verdict"] == "consistent" and obj["divergences"] == [] and obj["findings"] == []
    replicas = by_broker(obj["replicas"])
    assert replicas[2]["leaderEpochCheckpoint"] == [[0, 0], [1, R]]     # the moved leadership's epoch, no batch
    assert replicas[2]["leaderEpochs"] == [[0, 0]]     # loading truncates the cache at the log end (truncateFromEnd)
    assert all(r["logEndOffset"] == R and r["highWatermark"] == R for r in replicas.values())
    assert all(t["truncateTo"] == R and t["recordsLost"] == 0 for t in obj["truncations"])


def test_unclean_election_loses_what_only_the_old_leader_had(tmp_path: Path) -> None:
    code, obj = replicas_json(tmp_path, "unclean")
    assert code == 3 and obj["verdict"] == "data-loss"
    assert (obj["leader"], obj["leaderEpoch"]) == (2, 2)
    assert sorted(d["firstDivergentOffset"] for d in obj["divergences"]) == [R, R]
    t = by_broker(obj["truncations"])
    # Broker 1 (epoch 0 up to R + R/4) fetches epoch 0 from the epoch-2 leader: epoch 0 ends at R there.
    assert (t[1]["truncateTo"], t[1]["recordsLost"], t[1]["committedRecordsLost"]) == (R, R // 4, R // 4)
    assert t[1]["lostOffsets"] == [R, R + R // 4]
    assert (t[3]["truncateTo"], t[3]["recordsLost"]) == (R + R // 2, 0)


def test_if_leader_another_broker(tmp_path: Path) -> None:
    # If broker 1 (epoch 0 to 250) led at epoch 3: brokers 2 and 3 fetch epoch 2, which broker 1 never
    # had: endOffsetFor(2) = (0, 250); 0 < 2. Their own endOffsetFor(0) = (0, R): truncate to R.
    code, obj = replicas_json(tmp_path, "unclean", "--if-leader", "1")
    t = by_broker(obj["truncations"])
    assert (obj["leader"], obj["election"]["leader"], obj["election"]["source"], code) == (2, 1, "if-leader", 3)
    assert (t[2]["truncateTo"], t[2]["recordsLost"], t[2]["committedRecordsLost"]) == (R, R // 2, R // 2)


def test_multi_round_truncation(tmp_path: Path) -> None:
    code, obj = replicas_json(tmp_path, "multi-round")
    t = by_broker(obj["truncations"])[1]
    # Broker 1: e0@0 e2@R e4@R+R/5; leader 3: e0@0 e1@R e3@R+R/2 e5@end. Rounds as in
    # test_follower_truncation.test_kip_279_two_rounds: to R + R/5, then to R.
    assert [s["truncateTo"] for s in t["steps"]] == [R + R // 5, R, None]
    assert (t["truncateTo"], t["rounds"], t["recordsLost"]) == (R, 2, R // 5 + R // 4)
    assert code == 3


def test_follower_behind_the_leaders_log_start(tmp_path: Path) -> None:
    code, obj = replicas_json(tmp_path, "retention")
    t = by_broker(obj["truncations"])[3]
    leader = by_broker(obj["replicas"])[1]
    assert leader["logStartOffset"] > R
    assert (t["truncatedFully"], t["truncateTo"], t["recordsLost"]) == (True, leader["logStartOffset"], 0)
    assert code == 0 and obj["verdict"] == "lagging"


def test_compacted_replicas_cleaned_at_different_times_do_not_diverge(tmp_path: Path) -> None:
    code, obj = replicas_json(tmp_path, "compacted")
    assert obj["compacted"] is True
    assert (code, obj["verdict"], obj["divergences"]) == (0, "consistent", [])
    assert by_broker(obj["replicas"])[1]["cleanerCheckpoint"] == R // 2


def test_stray_and_future_replicas(tmp_path: Path) -> None:
    out = tmp_path / "c"
    generate_cluster(str(out), ClusterGenSpec("t", 3, 1, "agree", R, value_bytes=10))
    src = out / "broker-1" / "t-0"
    future = out / "broker-1" / f"t-0.{'ab' * 16}-future"
    future.mkdir()
    for f in src.iterdir():
        (future / f.name).write_bytes(f.read_bytes())
    stray = out / "broker-3" / "t-1"          # the metadata assigns partition 1 nowhere
    stray.mkdir()
    (stray / "00000000000000000000.log").write_bytes(b"")
    result = run_kdump("replicas", str(out), "--json")
    objs = {o["partition"]: o for o in map(json.loads, result.stdout.splitlines())}
    states = [r["state"] for r in objs[0]["replicas"]]
    assert states.count("future") == 1
    assert any("future" in f["message"] for f in objs[0]["findings"])
    assert objs[1]["leader"] is None and objs[1]["isr"] is None


def test_predict_leader_with_elr() -> None:
    # PartitionChangeBuilder.isValidNewLeader: ISR members, or ELR members when the ISR is empty, in
    # assignment order; a broker back from an unclean shutdown first leaves both.
    part = PartitionRegistration([1, 2, 3], [], -1, 4, 9, elr=[3, 2], last_known_elr=[2])
    assert predict_leader(part, set()).leader == 2
    assert predict_leader(part, {2}).leader == 3
    assert predict_leader(PartitionRegistration([1, 2, 3], [3], -1, 4, 9, elr=[2]), set()).leader == 3
    assert predict_leader(PartitionRegistration([1, 2], [], -1, 4, 9, elr=[], last_known_elr=[]), set()).leader is None
    # A leader back from an unclean shutdown leaves the ISR: the next ISR member leads.
    assert predict_leader(PartitionRegistration([1, 2, 3], [1, 2], 1, 4, 9, elr=[]), {1}).leader == 2
    # Without ELR in the metadata (3.x), an unclean shutdown changes nothing.
    assert predict_leader(PartitionRegistration([1, 2, 3], [1, 2], 1, 4, 9), {1}).leader == 1


@pytest.mark.parametrize("release", ["4.3.0", "3.9.2"])
def test_real_kraft_metadata_replay(release: str) -> None:
    # The fixture broker (node 1, alone) was stopped after its topics were made; ELR (4.x) leaves
    # leader -1, ISR [] and ELR [1] (tests/kafka/make_real_fixtures.py, KAFKA-CLUSTER-NOTES).
    metadata = replay_metadata(read_partition_dir(str(REAL / release / "logs" / "__cluster_metadata-0")))
    assert metadata.problems == []
    found = metadata.partition("plain", 0)
    assert found is not None
    assert found[1].replicas == [1]
    assert metadata.compacted("compacted") and not metadata.compacted("plain")


def _future_in_second_dir(out: Path) -> str:
    """broker-1's replica of t-0 copied as a -future replica into a second log dir of broker 1; its
    directory id."""
    dir2 = out / "broker-1-dir2"
    dir2.mkdir()
    props = (out / "broker-1" / "meta.properties").read_text().splitlines()
    new_id = "nJp3Yq5cQ9uW0L2oV8Xk1g"
    (dir2 / "meta.properties").write_text("".join(
        (f"directory.id={new_id}" if line.startswith("directory.id=") else line) + "\n" for line in props))
    future = dir2 / f"t-0.{'ab' * 16}-future"
    future.mkdir()
    for f in (out / "broker-1" / "t-0").iterdir():
        (future / f.name).write_bytes(f.read_bytes())
    return new_id


def test_future_replica_what_the_broker_does_with_it(tmp_path: Path) -> None:
    # LogManager.recoverAbandonedFutureLogs (3.9.2 kafka/log/LogManager.scala, 4.4.0 storage LogManager.java):
    # a future log in the dir the metadata assigns to the replica becomes the current one at startup;
    # otherwise ReplicaAlterLogDirsThread resumes the copy. The generator's metadata assigns no dir
    # (DirectoryId's reserved Uuid(0, 0)).
    out = tmp_path / "c"
    generate_cluster(str(out), ClusterGenSpec("t", 3, 1, "agree", R, value_bytes=10))
    new_id = _future_in_second_dir(out)
    options = ReplicasOptions(topic="t", partition=0)
    [work] = plan_partitions([str(out)], options)
    report = analyze_partition(*work)
    [future] = [r for r in report.replicas if r.state == "future"]
    assert future.broker == 1 and future.log_end_offset == R
    [note] = [f.text for f in report.findings if "-future replica" in f.text]
    assert "names no dir" in note and "resumes the copy" in note, note
    assert report.divergences == [] and all(t.follower is not future for t in report.truncations)

    [work] = plan_partitions([str(out)], options)
    assert work[3] is not None
    _topic_id, registration = work[3].partition("t", 0)  # type: ignore[misc]
    registration.directories[registration.replicas.index(1)] = new_id
    report = analyze_partition(*work)
    [note] = [f.text for f in report.findings if "-future replica" in f.text]
    assert "at startup the broker makes it the current replica" in note, note
    assert "recoverAbandonedFutureLogs" in note and "resumes" not in note, note
