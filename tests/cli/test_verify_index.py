"""``kdump verify-index``: lines, summary, JSON, exit codes 0/1/2, walking log.dirs."""

from __future__ import annotations

import json
from pathlib import Path

from kdump_testing import index_fixtures, run_kdump

fx = index_fixtures()

SEG = "00000000000000000000"


def test_clean_partition_exit_0(tmp_path: Path) -> None:
    d = fx.make_case("healthy-leader", str(tmp_path))
    result = run_kdump("verify-index", d)
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "verify-index OK: 3 files in 1 segment of 1 partition checked: 0 errors, 0 notes"]


def test_error_line_and_exit_1(tmp_path: Path) -> None:
    d = fx.make_case("bad-position-not-batch", str(tmp_path))
    log = fx.leader_log()
    offset, position = fx.leader_indexes(log).offset_entries[2]
    batch = next(b for b in fx.batches_of(log) if b.position == position)
    result = run_kdump("verify-index", d)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"error: {d}/{SEG}.index entry 2 (offset {offset}, position {position + 5}): position is not the start of "
        f"a batch; log: batch at position {position} holds offsets {batch.base_offset}..{batch.last_offset}",
        "verify-index FAILED: 3 files in 1 segment of 1 partition checked: 1 error, 0 notes"]


def test_notes_fold_and_errors_only(tmp_path: Path) -> None:
    d = fx.make_case("healthy-follower-pre41", str(tmp_path))
    n = len(fx.chunked_indexes(fx.leader_log()).offset_entries)
    result = run_kdump("verify-index", d)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"note: {d}/{SEG}.index entry 0 ")
    assert lines[0].endswith(f"(and {n - 1} more like it in this file)")
    assert lines[1] == f"verify-index OK: 3 files in 1 segment of 1 partition checked: 0 errors, {n} notes"
    quiet = run_kdump("verify-index", "--errors-only", d)
    assert quiet.stdout.splitlines() == [lines[1]]


def test_log_dirs_walk_and_json(tmp_path: Path) -> None:
    root = tmp_path / "data"
    fx.make_case("healthy-leader", str(root))
    fx.make_case("bad-time-past-log", str(root))
    result = run_kdump("verify-index", "--json", str(root))
    assert result.exit_code == 1
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    (finding,) = [o for o in objs if o["type"] == "finding"]
    assert finding["severity"] == "error" and finding["check"] == "offset-past-log"
    assert finding["file"] == f"{root}/bad-time-past-log-0/{SEG}.timeindex"
    assert objs[-1] == {"type": "summary", "schemaVersion": 1, "command": "verify-index", "ok": False,
                        "partitions": 2, "segments": 2, "files": 6, "errors": 1, "notes": 0, "unreadable": [],
                        "nothingChecked": None}


def test_single_files(tmp_path: Path) -> None:
    d = fx.make_case("bad-index-size", str(tmp_path))
    assert run_kdump("verify-index", f"{d}/{SEG}.timeindex").exit_code == 0
    assert run_kdump("verify-index", f"{d}/{SEG}.index").exit_code == 1
    assert run_kdump("verify-index", f"{d}/{SEG}.log").exit_code == 1


def test_unreadable_and_usage_exit_2(tmp_path: Path) -> None:
    missing = run_kdump("verify-index", str(tmp_path / "nope"))
    assert missing.exit_code == 2
    assert missing.stderr.splitlines() == [f"Error: {tmp_path}/nope: No such file or directory"]
    (tmp_path / "empty").mkdir()
    assert run_kdump("verify-index", str(tmp_path / "empty")).exit_code == 2
    (tmp_path / "x.txt").write_text("hi")
    assert run_kdump("verify-index", str(tmp_path / "x.txt")).exit_code == 2
    assert run_kdump("verify-index").exit_code == 2


def test_deep_density_note(tmp_path: Path) -> None:
    d = fx.make_case("healthy-leader", str(tmp_path))
    result = run_kdump("verify-index", "--deep", "--index-interval-bytes", "2000", d)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0].startswith(f"note: {d}/{SEG}.index: ")
    assert "a broker writes with index.interval.bytes=2000 (an entry only after more than 2000 bytes" in result.stdout
