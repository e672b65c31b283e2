"""The error boundary with real processes: closed pipes, a full disk, a closed stdout, Ctrl-C.

These need a real file descriptor 1 and real signals, so kdump runs as ``python -m kdump``.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump_testing import default_signals, run_kdump

ROOT = Path(__file__).resolve().parents[2]
LOGDIRS = ROOT / "fixtures" / "logdirs"
SEGMENT = LOGDIRS / "plain-0" / "00000000000000000000.log"
KDUMP = [sys.executable, "-m", "kdump"]


def run(*args: str, **popen: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*KDUMP, *args], stderr=subprocess.PIPE, cwd=ROOT, timeout=120,
                          **popen)  # type: ignore[call-overload]


def test_reader_closing_the_pipe_mid_dump_ends_quietly() -> None:
    """`kdump --files ... | head -1`: the first line reached the reader, then nothing on stderr."""
    proc = subprocess.Popen([*KDUMP, "--files", str(LOGDIRS), "--print-data-log"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, preexec_fn=default_signals)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # as head does after one line; the dump is ~180 KB, more than a pipe holds
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 141
    assert first.startswith(b"Dumping ")
    assert err == b""


def test_full_disk_is_one_line_and_74() -> None:
    with open("/dev/full", "wb") as full:
        proc = run("--files", str(SEGMENT), "--deep-iteration", stdout=full)
    assert (proc.returncode, proc.stderr) == (74, b"Error: standard output: No space left on device\n")


def test_closed_stdout_is_one_line_and_74() -> None:
    proc = run("--files", str(SEGMENT), preexec_fn=lambda: os.close(1))
    assert (proc.returncode, proc.stderr) == (74, b"Error: standard output is closed\n")


def test_subcommand_output_to_a_full_disk() -> None:
    with open("/dev/full", "wb") as full:
        proc = run("verify-index", str(LOGDIRS), stdout=full)
    assert (proc.returncode, proc.stderr) == (74, b"Error: standard output: No space left on device\n")


def _interrupt_while_blocked(*args: str) -> tuple[int, bytes]:
    """Start kdump writing more than a pipe holds, let it block on the full pipe, send SIGINT."""
    proc = subprocess.Popen([*KDUMP, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            preexec_fn=default_signals)
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 60)
    assert ready, "kdump wrote nothing"
    time.sleep(0.5)  # enough for the rest of a 64 KiB pipe to fill
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


def test_sigint_is_130_with_one_line() -> None:
    assert _interrupt_while_blocked("--files", str(LOGDIRS), "--print-data-log") == (130, b"Error: interrupted\n")


def test_sigint_during_verify_index_is_not_problems_found(tmp_path: Path) -> None:
    # verify-index exits 1 for "problems found"; an interrupted run must not look like that.
    part = tmp_path / "t-0"
    part.mkdir()
    records = [Record(i, 1_700_000_000_000 + i, b"k", b"v" * 40) for i in range(2000)]
    (part / "00000000000000000000.log").write_bytes(b"".join(
        encode_batch_v2([r], base_offset=r.offset) for r in records))
    # 1500 entries that each point inside a batch: one error line each, far more than a pipe holds.
    (part / "00000000000000000000.index").write_bytes(b"".join(
        i.to_bytes(4, "big") + (1).to_bytes(4, "big") for i in range(1, 1501)))
    assert _interrupt_while_blocked("verify-index", str(tmp_path)) == (130, b"Error: interrupted\n")


def test_kdump_error_in_a_subcommand_is_one_line(tmp_path: Path) -> None:
    result = run_kdump("find", str(tmp_path), "--offset", "0")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"Error: {tmp_path}")


def test_traceback_flag_adds_the_traceback_before_the_line(tmp_path: Path) -> None:
    result = run_kdump("find", str(tmp_path), "--offset", "0", "--traceback")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-1].startswith(f"Error: {tmp_path}")


def test_bad_kafka_version_is_a_usage_error_line() -> None:
    # `kdump --files` exits 1 on a usage error, as kafka-dump-log's printUsageAndExit does.
    result = run_kdump("--files", str(SEGMENT), "--kafka-version", "1.0")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "Error: --kafka-version 1.0: kdump reproduces Kafka 2.2 and later\n"


def _unlistable(monkeypatch, root: Path) -> None:  # type: ignore[no-untyped-def]
    """``root`` cannot be listed, as a directory without read permission for a non-root user."""
    import kdump.log.logdir as logdir

    def refusing(real):  # type: ignore[no-untyped-def]
        def listing(path):  # type: ignore[no-untyped-def]
            if Path(path) == root:
                raise PermissionError(13, "Permission denied", str(path))
            return real(path)
        return listing

    # kdump lists directories with os.scandir (kdump/log/locations.py) and, here and there, os.listdir.
    monkeypatch.setattr(logdir.os, "listdir", refusing(os.listdir))
    monkeypatch.setattr(logdir.os, "scandir", refusing(os.scandir))


def test_txn_and_summary_exit_2_for_an_unreadable_path(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _unlistable(monkeypatch, tmp_path)
    for command in ("txn", "summary"):
        result = run_kdump(command, str(tmp_path))
        assert (result.exit_code, result.stdout) == (2, ""), command
        assert result.stderr == f"Error: {tmp_path}: Permission denied\n"


def test_summary_and_txn_exit_1_after_an_error_finding(tmp_path: Path) -> None:
    part = tmp_path / "t-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(encode_batch_v2([Record(0, 1, b"k", b"v")], base_offset=0)
                                                     + (1).to_bytes(8, "big") + (5).to_bytes(4, "big") + b"\x01" * 20)
    for command in ("summary", "txn"):
        result = run_kdump(command, str(part))
        assert result.exit_code == 1, command
        assert "  error: " in result.stdout and result.stderr == ""
