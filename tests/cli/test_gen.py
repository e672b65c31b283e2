"""``kdump gen`` through the CLI: output that ``kdump --files`` accepts, errors, --force, interrupts."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from kdump_testing import run_kdump
from kdump.log.writer import PartitionLog

FULL = ["--topics", "a,b,c,d,e,v0,v1,t", "--partitions", "2,v0=1,v1=1", "--records", "70",
        "--compression", "b=gzip,c=snappy,d=lz4,e=zstd,v0=gzip,v1=lz4,t=snappy",
        "--magic", "v0=0,v1=1", "--transactional", "t", "--idempotent", "e", "--abort-ratio", "0.5",
        "--headers", "2", "--tombstone-ratio", "0.1", "--null-key-ratio", "0.1", "--time-jitter", "800",
        "--segment-bytes", "3000", "--index-interval-bytes", "700", "--seed", "3"]


def partition_logs(root: Path) -> dict[Path, list[Path]]:
    return {d: sorted(d.glob("*.log")) for d in sorted(root.iterdir()) if d.is_dir()}


def test_every_generated_log_dumps_valid_with_consecutive_offsets(tmp_path: Path) -> None:
    out = tmp_path / "logs"
    result = run_kdump("gen", str(out), *FULL)
    assert result.exit_code == 0, result.stderr
    assert re.fullmatch(r"wrote 980 records in \d+ segments of 14 partitions to .*\n", result.stdout)
    for pdir, logs in partition_logs(out).items():
        assert len(logs) >= 2, pdir
        dump = run_kdump("--files", ",".join(map(str, logs)), "--deep-iteration")
        assert dump.exit_code == 0, dump.stderr
        batch_lines = [line for line in dump.stdout.splitlines() if re.match(r"(baseOffset|offset): ", line)]
        assert batch_lines and all("isvalid: true" in line for line in batch_lines)
        offsets = [int(m) for m in re.findall(r"^\| offset: (\d+)", dump.stdout, re.M)]
        assert offsets == list(range(len(offsets))), pdir
        # batch level too: each v2 batch starts right after the previous one ends
        firsts = [int(m) for m in re.findall(r"^baseOffset: (\d+) lastOffset: \d+", dump.stdout, re.M)]
        lasts = [int(m) for m in re.findall(r"^baseOffset: \d+ lastOffset: (\d+)", dump.stdout, re.M)]
        assert firsts[1:] == [x + 1 for x in lasts[:-1]]


def test_defaults_are_small_quick_and_rolled(tmp_path: Path) -> None:
    start = time.perf_counter()
    result = run_kdump("gen", str(tmp_path / "d"))
    assert time.perf_counter() - start < 1.0
    assert result.exit_code == 0
    logs = partition_logs(tmp_path / "d")
    assert len(logs) == 2 and all(len(v) >= 2 for v in logs.values())
    assert (tmp_path / "d" / "meta.properties").exists()


def test_existing_outdir_is_refused_without_force(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "keep").write_text("x")
    result = run_kdump("gen", str(out))
    assert result.exit_code == 2
    assert result.stderr == f"Error: {out} already exists (use --force to replace it)\n"
    assert [p.name for p in out.iterdir()] == ["keep"]
    result = run_kdump("gen", str(out), "--force")
    assert result.exit_code == 0
    assert not (out / "keep").exists() and (out / "demo-0").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]   # no staging leftovers


@pytest.mark.parametrize("args, message", [
    (["--magic", "0", "--compression", "zstd"], "Error: topic demo: zstd needs magic 2\n"),
    (["--compression", "nope=gzip"], "Error: --compression: 'nope' is not one of --topics (demo)\n"),
    (["--compression", "brotli"], "Error: --compression: bad value 'brotli'\n"),
    (["--magic", "1", "--transactional"], "Error: topic demo: transactional producers need magic 2\n"),
    (["--segment-bytes", "100", "--value-size", "500"], "Error: a batch of"),
    (["--key-size", "x"], "Error: --key-size: 'x' is not N or LOW-HIGH\n"),
])
def test_bad_arguments_give_one_error_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = run_kdump("gen", str(tmp_path / "o"), *args)
    assert result.exit_code == 2
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_interrupted_run_leaves_no_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}
    original = PartitionLog.append

    def interrupted(self: PartitionLog, data: bytes):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 40:
            raise KeyboardInterrupt
        return original(self, data)

    monkeypatch.setattr(PartitionLog, "append", interrupted)
    result = run_kdump("gen", str(tmp_path / "o"), *FULL)
    assert result.exit_code == 130
    assert result.stderr == "Error: interrupted; nothing was written\n"
    assert list(tmp_path.iterdir()) == []


def test_write_error_exit_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def disk_full(self: PartitionLog, data: bytes):  # type: ignore[no-untyped-def]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(PartitionLog, "append", disk_full)
    result = run_kdump("gen", str(tmp_path / "o"))
    assert result.exit_code == 1
    assert result.stderr == "Error: [Errno 28] No space left on device\n"
    assert list(tmp_path.iterdir()) == []


def test_preallocate_and_seed_via_cli(tmp_path: Path) -> None:
    args = ["--max-index-bytes", "240", "--preallocate", "--seed", "9"]
    assert run_kdump("gen", str(tmp_path / "x"), *args).exit_code == 0
    assert run_kdump("gen", str(tmp_path / "y"), *args).exit_code == 0
    for name in ("x", "y"):
        active = max((tmp_path / name / "demo-0").glob("*.timeindex"))
        assert active.stat().st_size == 240
    x = {p.relative_to(tmp_path / "x"): p.read_bytes() for p in (tmp_path / "x").rglob("*") if p.is_file()}
    y = {p.relative_to(tmp_path / "y"): p.read_bytes() for p in (tmp_path / "y").rglob("*") if p.is_file()}
    assert x == y


def test_help_lists_the_issue_options() -> None:
    result = run_kdump("gen", "--help")
    for option in ("--topics", "--partitions", "--records", "--key-size", "--value-pattern", "--records-per-batch",
                   "--batch-bytes", "--compression", "--magic", "--timestamp-type", "--start-time", "--time-step",
                   "--idempotent", "--transactional", "--abort-ratio", "--segment-bytes", "--segment-ms",
                   "--index-interval-bytes", "--preallocate", "--seed", "--force"):
        assert option in result.stdout
