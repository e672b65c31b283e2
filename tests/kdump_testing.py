"""Helpers shared by the tests: run the CLI in-process, load the index-fixture builder.

A module with its own name (not conftest) so imports do not depend on which conftest.py pytest
loaded last.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import pty
import signal
import struct
import subprocess
import sys
import tempfile
import termios
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


def run_kdump(*args: str, cwd: str | os.PathLike[str] | None = None) -> CliResult:
    from kdump.cli.main import cli

    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)
    return CliResult(result.exit_code, result.stdout, result.stderr)


_SIGNALS_TESTS_SEND = (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT)


def default_signals() -> None:
    """``preexec_fn`` for a child a test signals: the default disposition and an unblocked mask for
    every signal tests send. A suite started under ``nohup``, in a background job or by a runner that
    ignores SIGINT passes those dispositions on through exec; the child must not inherit them."""
    for signo in _SIGNALS_TESTS_SEND:
        signal.signal(signo, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS_TESTS_SEND)


_INDEX_FIXTURE_MAKER = Path(__file__).resolve().parents[1] / "fixtures" / "corrupt-index" / "make_fixtures.py"


def index_fixtures():  # type: ignore[no-untyped-def]
    """fixtures/corrupt-index/make_fixtures.py as a module (it builds the index cases), loaded once."""
    if "kdump_index_fixtures" not in sys.modules:
        spec = importlib.util.spec_from_file_location("kdump_index_fixtures", _INDEX_FIXTURE_MAKER)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules["kdump_index_fixtures"] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules["kdump_index_fixtures"]


def run_on_a_terminal(args: list[str], env: dict[str, str], *, stdout: bool, stderr: bool,
                      columns: int | None = None) -> tuple[int, bytes, bytes, bytes]:
    """`python -m kdump args` with stdout and/or stderr on a pseudo-terminal (the others go to files):
    exit code, stdout and stderr (b"" for a stream on the terminal), and what the terminal received.

    ``columns``: the terminal's width as the kernel reports it (TIOCSWINSZ), stdin on it too, as in a
    shell on that terminal (give an ``env`` without COLUMNS, which would take precedence)."""
    controller, terminal = pty.openpty()
    if columns is not None:
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "kdump", *args], stdout=terminal if stdout else out,
                                stderr=terminal if stderr else err, env=env,
                                stdin=terminal if columns is not None else None)
        os.close(terminal)
        seen = b""
        while True:   # read while it writes: a full terminal buffer would block it
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        os.close(controller)
        code = proc.wait(timeout=120)
        out.seek(0)
        err.seek(0)
        return code, out.read(), err.read(), seen


def consumer_view(pdir: Path) -> list[tuple]:
    """(offset, key, value) a read_committed consumer returns from a partition dir's segments, replayed from
    the markers with kafka-python (a test-only oracle)."""
    from kafka.record import MemoryRecords

    out: list[tuple] = []
    open_txns: dict[int, list[tuple]] = {}
    for log in sorted(pdir.glob("*.log")):
        records = MemoryRecords(log.read_bytes())
        while (batch := records.next_batch()) is not None:
            rows = [(r.offset, r.key, r.value) for r in batch]
            if batch.is_control_batch:
                _, kind = struct.unpack(">hh", rows[0][1])
                held = open_txns.pop(batch.producer_id, [])
                if kind == 1:                                  # COMMIT (0 is ABORT)
                    out.extend(held)
            elif batch.is_transactional:
                open_txns.setdefault(batch.producer_id, []).extend(rows)
            else:
                out.extend(rows)
    assert not open_txns, "the oracle needs every transaction closed"
    return sorted(out)
