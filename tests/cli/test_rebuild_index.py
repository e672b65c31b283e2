"""``kdump rebuild-index``: the broker's indexes for a log, written elsewhere, never over existing files."""

from __future__ import annotations

from pathlib import Path

from kdump_testing import index_fixtures, run_kdump

fx = index_fixtures()

SEG = "00000000000000000000"


def test_rebuild_matches_a_leader_index(tmp_path: Path) -> None:
    d = Path(fx.make_case("healthy-leader", str(tmp_path)))
    out = tmp_path / "out"
    result = run_kdump("rebuild-index", str(d / f"{SEG}.log"), "--out", str(out),
                       "--index-interval-bytes", str(fx.INTERVAL))
    assert result.exit_code == 0
    assert (out / f"{SEG}.index").read_bytes() == (d / f"{SEG}.index").read_bytes()
    assert (out / f"{SEG}.timeindex").read_bytes() == (d / f"{SEG}.timeindex").read_bytes()
    b = fx.leader_indexes(fx.leader_log())
    assert result.stdout.splitlines()[0] == (f"wrote {out}/{SEG}.index ({len(b.offset_entries)} entries, "
                                             f"{8 * len(b.offset_entries)} bytes)")


def test_rebuild_replaces_a_follower_layout_with_the_leader_one(tmp_path: Path) -> None:
    d = Path(fx.make_case("healthy-follower-pre41", str(tmp_path)))
    out = tmp_path / "out"
    assert run_kdump("rebuild-index", str(d / f"{SEG}.log"), "--out", str(out), "--index-interval-bytes",
                     str(fx.INTERVAL)).exit_code == 0
    assert (out / f"{SEG}.index").read_bytes() == fx.leader_indexes(fx.leader_log()).offset_index_bytes()


def test_refuses_existing_outputs_and_in_place(tmp_path: Path) -> None:
    d = Path(fx.make_case("healthy-leader", str(tmp_path)))
    before = (d / f"{SEG}.index").read_bytes()
    in_place = run_kdump("rebuild-index", str(d / f"{SEG}.log"), "--out", str(d), "--force")
    assert in_place.exit_code == 2 and "never replaces an index in place" in in_place.stderr
    assert (d / f"{SEG}.index").read_bytes() == before
    out = tmp_path / "out"
    out.mkdir()
    (out / f"{SEG}.index").write_bytes(b"old")
    refused = run_kdump("rebuild-index", str(d / f"{SEG}.log"), "--out", str(out))
    assert refused.exit_code == 2 and "already exist" in refused.stderr
    assert (out / f"{SEG}.index").read_bytes() == b"old"
    forced = run_kdump("rebuild-index", str(d / f"{SEG}.log"), "--out", str(out), "--force")
    assert forced.exit_code == 0 and (out / f"{SEG}.index").read_bytes() != b"old"


def test_stops_where_recovery_would_truncate(tmp_path: Path) -> None:
    d = Path(fx.make_case("healthy-leader", str(tmp_path)))
    log = bytearray((d / f"{SEG}.log").read_bytes())
    batches = fx.batches_of(bytes(log))
    log[batches[10].position + 70] ^= 0xFF   # inside batch 10's records: its CRC fails
    (d / f"{SEG}.log").write_bytes(bytes(log))
    out = tmp_path / "out"
    result = run_kdump("rebuild-index", str(d / f"{SEG}.log"), "--out", str(out))
    assert result.exit_code == 0
    assert result.stderr.strip() == (f"Note: {d}/{SEG}.log: stopped where recovery would truncate the log: the "
                                     f"batch at position {batches[10].position} fails its CRC check")
    assert "from 10 batches" in result.stdout
