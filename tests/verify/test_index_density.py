"""``--deep``'s offset-index density rule: no note on what a real broker or ``kdump gen`` writes at the
topic's index.interval.bytes, a note for an index denser than that interval allows (LogSegment.append,
Kafka 4.3.0: an entry only after MORE than the interval since the last one) or far sparser than a broker
writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kdump.log.logdir import read_partition_dir
from kdump.verify.segment_check import SegmentCheck
from kdump_testing import index_fixtures, run_kdump

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "fixtures" / "real-broker"
fx = index_fixtures()


def density_notes(*args: str) -> list[str]:
    result = run_kdump("verify", "--deep", "--json", *args)
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return [f"{line['file']}: {line['text']}" for line in lines if line.get("check") == "density"]


def test_no_note_on_what_gen_writes(tmp_path: Path) -> None:
    """gen's defaults once gave "3 entries for 16219 bytes of log: one per 4055 bytes, far from
    index.interval.bytes=4096" on every segment; per produce request (Kafka <= 4.0) and compressed too."""
    assert run_kdump("gen", str(tmp_path / "a")).exit_code == 0
    assert run_kdump("gen", str(tmp_path / "b"), "--topics", "x,y", "--compression", "y=zstd", "--index-rule",
                     "per-append", "--records-per-batch", "3", "--index-interval-bytes", "700").exit_code == 0
    assert density_notes(str(tmp_path / "a")) == []
    assert density_notes(str(tmp_path / "b"), "--index-interval-bytes", "700") == []
    # the same files against a larger interval than they were written with: denser than a broker writes
    notes = density_notes(str(tmp_path / "b"), "--index-interval-bytes", "4096")
    assert notes and all("a broker writes with index.interval.bytes=4096 (an entry only after more than 4096 "
                         "bytes since the last one)" in note for note in notes)


@pytest.mark.parametrize("release", ["3.9.2", "4.3.0"])
def test_no_note_on_what_a_real_broker_wrote(release: str) -> None:
    """The scenario's topics and the internal ones at the broker's log.index.interval.bytes 512, `sequence`
    at its topic's 4096 (docs/real-broker.md)."""
    logs = REAL / release / "logs"
    assert density_notes(str(logs), "--index-interval-bytes", "512") == []
    assert density_notes(str(logs / "sequence-0")) == []


def test_healthy_index_layouts_get_no_note(tmp_path: Path) -> None:
    """The leader's, a pre-4.1 follower's (an entry per fetched chunk) and the log cleaner's."""
    for case in ("healthy-leader", "healthy-follower-pre41", "healthy-cleaned", "healthy-padded"):
        part = read_partition_dir(fx.make_case(case, str(tmp_path / case)))
        found = [f for seg in part.segments for f in SegmentCheck(seg, deep=True, interval=fx.INTERVAL)]
        assert [f for f in found if f.check == "density"] == [], case


def test_an_index_far_sparser_than_a_broker_writes(tmp_path: Path) -> None:
    """2.2 MB of 100 KB batches: a broker writes an entry at least every 2 x (4096 + 1 MiB) bytes."""
    made = run_kdump("gen", str(tmp_path / "big"), "--partitions", "1", "--records", "2200", "--value-pattern",
                     "binary", "--value-size", "1000", "--records-per-batch", "100", "--segment-bytes", "100000000")
    assert made.exit_code == 0, made.stderr
    index = tmp_path / "big" / "demo-0" / "00000000000000000000.index"
    assert density_notes(str(tmp_path / "big")) == []
    index.write_bytes(index.read_bytes()[:8])     # one entry: as few as a broker may write
    assert density_notes(str(tmp_path / "big")) == []
    index.write_bytes(b"")
    log_size = (tmp_path / "big" / "demo-0" / "00000000000000000000.log").stat().st_size
    assert density_notes(str(tmp_path / "big")) == [
        f"{index}: 0 entries for {log_size} bytes of log (average batch {log_size / 22:.0f} bytes), fewer than the 1 "
        f"a broker writes at least with index.interval.bytes=4096 (an entry at least every 2 x (4096 + 1048576) "
        f"bytes: the interval and one append, twice across a restart)"]
