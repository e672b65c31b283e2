"""``kdump find``: the record Kafka's lookup returns, its --explain steps, exit codes."""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path

from kdump_testing import index_fixtures, run_kdump

fx = index_fixtures()

SEG = "00000000000000000000"


def _batch_containing(offset: int):  # type: ignore[no-untyped-def]
    return next(b for b in fx.batches_of(fx.leader_log()) if b.last_offset >= offset)


def test_find_offset_prints_batch_and_record(tmp_path: Path) -> None:
    d = fx.make_case("healthy-leader", str(tmp_path))
    batch = _batch_containing(40)
    rec = fx.record(40, fx.T0 + 1000 * (batch.base_offset // 3) + 10 * (40 - batch.base_offset))
    result = run_kdump("find", d, "--offset", "40")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset} count: 3 ")
    assert f" position: {batch.position} CreateTime: {batch.max_timestamp} size: {batch.size} " in lines[0]
    assert lines[0].endswith(" isvalid: true")
    assert lines[1] == (f"| offset: 40 CreateTime: {rec.timestamp} keySize: {len(rec.key)} "
                        f"valueSize: {len(rec.value)} sequence: -1 headerKeys: []")


def test_find_explain_steps(tmp_path: Path) -> None:
    d = fx.make_case("healthy-leader", str(tmp_path))
    log = fx.leader_log()
    entries = fx.leader_indexes(log).offset_entries
    slot = max(i for i, (o, _) in enumerate(entries) if o <= 40)
    o, p = entries[slot]
    result = run_kdump("find", d, "--offset", "40", "--explain")
    lines = result.stdout.splitlines()
    assert lines[0] == f"segment: {SEG}.log: the largest base offset <= 40 (1 segment)"
    assert lines[1] == (f"index: {SEG}.index: slot {slot} of {len(entries)} entries holds offset {o} position {p} "
                        f"(largest entry <= 40)")
    assert lines[2] == f"start: scan {SEG}.log from position {p} ({len(log)} bytes in the segment)"
    scanned = [b for b in fx.batches_of(log) if p <= b.position <= _batch_containing(40).position]
    assert lines[-3] == f"read: {len(scanned)} batches scanned, {sum(b.size for b in scanned)} bytes of log read"


def test_find_timestamp_json(tmp_path: Path) -> None:
    d = fx.make_case("healthy-leader", str(tmp_path))
    target = fx.T0 + 5005   # batch 5 holds T0+5000, +5010, +5020
    result = run_kdump("find", d, "--timestamp", str(target), "--json", "--explain")
    assert result.exit_code == 0
    (obj,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert obj["found"] and obj["by"] == "timestamp" and obj["target"] == target
    assert obj["batch"]["records"][0]["offset"] == 16 and obj["batch"]["records"][0]["timestamp"] == fx.T0 + 5010
    assert [s["kind"] for s in obj["steps"]][:3] == ["segment", "time-index", "index"]


def test_not_found_exit_1_and_usage_exit_2(tmp_path: Path) -> None:
    d = fx.make_case("healthy-leader", str(tmp_path))
    result = run_kdump("find", d, "--offset", "100000")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == ["offset 100000 is beyond the end of the log"]
    assert run_kdump("find", d).exit_code == 2
    assert run_kdump("find", d, "--offset", "1", "--timestamp", "2").exit_code == 2
    (tmp_path / "notapartition").mkdir()
    bad = run_kdump("find", str(tmp_path / "notapartition"), "--offset", "1")
    assert bad.exit_code == 2 and bad.stderr.startswith("Error: ")


def test_find_time_format_shows_the_same_instants_as_iso() -> None:
    part = str(Path(__file__).resolve().parents[2] / "fixtures" / "logdirs" / "plain-0")
    epoch = run_kdump("find", part, "--offset", "37", "--count", "3")
    iso = run_kdump("find", part, "--offset", "37", "--count", "3", "--time-format", "iso")
    assert epoch.exit_code == iso.exit_code == 0

    def as_iso(match: re.Match[str]) -> str:
        when = datetime.datetime.fromtimestamp(int(match.group(2)) / 1000, datetime.UTC)
        return f"{match.group(1)}: {when.strftime('%Y-%m-%dT%H:%M:%S.')}{when.microsecond // 1000:03d}Z"

    assert iso.stdout == re.sub(r"(CreateTime|LogAppendTime): (\d+)", as_iso, epoch.stdout)
    assert iso.stdout.count("| offset:") == 3
