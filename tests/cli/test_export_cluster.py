"""``kdump export --cluster``: each partition's history once, on clusters ``kdump gen`` writes.

Expected rows come from kafka-python (a test-only oracle reading each broker's segment files) and from the
scenarios' definitions (kdump/gen/cluster_generator.py: who leads, what each broker took), never from what
kdump printed: the history is the leader's copy; the lost records are those of a truncated broker whose
(offset, leader epoch) the leader does not hold.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pyarrow", reason="pyarrow not installed: pip install 'kdump[spark]'")
import pyarrow.dataset as ds
from click.testing import CliRunner
from kafka.record import MemoryRecords

from kdump.cli.main import cli
from kdump_testing import consumer_view

RECORDS = 200


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def clusters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("clusters")
    for scenario in ("agree", "unclean", "multi-round"):
        code, out = run("gen", str(root / scenario), "--brokers", "3", "--replica-scenario", scenario,
                        "--records", str(RECORDS), "--partitions", "1")
        assert code == 0, out
    code, out = run("gen", str(root / "txn" / "broker-1"), "--transactional", "demo", "--abort-ratio", "0.5",
                    "--records", "120", "--partitions", "1")
    assert code == 0, out
    return root


def kafka_python(pdir: Path) -> dict[int, dict]:
    """Every data record of a replica's segments by offset, as kafka-python reads them (control batches out)."""
    rows: dict[int, dict] = {}
    for log in sorted(pdir.glob("*.log")):
        records = MemoryRecords(log.read_bytes())
        while (batch := records.next_batch()) is not None:
            for r in batch:
                if not batch.is_control_batch:
                    rows[r.offset] = {"offset": r.offset, "key": r.key, "value": r.value, "timestamp_ms": r.timestamp,
                                      "headers": [(k, v) for k, v in r.headers], "epoch": batch.leader_epoch}
    return rows


def export(tmp_path: Path, name: str, *args: str) -> tuple[list[dict], dict]:
    out = tmp_path / name
    code, text = run("export", "--cluster", *args, "--to", str(out), "-j", "1")
    assert code == 0, text
    table = ds.dataset(str(out), format="parquet").to_table()
    rows = sorted(table.to_pylist(), key=lambda r: (r["fate"] != "kept", r["offset"]))
    return rows, json.loads((out / "_kdump_cluster.json").read_text())


def shown(row: dict) -> dict:
    return {"offset": row["offset"], "key": row["key"], "value": row["value"], "timestamp_ms": row["timestamp_ms"],
            "headers": [(h["key"], h["value"]) for h in row["headers"] or []], "epoch": row["partitionLeaderEpoch"]}


def brokers(root: Path) -> list[str]:
    return sorted(str(p) for p in root.glob("broker-*"))


def test_in_sync_replicas_give_each_record_once_from_the_leader(clusters: Path, tmp_path: Path) -> None:
    rows, manifest = export(tmp_path, "agree", *brokers(clusters / "agree"))
    leader = kafka_python(clusters / "agree" / "broker-2" / "demo-0")    # leadership moved to broker 2
    assert [shown(r) for r in rows] == [leader[o] for o in sorted(leader)]
    assert sorted(leader) == list(range(RECORDS))
    assert {r["broker"] for r in rows} == {2} and {r["fate"] for r in rows} == {"kept"}
    (part,) = manifest["partitions"]
    assert part["afterRestart"]["leader"]["broker"] == 2 and part["rows"] == {"kept": RECORDS}
    assert [(s["from"], s["to"], s["broker"]) for s in part["supplied"]] == [(0, RECORDS, 2)]
    assert manifest["isolation"] == "read_committed"


@pytest.mark.parametrize("scenario, leader_broker, truncated", [("unclean", 2, 1), ("multi-round", 3, 1)])
def test_an_unclean_election_keeps_the_new_leaders_copy_and_lists_what_it_destroys(
        clusters: Path, tmp_path: Path, scenario: str, leader_broker: int, truncated: int) -> None:
    paths = brokers(clusters / scenario)
    leader = kafka_python(clusters / scenario / f"broker-{leader_broker}" / "demo-0")
    old = kafka_python(clusters / scenario / f"broker-{truncated}" / "demo-0")
    # What the old leader held that the new one does not hold (same offset, same leader epoch).
    destroyed = [old[o] for o in sorted(old) if o not in leader or leader[o]["epoch"] != old[o]["epoch"]]
    assert destroyed
    rows, _ = export(tmp_path, "plain", *paths)
    assert [shown(r) for r in rows] == [leader[o] for o in sorted(leader)]
    assert {r["fate"] for r in rows} == {"kept"} and {r["fateReason"] for r in rows} == {None}
    rows, manifest = export(tmp_path, "lost", "--include-lost", *paths)
    kept = [r for r in rows if r["fate"] == "kept"]
    lost = [r for r in rows if r["fate"].startswith("lost-")]
    assert [shown(r) for r in kept] == [leader[o] for o in sorted(leader)]
    assert [shown(r) for r in lost] == destroyed
    assert {r["broker"] for r in lost} == {truncated}
    if scenario == "unclean":
        # The generator's leader 1 took R/4 records alone with ISR [1]: its checkpointed HW covers them.
        assert {r["fate"] for r in lost} == {"lost-committed"}
        assert [r["offset"] for r in lost] == list(range(RECORDS, RECORDS + RECORDS // 4))
    (part,) = manifest["partitions"]
    assert sum(part["rows"].values()) == len(rows)
    assert part["afterRestart"]["leader"]["broker"] == leader_broker


def test_a_missing_leader_is_named(clusters: Path, tmp_path: Path) -> None:
    root = clusters / "unclean"
    code, out = run("export", "--cluster", str(root / "broker-1"), str(root / "broker-3"), "--to", str(tmp_path / "o"))
    assert code == 2
    assert "broker 2" in out and "Traceback" not in out
    assert not (tmp_path / "o").exists()
    code, out = run("export", "--cluster", "--if-leader", "3", str(root / "broker-1"), str(root / "broker-3"),
                    "--to", str(tmp_path / "o"))
    assert code == 0, out


def test_isolation_under_cluster(clusters: Path, tmp_path: Path) -> None:
    pdir = clusters / "txn" / "broker-1" / "demo-0"
    rows, manifest = export(tmp_path, "committed", str(clusters / "txn" / "broker-1"))
    assert sorted((r["offset"], r["key"], r["value"]) for r in rows) == consumer_view(pdir)
    rows, manifest = export(tmp_path, "uncommitted", "--isolation", "read_uncommitted", str(clusters / "txn" / "broker-1"))
    # read_uncommitted: every data record (a consumer never returns control records)
    assert sorted((r["offset"], r["key"], r["value"]) for r in rows) == \
        [(o["offset"], o["key"], o["value"]) for o in sorted(kafka_python(pdir).values(), key=lambda o: o["offset"])]
    committed = {o for o, _, _ in consumer_view(pdir)}
    assert {r["offset"] for r in rows if r["fate"] == "aborted"} == {r["offset"] for r in rows} - committed
    assert manifest["partitions"][0]["rows"]["aborted"] == len(rows) - len(committed) > 0
