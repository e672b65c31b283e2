"""What a newcomer meets in the first hour: a mistyped path, --traceback where the crash hint says,
Tab completion of values, honest help texts, and Ctrl-C at any moment (one line, exit 130)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from kdump.cli import boundary
from kdump_testing import default_signals, run_kdump

ROOT = Path(__file__).resolve().parents[2]
LOGDIRS = ROOT / "fixtures" / "logdirs"


def test_a_path_that_does_not_exist_fails_the_run(tmp_path: Path) -> None:
    """Kafka 4.3 prints `Ignoring unknown file typo-dir` and exits 0: a typo would pass a CI step."""
    typo = tmp_path / "typo-dir"
    result = run_kdump("--files", str(typo))
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, f"Dumping {typo}\n", f"Error: {typo}: No such file or directory\n")
    # A file that exists but has no handler is still ignored, as Kafka does.
    (tmp_path / "notes").write_text("x")
    kept = run_kdump("--files", str(tmp_path / "notes"))
    assert (kept.exit_code, kept.stderr) == (0, f"Ignoring unknown file {tmp_path / 'notes'}\n")


@pytest.mark.parametrize("command", [["summary"], ["txn"], ["recover"], ["verify"], ["verify-index"],
                                     ["find", "--offset", "0"]])
def test_traceback_is_accepted_after_every_subcommand(command: list[str], tmp_path: Path) -> None:
    plain = run_kdump(*command, str(tmp_path))
    traced = run_kdump(*command, str(tmp_path), "--traceback")
    assert "No such option" not in traced.stderr
    assert traced.exit_code == plain.exit_code


def test_the_crash_hints_traceback_works_where_the_crash_was(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    from kdump.cli.main import load_command

    summary = load_command("summary")
    assert summary is not None

    def crash(**_: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(summary, "callback", crash)
    first = run_kdump("summary", str(tmp_path))
    assert (first.exit_code, first.stderr) == (
        70, "Error: internal error RuntimeError: a bug (rerun with --traceback and report it)\n")
    again = run_kdump("summary", str(tmp_path), "--traceback")
    assert again.exit_code == 70 and again.stderr.startswith("Traceback (most recent call last):")
    assert again.stderr.endswith(first.stderr)


def test_every_command_lists_traceback_in_its_help() -> None:
    from kdump.cli.main import SUBCOMMANDS, cli, load_command

    ctx = click.Context(cli)
    for name in SUBCOMMANDS:
        command = load_command(name)
        assert command is not None
        commands = [command]
        if isinstance(command, click.Group):
            commands += [command.get_command(ctx, sub) for sub in command.list_commands(ctx)]  # type: ignore[misc]
        for each in commands:
            assert each is not None and any("--traceback" in p.opts for p in each.params), each.name


def _complete(words: str) -> list[str]:
    env = {**os.environ, "_KDUMP_COMPLETE": "bash_complete", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split(" ")) - 1)}
    done = subprocess.run([sys.executable, "-m", "kdump"], env=env, capture_output=True, text=True, timeout=120,
                          check=True)
    return [line.split(",", 1)[1] for line in done.stdout.splitlines()]


def test_completion_offers_kafka_versions_and_decoders() -> None:
    assert _complete("kdump --kafka-version 3.") == [f"3.{minor}" for minor in range(10)]
    versions = _complete("kdump --kafka-version ")
    assert versions[0] == "2.2" and "2.8" in versions and "4.0" in versions and "2.9" not in versions
    assert set(_complete("kdump --value-decoder-class ")) >= {"StringDecoder", "LongDecoder", "hex", "json",
                                                               "schema-registry",
                                                               "org.apache.kafka.tools.api.StringDecoder"}
    assert _complete("kdump find --kafka-version 4.") == ["4.0", "4.1", "4.2", "4.3", "4.4"]


def test_help_says_what_files_takes() -> None:
    text = " ".join(run_kdump("--help").stdout.split())
    assert "data and index log files" not in text
    assert "partition directories or whole log.dirs" in text


# --- Ctrl-C at any moment -------------------------------------------------------------------------


# kdump with a Ctrl-C delivered the moment a given module starts to be imported.
_INTERRUPTED_AT_IMPORT = """
import os, signal, sys
target = sys.argv[1]
class Interrupting:
    def find_spec(self, name, path=None, target_module=None):
        if name == target:
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, Interrupting())
sys.argv = ["kdump", *sys.argv[2:]]
from kdump.cli.entry import main
main()
"""


@pytest.mark.parametrize("module, args", [
    ("click", ["--help"]), ("kdump.cli.options", ["--help"]), ("kdump.cli.boundary", ["summary", "."]),
    ("kdump.format.crc", ["--version"]), ("kdump.dump", ["--files", str(LOGDIRS / "plain-0")]),
    ("kdump.cli.verify_index", ["verify-index", str(LOGDIRS / "plain-0")])])
def test_sigint_while_kdump_imports_is_one_line_never_a_traceback(module: str, args: list[str]) -> None:
    """Ctrl-C in a command's first ~100 ms, while its modules load (it printed a KeyboardInterrupt
    traceback 30 times out of 30)."""
    done = subprocess.run([sys.executable, "-c", _INTERRUPTED_AT_IMPORT, module, *args], cwd=ROOT, timeout=120,
                          capture_output=True, preexec_fn=default_signals)
    assert (done.returncode, done.stderr) == (130, b"Error: interrupted\n"), done.stderr.decode()


class _FlushInterrupted(io.StringIO):
    """A stdout whose next flush is interrupted by Ctrl-C (the run's last flush, at teardown)."""

    def __init__(self) -> None:
        super().__init__()
        self.interrupts = 1

    def flush(self) -> None:
        if self.interrupts:
            self.interrupts -= 1
            raise KeyboardInterrupt


@pytest.mark.parametrize("command_code", [0, 130])
def test_sigint_during_teardown_keeps_one_error_line(command_code: int, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    def command() -> int:
        if command_code:
            boundary._STATE.interrupt_reported = True     # the command wrote its own line (ErrorBoundary)
            sys.stderr.write("Error: interrupted\n")
        return command_code

    monkeypatch.setattr(sys, "stdout", _FlushInterrupted())
    assert boundary.run_standalone(command) == 130
    assert capsys.readouterr().err == "Error: interrupted\n"
