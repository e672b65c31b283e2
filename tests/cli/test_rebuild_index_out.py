"""``kdump rebuild-index --out``: both files or neither, whatever signal arrives; special targets refused.

The signal tests run the real command in a child process. Rebuilding one index takes milliseconds,
so the child pauses inside its write: ``open`` is wrapped to sleep once a ``.timeindex`` file is
opened for writing (after the ``.index`` one), and a ready-file says when to send the signal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kdump_testing import default_signals, index_fixtures, run_kdump

fx = index_fixtures()
SEG = "00000000000000000000"

_PAUSING_KDUMP = textwrap.dedent("""
    import builtins, os, sys, time
    real_open = builtins.open

    def pausing_open(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        if ("w" in mode or "x" in mode) and ".timeindex" in os.path.basename(str(file)):
            real_open(os.environ["KDUMP_TEST_READY"], "w").close()
            time.sleep(120)
        return handle

    builtins.open = pausing_open
    from kdump.cli.main import main
    sys.argv[0] = "kdump"
    main()
""")


def segment(tmp_path: Path) -> Path:
    return Path(fx.make_case("healthy-leader", str(tmp_path / "segs"))) / f"{SEG}.log"


def listing(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() and not p.is_symlink() else None
            for p in sorted(root.rglob("*"))}


def paused_rebuild(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    """rebuild-index in a child process, returned while it is paused writing the time index."""
    ready = tmp_path / "ready"
    env = {**os.environ, "KDUMP_TEST_READY": str(ready)}
    proc = subprocess.Popen([sys.executable, "-c", _PAUSING_KDUMP, "rebuild-index", *args], env=env,
                            preexec_fn=default_signals,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "rebuild-index never reached the time index"
        time.sleep(0.02)
    return proc


@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_while_writing_a_new_out_leaves_nothing(tmp_path: Path, signo: signal.Signals) -> None:
    outs = tmp_path / "outs"
    outs.mkdir()
    proc = paused_rebuild(tmp_path, str(segment(tmp_path)), "--out", str(outs / "out"))
    proc.send_signal(signo)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signo
    assert stderr == f"Error: interrupted by {signo.name}; nothing was written\n"
    assert list(outs.iterdir()) == []


def test_signal_while_forcing_keeps_the_old_pair(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / f"{SEG}.index").write_bytes(b"old index")
    (out / f"{SEG}.timeindex").write_bytes(b"old time index")
    proc = paused_rebuild(tmp_path, str(segment(tmp_path)), "--out", str(out), "--force")
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert listing(out) == {f"{SEG}.index": b"old index", f"{SEG}.timeindex": b"old time index"}


def test_the_next_run_removes_what_a_killed_run_left(tmp_path: Path) -> None:
    outs = tmp_path / "outs"
    outs.mkdir()
    log = segment(tmp_path)
    proc = paused_rebuild(tmp_path, str(log), "--out", str(outs / "out"))
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert list(outs.iterdir())             # SIGKILL cannot be cleaned up after
    result = run_kdump("rebuild-index", str(log), "--out", str(outs / "out"),
                       "--index-interval-bytes", str(fx.INTERVAL))
    assert result.exit_code == 0, result.stderr
    assert [p.name for p in outs.iterdir()] == ["out"]
    # the rebuilt pair is the broker's own (the fixture's indexes were written by the leader rule)
    assert listing(outs / "out") == {f"{SEG}.index": (log.parent / f"{SEG}.index").read_bytes(),
                                     f"{SEG}.timeindex": (log.parent / f"{SEG}.timeindex").read_bytes()}


def test_the_next_run_into_an_existing_out_removes_a_killed_runs_leftover(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    log = segment(tmp_path)
    proc = paused_rebuild(tmp_path, str(log), "--out", str(out))
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    result = run_kdump("rebuild-index", str(log), "--out", str(out))
    assert result.exit_code == 0, result.stderr
    assert sorted(listing(out)) == [f"{SEG}.index", f"{SEG}.timeindex"]


def test_force_replaces_only_regular_files(tmp_path: Path) -> None:
    log = segment(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere.index"
    elsewhere.write_bytes(b"not an index of this segment")
    (out / f"{SEG}.index").symlink_to(elsewhere)
    result = run_kdump("rebuild-index", str(log), "--out", str(out), "--force")
    assert result.exit_code == 2
    assert result.stderr == f"Error: {out}/{SEG}.index exists and is not a regular file; it is not replaced\n"
    assert os.path.islink(out / f"{SEG}.index") and elsewhere.read_bytes() == b"not an index of this segment"
    assert sorted(p.name for p in out.iterdir()) == [f"{SEG}.index"]

    (out / f"{SEG}.index").unlink()
    (out / f"{SEG}.index").mkdir()
    result = run_kdump("rebuild-index", str(log), "--out", str(out), "--force")
    assert result.exit_code == 2
    assert result.stderr == f"Error: {out}/{SEG}.index exists and is not a regular file; it is not replaced\n"
    assert sorted(p.name for p in out.iterdir()) == [f"{SEG}.index"]
