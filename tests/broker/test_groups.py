"""``kdump groups`` on the __consumer_offsets and __share_group_state of real 4.3.0 / 4.4.0 brokers
(fixtures/real-groups, made by tests/kafka/make_real_fixtures.py --groups).

Expected values: the committed offsets and share-partition start offsets the admin API listed when the
fixtures were made (``offset`` lines of driver-output.txt, Admin.listConsumerGroupOffsets and
Admin.listShareGroupOffsets), the transactional commit and abort the driver made (``eos`` lines), and for the
fates the consumer's rules as kafka-clients 4.4.0 states them (SubscriptionState.maybeCompleteValidation,
FetchCollector.handleInitializeErrors, OffsetFetcher): cited at each test. The real consumers' starts are
tests/kafka/test_real_groups_cluster.py's.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from kdump.broker.consumer_position import fate
from kdump.broker.group_report import GroupOffset, GroupsOptions, analyze_groups
from kdump.format.checkpoint import EpochEntry
from kdump_testing import run_kdump

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "real-groups"
RELEASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def _driver_lines(release: str, kind: str) -> list[list[str]]:
    lines = (FIXTURES / release / "driver-output.txt").read_text().splitlines()
    return [line.split(" ")[1:] for line in lines if line.startswith(kind + " ")]


def _counted(offsets: list[GroupOffset]) -> dict[tuple[str, str, int], GroupOffset]:
    return {(o.group, o.topic, o.partition): o for o in offsets if o.transaction in (None, "committed")}


@pytest.mark.parametrize("release", RELEASES)
def test_committed_offsets_equal_what_the_admin_api_listed(release: str) -> None:
    report = analyze_groups([str(FIXTURES / release / "logs")], GroupsOptions())
    found = _counted(report.offsets)
    listed = _driver_lines(release, "offset")
    assert listed
    for group, topic, partition, *rest in listed:
        got = found.pop((group, topic, int(partition)))
        if rest[0] == "start":            # a share group: Admin.listShareGroupOffsets' start offset
            assert (got.protocol, got.committed_offset) == ("share", int(rest[1]))
            continue
        offset, _, epoch, _, *metadata = rest
        assert got.commit is not None
        assert got.committed_offset == int(offset)
        assert got.commit.leader_epoch == (None if epoch == "-" else int(epoch))
        assert (got.commit.metadata or "") == " ".join(metadata)
    assert not found, f"kdump lists offsets the admin API did not: {sorted(found)}"


@pytest.mark.parametrize("release", RELEASES)
def test_group_protocols_are_the_admin_apis(release: str) -> None:
    types = {g: kind.lower() for g, kind, *_ in _driver_lines(release, "group")}
    report = analyze_groups([str(FIXTURES / release / "logs")], GroupsOptions())
    assert {o.group: o.protocol for o in report.offsets} == types


@pytest.mark.parametrize("release", RELEASES)
def test_the_aborted_transactional_commit_is_listed_apart(release: str) -> None:
    """The driver's sendOffsetsToTransaction: offset 10 committed, then 20 aborted (``eos`` lines)."""
    eos = {line[0]: int(line[1]) for line in _driver_lines(release, "eos")}
    report = analyze_groups([str(FIXTURES / release / "logs")], GroupsOptions(group="kdump-eos"))
    by_kind = {o.transaction: o for o in report.offsets}
    assert set(by_kind) == {"committed", "aborted"}
    assert by_kind["committed"].committed_offset == eos["committed"]
    assert by_kind["aborted"].committed_offset == eos["aborted"]
    assert by_kind["aborted"].fate is None and by_kind["aborted"].lag is None


def _after(release: str = "4.4.0", topic: str = "grp-a", partition: int = 1):  # type: ignore[no-untyped-def]
    report = analyze_groups([str(FIXTURES / release / "logs")], GroupsOptions(topic=topic, partition=partition))
    after = report.offsets[0].after
    assert after is not None
    return after


def test_a_valid_commit_resumes_whatever_the_policy() -> None:
    after = _after()    # grp-a-1: log start 0, end 10
    for policy in ("latest", "earliest", "none"):
        got = fate(after, 5, None, policy)
        assert (got.kind, got.next_offset, got.error, got.skipped, got.reread) == ("resume", 5, None, 0, 0)


@pytest.mark.parametrize(("policy", "expected"), [
    ("latest", (10, None, 5, 0)), ("earliest", (8, None, 3, 0)), ("none", (None, "OffsetOutOfRangeException", 0, 0))])
def test_a_commit_below_the_log_start_resets(policy: str, expected: tuple) -> None:
    """FetchCollector.handleInitializeErrors: OFFSET_OUT_OF_RANGE resets by auto.offset.reset (ListOffsets
    EARLIEST is the log start, LATEST the HW), or throws OffsetOutOfRangeException with none."""
    after = replace(_after(), log_start_offset=8, local_log_start_offset=8)
    got = fate(after, 5, None, policy)
    assert got.kind == "reset-below-log-start"
    assert (got.next_offset, got.error, got.skipped, got.reread) == expected


@pytest.mark.parametrize(("policy", "expected"), [
    ("latest", (6, None, 0, 4)), ("earliest", (6, None, 0, 4)), ("none", (None, "LogTruncationException", 0, 4))])
def test_a_commit_past_its_epochs_end_is_truncation(policy: str, expected: tuple) -> None:
    """SubscriptionState.maybeCompleteValidation: the leader's end offset for the commit's epoch (6) lies below
    the commit (10): with a reset policy the consumer seeks to 6, with none it throws LogTruncationException.
    The 4 records 6..9 it consumed no longer exist."""
    after = replace(_after(), log_end_offset=8, high_watermark=8, last_stable_offset=8,
                    epochs=(EpochEntry(0, 0), EpochEntry(1, 6), EpochEntry(2, 8)))
    got = fate(after, 10, 0, policy)
    assert got.kind == "truncation-detected"
    assert (got.next_offset, got.error, got.reread, got.lost_consumed) == expected


@pytest.mark.parametrize(("policy", "expected"), [
    ("latest", (8, None, 0, 2)), ("earliest", (0, None, 8, 2)), ("none", (None, "OffsetOutOfRangeException", 0, 2))])
def test_a_commit_without_an_epoch_past_the_end_is_out_of_range(policy: str, expected: tuple) -> None:
    after = replace(_after(), log_end_offset=8, high_watermark=8, last_stable_offset=8)
    got = fate(after, 10, None, policy)
    assert got.kind == "out-of-range-reset"
    assert (got.next_offset, got.error, got.reread, got.lost_consumed) == expected


@pytest.mark.parametrize(("policy", "expected"), [
    ("latest", (10, None)), ("earliest", (0, None)), ("none", (None, "NoOffsetForPartitionException"))])
def test_an_expired_commit_is_no_commit(policy: str, expected: tuple) -> None:
    got = fate(_after(), 4, None, policy, expired=True)
    assert got.kind == "expired"
    assert (got.next_offset, got.error) == expected


def test_cli_json_and_exit_status(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURES / "4.4.0" / "logs", logs)
    result = run_kdump("groups", str(logs), "--json")
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["type"] for r in rows} == {"groupOffset"}
    row = next(r for r in rows if r["group"] == "kdump-mixed" and r["partition"] == 1)
    assert (row["committedOffset"], row["committedLeaderEpoch"], row["lag"], row["fate"]["kind"]) == (5, None, 5, "resume")
    # The broker moved grp-a-1's log start to 8 (a deleteRecords): kdump-mixed's commit 5 lies below it.
    (logs / "log-start-offset-checkpoint").write_text("0\n1\ngrp-a 1 8\n")
    result = run_kdump("groups", str(logs), "--json", "--group", "kdump-mixed", "--reset", "earliest")
    assert result.exit_code == 3, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    row = next(r for r in rows if r["partition"] == 1)
    assert row["logStartOffset"] == 8
    assert row["fate"] == {"policy": "earliest", "kind": "reset-below-log-start", "nextOffset": 8, "error": None,
                           "skipped": 3, "reread": 0, "lostConsumed": 0}


def test_cli_without_coordinator_partitions_is_a_usage_error(tmp_path: Path) -> None:
    result = run_kdump("groups", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: ")


def test_readme_and_docs_show_what_kdump_groups_prints() -> None:
    root = FIXTURES.parents[1]
    command = "kdump groups fixtures/real-groups/4.4.0/logs --group kdump-eos"
    result = run_kdump("groups", str(FIXTURES / "4.4.0" / "logs"), "--group", "kdump-eos")
    assert result.exit_code == 0
    shown = f"$ {command}\n{result.stdout}"
    for doc in ("README.md", "docs/groups.md"):
        assert shown in (root / doc).read_text(), doc


def test_gen_writes_offset_commits_that_replay_to_the_last_commit_of_each_key(tmp_path: Path) -> None:
    """``kdump gen`` with a topic named __consumer_offsets: commit ``n`` is of key ``n % keys`` at offset
    ``n // keys + 1`` (kdump.gen.generator._OffsetCommits), so each key's last commit is known in advance."""
    records, keys = 50, 6
    result = run_kdump("gen", str(tmp_path / "logs"), "--topics", "data,__consumer_offsets", "--partitions",
                       "data=2,__consumer_offsets=1", "--records", str(records), "--group-keys", str(keys))
    assert result.exit_code == 0, result.stderr
    report = analyze_groups([str(tmp_path / "logs")], GroupsOptions())
    expected = {}
    for n in range(records):
        k = n % keys
        expected[(f"group-{k // 2}", "data", k % 2)] = n // keys + 1
    assert {(o.group, o.topic, o.partition): o.committed_offset for o in report.offsets} == expected
    assert all(o.commit is not None and o.commit.leader_epoch == 0 for o in report.offsets)


def test_expiry_follows_the_coordinators_rules() -> None:
    """OffsetMetadataManager.cleanupExpiredOffsets (4.4.0): a group's offsets of topics its members subscribe
    to never expire (kdump-consumer's member subscribes grp-a and grp-b); a classic group with members keeps its
    offsets (ClassicGroup.offsetExpirationCondition is empty unless Empty); a consumer-protocol group without
    members (kdump-regex) expires each offset ``retention`` after its commit time."""
    logs = str(FIXTURES / "4.4.0" / "logs")
    retention = 7 * 24 * 60
    later = 4_000_000_000_000
    report = analyze_groups([logs], GroupsOptions(now=later, retention_minutes=retention))
    by = {(o.group, o.topic, o.partition): o for o in report.offsets if o.transaction in (None, "committed")}
    for key in (("kdump-classic", "grp-a", 0), ("kdump-consumer", "grp-a", 0), ("kdump-consumer", "grp-b", 0)):
        assert by[key].expires_at is None and by[key].fate is not None and by[key].fate.kind == "resume", key
    regex = by[("kdump-regex", "grp-regex-1", 0)]
    assert regex.commit is not None
    assert regex.expires_at == regex.commit.commit_timestamp + retention * 60_000
    assert regex.fate is not None and (regex.fate.kind, regex.fate.next_offset) == ("expired", 20)
    result = run_kdump("groups", logs, "--now", str(later))
    assert result.exit_code == 2 and result.stderr.startswith("Error: ")
