"""The progress bar: on a terminal's stderr only, never a byte in a pipe or with --json."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kdump.cli.progress import ProgressBar, wants_progress
from kdump_testing import run_kdump, run_on_a_terminal

COMMANDS = [["verify"], ["verify-index"], ["summary", "--plain"], ["txn"]]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("progress") / "logs"
    result = run_kdump("gen", str(out), "--topics", "a,t", "--partitions", "3", "--records", "300",
                       "--transactional", "t", "--segment-bytes", "4000", "--seed", "1")
    assert result.exit_code == 0, result.stderr
    return out


def _env() -> dict[str, str]:
    return {**os.environ, "KDUMP_PROGRESS_DELAY": "0", "COLUMNS": "100", "TERM": "xterm"}


def _run_with_stderr_on_a_terminal(args: list[str], *, stdout_too: bool = False) -> tuple[int, bytes, bytes]:
    """Exit code, stdout (b"" when it goes to the terminal too) and what the terminal received."""
    code, out, _, seen = run_on_a_terminal(args, _env(), stdout=stdout_too, stderr=True)
    return code, out, seen


@pytest.mark.parametrize("command", COMMANDS)
def test_a_terminal_sees_a_bar_and_stdout_stays_the_same(logs: Path, command: list[str]) -> None:
    piped = subprocess.run([sys.executable, "-m", "kdump", *command, str(logs), "--jobs", "1"],
                           capture_output=True, env=_env(), timeout=120)
    assert piped.stderr == b""   # no progress bytes in a pipe
    code, stdout, terminal = _run_with_stderr_on_a_terminal([*command, str(logs), "--jobs", "1"])
    assert (code, stdout) == (piped.returncode, piped.stdout)
    assert command[0].encode() in terminal and "━".encode() in terminal, terminal[:400]
    assert b"\x1b[" in terminal   # drawn and erased with terminal control sequences


@pytest.mark.parametrize("command", [["verify", "--json"], ["summary", "--json"], ["txn", "--json"]])
def test_json_never_shows_a_bar(logs: Path, command: list[str]) -> None:
    _, _, terminal = _run_with_stderr_on_a_terminal([*command, str(logs)])
    assert terminal == b""


def test_bar_waits_for_its_delay_and_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert wants_progress(False, Tty()) and not wants_progress(True, Tty()) and not wants_progress(False, io.StringIO())
    monkeypatch.setenv("KDUMP_PROGRESS_DELAY", "3600")
    stream = Tty()
    with ProgressBar(100, "work", show=True, stream=stream) as bar:
        bar.advance(40)
        bar.advance(60)
    assert bar.done == 100 and stream.getvalue() == ""   # a run shorter than the delay draws nothing
    monkeypatch.setenv("KDUMP_PROGRESS_DELAY", "0")
    stream = Tty()
    with ProgressBar(100, "work", show=True, stream=stream) as bar:
        bar.advance(40)
    assert "work" in stream.getvalue()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_dump_to_a_file_shows_a_bar_on_the_terminal(logs: Path, jobs: str) -> None:
    args = ["--files", str(logs), "--deep-iteration", "--jobs", jobs]
    piped = subprocess.run([sys.executable, "-m", "kdump", *args], capture_output=True, env=_env(), timeout=120)
    assert "━".encode() not in piped.stderr and b"\x1b[" not in piped.stderr   # Kafka's summaries only
    code, stdout, terminal = _run_with_stderr_on_a_terminal(args)
    assert (code, stdout) == (piped.returncode, piped.stdout)
    assert b"dump" in terminal and "━".encode() in terminal, terminal[:400]


def test_a_dump_to_the_terminal_has_no_bar(logs: Path) -> None:
    # stdout on the same terminal: the dump's lines are the output; no bar drawn between them.
    code, _, seen = _run_with_stderr_on_a_terminal(["--files", str(logs)], stdout_too=True)
    assert code == 0 and b"Dumping" in seen and "━".encode() not in seen


def test_recover_shows_a_bar_while_it_plans(logs: Path) -> None:
    piped = subprocess.run([sys.executable, "-m", "kdump", "recover", str(logs)], capture_output=True, env=_env(),
                           timeout=120)
    assert "━".encode() not in piped.stderr
    code, stdout, terminal = _run_with_stderr_on_a_terminal(["recover", str(logs)])
    assert (code, stdout) == (piped.returncode, piped.stdout)
    assert b"recover" in terminal and "━".encode() in terminal, terminal[:400]
    _, _, with_json = _run_with_stderr_on_a_terminal(["recover", "--json", str(logs)])
    assert "━".encode() not in with_json


def test_gen_shows_the_shared_bar_on_a_terminal_only(tmp_path: Path) -> None:
    args = ["gen", "--topics", "a", "--records", "2000", "--seed", "1"]
    piped = subprocess.run([sys.executable, "-m", "kdump", *args, str(tmp_path / "piped")], capture_output=True,
                           env=_env(), timeout=120)
    assert piped.returncode == 0 and piped.stderr == b""   # no progress bytes in a pipe
    code, stdout, terminal = _run_with_stderr_on_a_terminal([*args, str(tmp_path / "tty")])
    assert (code, stdout) == (0, piped.stdout.replace(b"piped", b"tty"))
    assert b"records" in terminal and "━".encode() in terminal, terminal[:400]
    assert b"\x1b[" in terminal   # drawn and erased, as the other commands' bars
