"""``kdump --files X.index/X.timeindex``: Kafka's lines on generated and damaged segments.

Expected strings are written from the spec's formats and from the entries the fixtures were built
with (kdump.log.index_builder), never copied from kdump's output.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from kdump_testing import run_kdump

_MAKER = Path(__file__).resolve().parents[2] / "fixtures" / "corrupt-index" / "make_fixtures.py"
if "kdump_index_fixtures" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("kdump_index_fixtures", _MAKER)
    _mod = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
    sys.modules["kdump_index_fixtures"] = _mod
    _spec.loader.exec_module(_mod)  # type: ignore[union-attr]
fx = sys.modules["kdump_index_fixtures"]

SEG = "00000000000000000000"


def case(name: str, tmp_path: Path) -> str:
    """Build a fixture case and return its directory name relative to tmp_path (the cwd of the run)."""
    fx.make_case(name, str(tmp_path))
    return f"{name}-0"


def files_snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_offset_index_lines(tmp_path: Path) -> None:
    d = case("healthy-leader", tmp_path)
    entries = fx.leader_indexes(fx.leader_log()).offset_entries
    result = run_kdump("--files", f"{d}/{SEG}.index", cwd=tmp_path)
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.splitlines() == [f"Dumping {d}/{SEG}.index"] + \
        [f"offset: {o} position: {p}" for o, p in entries]


def test_time_index_lines(tmp_path: Path) -> None:
    d = case("healthy-leader", tmp_path)
    entries = fx.leader_indexes(fx.leader_log()).time_entries
    result = run_kdump("--files", f"{d}/{SEG}.timeindex", cwd=tmp_path)
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.splitlines() == [f"Dumping {d}/{SEG}.timeindex"] + \
        [f"timestamp: {t} offset: {o}" for t, o in entries]


def test_verify_index_only_prints_no_entries(tmp_path: Path) -> None:
    d = case("healthy-leader", tmp_path)
    result = run_kdump("--files", f"{d}/{SEG}.index,{d}/{SEG}.timeindex", "--verify-index-only", cwd=tmp_path)
    assert result.stdout.splitlines() == [f"Dumping {d}/{SEG}.index", f"Dumping {d}/{SEG}.timeindex"]
    assert result.stderr == ""


def test_follower_layout_mismatch_summary_descending(tmp_path: Path) -> None:
    d = case("healthy-follower-pre41", tmp_path)
    log = fx.leader_log()
    by_pos = {b.position: b.last_offset for b in fx.batches_of(log)}
    pairs = [(o, by_pos[p]) for o, p in fx.chunked_indexes(log).offset_entries]
    result = run_kdump("--files", f"{d}/{SEG}.index", "--verify-index-only", cwd=tmp_path)
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [f"Mismatches in :{tmp_path}/{d}/{SEG}.index"] + \
        [f"  Index offset: {o}, log offset: {lo}" for o, lo in sorted(pairs, reverse=True)]


def test_kafka_22_compares_with_the_first_record(tmp_path: Path) -> None:
    d = case("healthy-leader", tmp_path)
    log = fx.leader_log()
    by_pos = {b.position: b.base_offset for b in fx.batches_of(log)}
    pairs = [(o, by_pos[p]) for o, p in fx.leader_indexes(log).offset_entries]
    result = run_kdump("--files", f"{d}/{SEG}.index", "--verify-index-only", "--kafka-version", "2.2", cwd=tmp_path)
    assert result.stderr.splitlines() == [f"Mismatches in :{tmp_path}/{d}/{SEG}.index"] + \
        [f"  Index offset: {o}, log offset: {lo}" for o, lo in sorted(pairs, reverse=True)]


def test_time_index_mismatch_out_of_order_and_not_found(tmp_path: Path) -> None:
    d1 = case("bad-time-not-max", tmp_path)
    d2 = case("bad-time-not-increasing", tmp_path)
    d3 = case("healthy-time-inside-batch", tmp_path)
    log = fx.leader_log()
    entries = fx.leader_indexes(log).time_entries
    (t1, _), (t2, _) = entries[1], entries[2]
    inside = fx.leader_indexes(fx.leader_log(max_in_middle=True)).time_entries
    result = run_kdump("--files", f"{d1}/{SEG}.timeindex,{d2}/{SEG}.timeindex,{d3}/{SEG}.timeindex",
                       "--verify-index-only", cwd=tmp_path)
    assert result.exit_code == 0
    # Files come in the order of Kafka's hash maps, which depends on tmp_path: compare per file
    # (the order itself is checked against real Kafka in tests/kafka).
    lines = result.stderr.splitlines()
    mismatch_blocks = {tuple(lines[i:i + 2]) for i in (0, 2)}
    assert mismatch_blocks == {
        (f"Found timestamp mismatch in :{tmp_path}/{d1}/{SEG}.timeindex", f"  Index timestamp: {t1 + 1}, log timestamp: {t1}"),
        (f"Found timestamp mismatch in :{tmp_path}/{d2}/{SEG}.timeindex", f"  Index timestamp: {t1}, log timestamp: {t2}"),
    }
    assert lines[4:] == [
        f"Found out of order timestamp in :{tmp_path}/{d2}/{SEG}.timeindex",
        f"  Index timestamp: {t1}, Previously indexed timestamp: {t1}",
        f"The following indexed offsets are not found in :{tmp_path}/{d3}/{SEG}.timeindex",
    ] + [f"Indexed offset: {o - 1}, found log offset: {o}" for _, o in inside]


def test_sanity_check_pass_and_fail_go_on(tmp_path: Path) -> None:
    bad = case("bad-index-size", tmp_path)
    good = case("healthy-leader", tmp_path)
    result = run_kdump("--files", f"{bad}/{SEG}.index,{good}/{SEG}.index,{good}/{SEG}.timeindex",
                       "--index-sanity-check", cwd=tmp_path)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [f"Dumping {bad}/{SEG}.index", f"Dumping {good}/{SEG}.index",
                                          f"{good}/{SEG}.index passed sanity check.",
                                          f"Dumping {good}/{SEG}.timeindex",
                                          f"{good}/{SEG}.timeindex passed sanity check."]
    size = len(fx.leader_indexes(fx.leader_log()).offset_index_bytes()) - 3
    assert result.stderr.splitlines() == [
        f"Error: {bad}/{SEG}.index: Index file {tmp_path}/{bad}/{SEG}.index is corrupt, found {size} bytes which "
        f"is neither positive nor a multiple of 8"]


def test_padded_time_index_fails_kafkas_sanity_check(tmp_path: Path) -> None:
    d = case("healthy-padded", tmp_path)
    first = fx.leader_indexes(fx.leader_log(), close=False).time_entries[0][0]
    result = run_kdump("--files", f"{d}/{SEG}.timeindex", "--index-sanity-check", cwd=tmp_path)
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"Error: {d}/{SEG}.timeindex: Corrupt time index found, time index file ({tmp_path}/{d}/{SEG}.timeindex) "
        f"has non-zero size but the last timestamp is 0 which is less than the first timestamp {first}")


@pytest.mark.parametrize("version,expected", [("2.8", ["{p} is empty."]), ("4.3", ["{p} is empty."]),
                                              ("2.7", []), ("2.2", [])])
def test_empty_index_message_from_28(tmp_path: Path, version: str, expected: list[str]) -> None:
    d = tmp_path / "t-0"
    d.mkdir()
    (d / f"{SEG}.log").write_bytes(b"")
    (d / f"{SEG}.index").write_bytes(b"")
    p = f"t-0/{SEG}.index"
    result = run_kdump("--files", p, "--kafka-version", version, cwd=tmp_path)
    assert result.stdout.splitlines() == [f"Dumping {p}"] + [e.format(p=p) for e in expected]


def test_empty_active_segment_does_not_crash(tmp_path: Path) -> None:
    d = case("healthy-empty-active", tmp_path)
    before = files_snapshot(tmp_path / d)
    result = run_kdump("--files", f"{d}/{SEG}.index,{d}/{SEG}.timeindex", cwd=tmp_path)
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [f"Dumping {d}/{SEG}.index", f"Dumping {d}/{SEG}.timeindex",
                                          "timestamp: 0 offset: 0"]
    assert result.stderr.splitlines() == [
        f"Note: {d}/{SEG}.index: preallocated, 0 valid entries (128 zero slots) and no batch at position 0 of the "
        f"log (0 bytes); nothing to check",
        f"The following indexed offsets are not found in :{tmp_path}/{d}/{SEG}.timeindex",
        "Indexed offset: 0, found log offset: -1"]
    assert files_snapshot(tmp_path / d) == before


def test_missing_log_and_index_are_notes_and_nothing_is_created(tmp_path: Path) -> None:
    d = case("note-orphan-index", tmp_path)
    (tmp_path / d / f"{SEG}.index").unlink()
    before = files_snapshot(tmp_path / d)
    entries = fx.leader_indexes(fx.leader_log()).time_entries
    result = run_kdump("--files", f"{d}/{SEG}.timeindex,{d}/{SEG}.index", cwd=tmp_path)
    assert result.exit_code == 1  # the .index itself is missing: a per-file error
    assert result.stdout.splitlines()[:len(entries) + 1] == [f"Dumping {d}/{SEG}.timeindex"] + \
        [f"timestamp: {t} offset: {o}" for t, o in entries]
    err = result.stderr.splitlines()
    assert err[0] == f"Note: {d}/{SEG}.timeindex: log file missing ({SEG}.log); entries are printed without " \
                     f"checking them"
    assert err[1].startswith(f"Error: {d}/{SEG}.index: No such file or directory")
    assert files_snapshot(tmp_path / d) == before


def test_missing_offset_index_for_time_index(tmp_path: Path) -> None:
    d = case("healthy-leader", tmp_path)
    (tmp_path / d / f"{SEG}.index").unlink()
    result = run_kdump("--files", f"{d}/{SEG}.timeindex", "--verify-index-only", cwd=tmp_path)
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        f"Note: {d}/{SEG}.timeindex: offset index missing; Kafka's tool would create an empty one and crash, kdump "
        f"scans the log from its start instead"]
    assert not (tmp_path / d / f"{SEG}.index").exists()


def test_entry_past_end_of_log(tmp_path: Path) -> None:
    d = case("bad-position-past-log", tmp_path)
    log = fx.leader_log()
    entries = fx.leader_indexes(log).offset_entries
    last_offset = entries[-1][0]
    result = run_kdump("--files", f"{d}/{SEG}.index", cwd=tmp_path)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == f"offset: {last_offset} position: {len(log) + 100}"
    assert result.stderr.splitlines() == [
        f"Note: {d}/{SEG}.index: entry {len(entries) - 1} (offset {last_offset} position {len(log) + 100}): "
        f"position is past the end of the log ({len(log)} bytes); Kafka's tool crashes here, kdump goes on"]


def test_batch_larger_than_max_message_size(tmp_path: Path) -> None:
    d = case("healthy-leader", tmp_path)
    log = fx.leader_log()
    by_pos = {b.position: b for b in fx.batches_of(log)}
    o, p = fx.leader_indexes(log).offset_entries[0]
    result = run_kdump("--files", f"{d}/{SEG}.index", "--max-message-size", "100", "--verify-index-only",
                       cwd=tmp_path)
    assert result.exit_code == 0
    assert result.stderr.splitlines()[0] == (
        f"Note: {d}/{SEG}.index: entry 0 (offset {o} position {p}): the batch here is {by_pos[p].size} bytes, "
        f"larger than --max-message-size 100 (Kafka's tool crashes here); compared in full")


def test_json_one_object_per_entry(tmp_path: Path) -> None:
    d = case("healthy-leader", tmp_path)
    b = fx.leader_indexes(fx.leader_log())
    result = run_kdump("--files", f"{d}/{SEG}.index,{d}/{SEG}.timeindex", "--json", cwd=tmp_path)
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    assert objs[0]["type"] == "file" and objs[0]["fileType"] == "index"
    assert objs[0]["validEntries"] == len(b.offset_entries)
    index_objs = [o for o in objs if o["type"] == "indexEntry"]
    assert [(o["offset"], o["position"]) for o in index_objs] == b.offset_entries
    time_objs = [o for o in objs if o["type"] == "timeIndexEntry"]
    assert [(o["timestamp"], o["offset"]) for o in time_objs] == b.time_entries


def test_files_are_never_changed(tmp_path: Path) -> None:
    d = case("healthy-padded", tmp_path)
    before = files_snapshot(tmp_path / d)
    mtimes = {p: os.stat(tmp_path / d / p).st_mtime_ns for p in before}
    run_kdump("--files", f"{d}/{SEG}.index,{d}/{SEG}.timeindex", cwd=tmp_path)
    assert files_snapshot(tmp_path / d) == before
    assert {p: os.stat(tmp_path / d / p).st_mtime_ns for p in before} == mtimes


def test_index_of_a_deleted_segment_is_checked_against_the_deleted_log(tmp_path: Path) -> None:
    # Kafka renames all of a segment's files together (X.log.deleted, X.index.deleted, ...).
    d = case("healthy-leader", tmp_path)
    live = run_kdump("--files", f"{d}/{SEG}.index,{d}/{SEG}.timeindex", cwd=tmp_path)
    for name in os.listdir(tmp_path / d):
        os.rename(tmp_path / d / name, tmp_path / d / f"{name}.deleted")
    before = files_snapshot(tmp_path / d)
    deleted = run_kdump("--files", f"{d}/{SEG}.index.deleted,{d}/{SEG}.timeindex.deleted", cwd=tmp_path)
    assert deleted.exit_code == live.exit_code == 0
    assert "log file missing" not in deleted.stderr and deleted.stderr == live.stderr
    out = deleted.stdout.splitlines()
    notes = [line for line in out if line.startswith("kdump: ")]
    assert len(notes) == 2 and all("scheduled for asynchronous deletion" in n for n in notes)
    without_notes = [line.replace(".deleted", "") for line in out if not line.startswith("kdump: ")]
    assert without_notes == live.stdout.splitlines()
    assert files_snapshot(tmp_path / d) == before


def test_time_index_starts_where_the_offset_index_points(tmp_path: Path) -> None:
    """Kafka looks each time-index offset up in the .index first: with the .index entry for 14
    pointing at the batch of 20 (fixture bad-offset-not-increasing), Kafka 3.9 and 4.3 both report
    `Indexed offset: 14, found log offset: 20` for the time index (seen with the real tools)."""
    d = case("bad-offset-not-increasing", tmp_path)
    for version, header in (("4.3", f"The following indexed offsets are not found in :{tmp_path}/{d}/{SEG}.timeindex"),
                            ("3.9", "The following indexed offsets are not found in the log.")):
        result = run_kdump("--files", f"{d}/{SEG}.timeindex", "--verify-index-only", "--kafka-version", version,
                           cwd=tmp_path)
        assert result.stderr.splitlines() == [header, "Indexed offset: 14, found log offset: 20"]
