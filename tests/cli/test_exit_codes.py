"""docs/exit-codes.md's tables, walked: every (command, code) cell is a case that must give that code.

The tables are parsed from docs/exit-codes.md, so a row added there without a case here (or a case whose
row was removed) fails, and so does a command that exits with anything else.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kdump.cli.exit_codes import ExitCode
from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump_testing import run_kdump

sys.path.insert(0, str(Path(__file__).parent.parent / "spark"))

from logbuild import corrupt_byte, skip_reason, start_spark, write_partition
from tiered_testing import build_tiered

ROOT = Path(__file__).resolve().parents[2]
LOGDIRS = ROOT / "fixtures" / "logdirs"
PLAIN = LOGDIRS / "plain-0"
SEGMENT = PLAIN / "00000000000000000000.log"
T0 = 1_700_000_000_000


def _tables() -> list[list[list[str]]]:
    section = (ROOT / "docs" / "exit-codes.md").read_text()
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*section.splitlines(), ""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(re.fullmatch(r"-+", c) for c in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def command_cells() -> list[tuple[str, int]]:
    """(command, code) for every non-empty cell of docs/exit-codes.md's per-command table."""
    header, *rows = _tables()[0]
    codes = [int(c) for c in header[1:]]
    return [(row[0].strip("`"), code) for row in rows for code, cell in zip(codes, row[1:], strict=True) if cell]


def common_codes() -> list[int]:
    """The codes docs/exit-codes.md says every command can end with."""
    header, *rows = _tables()[1]
    assert header == ["code", "meaning"]
    return [int(row[0]) for row in rows]


def commands() -> list[str]:
    return list(dict.fromkeys(command for command, _ in command_cells()))


# --- inputs ------------------------------------------------------------------------------------------------

def _corrupt_partition(root: Path) -> Path:
    """A partition whose only segment has a batch, then a record size below Kafka's minimum (14)."""
    part = root / "t-0"
    part.mkdir(parents=True)
    good = encode_batch_v2([Record(0, T0, b"k", b"v")], base_offset=0)
    (part / "00000000000000000000.log").write_bytes(good + (1).to_bytes(8, "big") + (5).to_bytes(4, "big")
                                                     + b"\x01" * 20)
    return part


def _hanging_partition(root: Path) -> Path:
    """A transactional batch with no COMMIT/ABORT marker after it."""
    part = root / "t-0"
    part.mkdir(parents=True)
    batch = encode_batch_v2([Record(0, T0, b"k", b"v")], base_offset=0, producer_id=7, producer_epoch=0,
                            base_sequence=0, is_transactional=True)
    (part / "00000000000000000000.log").write_bytes(batch)
    return part


def _spark_logs(root: Path) -> Path:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    start_spark()
    logs = root / "logs"
    write_partition(logs, "orders", 0, segments=1, batches=2)
    return logs


def _code(*args: str) -> int:
    return run_kdump(*args).exit_code


def _groups_dir(root: Path, damage: str = "") -> Path:
    """A log dir with a __consumer_offsets topic (kdump gen --group-keys: commits at offset 60 of demo-0/1).
    ``log-start``: demo-0's log start moved past the commits (a group resets); ``records``: a clean shutdown
    and a coordinator batch whose records cannot be decoded (the replay stops there)."""
    logs = root / "logs"
    assert _code("gen", str(logs), "--topics", "demo,__consumer_offsets", "--group-keys", "5") == 0
    if damage == "log-start":
        (logs / "log-start-offset-checkpoint").write_text("0\n2\ndemo 0 100\ndemo 1 0\n")
    elif damage == "records":
        (logs / ".kafka_cleanshutdown").touch()
        log = sorted((logs / "__consumer_offsets-0").glob("*.log"))[0]
        data = bytearray(log.read_bytes())
        data[57:61] = (1000).to_bytes(4, "big")   # the first batch's record count, past its records
        log.write_bytes(bytes(data))
    return logs


# (command, code) -> a run that must exit with that code.
CASES: dict[tuple[str, int], Callable[[Path], int]] = {
    ("kdump --files", 0): lambda tmp: _code("--files", str(SEGMENT)),
    ("kdump --files", 1): lambda tmp: _code("--files", f"{tmp / 'missing.log'},{SEGMENT}"),
    ("kdump verify-index", 0): lambda tmp: _code("verify-index", str(PLAIN)),
    ("kdump verify-index", 1): lambda tmp: _code(
        "verify-index", str(ROOT / "fixtures" / "corrupt-index" / "bad-position-not-batch-0")),
    ("kdump verify-index", 2): lambda tmp: _code("verify-index", str(tmp / "missing")),
    ("kdump verify", 0): lambda tmp: _code("verify", str(PLAIN)),
    ("kdump verify", 1): lambda tmp: _code("verify", str(_corrupt_partition(tmp))),
    ("kdump verify", 2): lambda tmp: _code("verify", str(tmp)),          # an empty directory: nothing checked
    ("kdump recover", 0): lambda tmp: _code("recover", str(PLAIN)),
    ("kdump recover", 1): lambda tmp: _code("recover", str(_corrupt_partition(tmp))),
    ("kdump recover", 2): lambda tmp: _code("recover", str(tmp / "missing")),
    ("kdump groups", 0): lambda tmp: _code("groups", str(_groups_dir(tmp))),
    ("kdump groups", 1): lambda tmp: _code("groups", str(_groups_dir(tmp, "records"))),
    ("kdump groups", 2): lambda tmp: _code("groups", str(tmp)),          # no __consumer_offsets partition
    ("kdump groups", 3): lambda tmp: _code("groups", str(_groups_dir(tmp, "log-start"))),
    ("kdump replicas", 0): lambda tmp: _code("replicas", str(_cluster(tmp, "agree"))),
    ("kdump replicas", 1): lambda tmp: _code("replicas", str(_cluster(tmp, "agree", broken=True))),
    ("kdump replicas", 2): lambda tmp: _code("replicas", str(tmp)),     # an empty directory: no replica
    ("kdump replicas", 3): lambda tmp: _code("replicas", str(_cluster(tmp, "unclean"))),
    ("kdump find", 0): lambda tmp: _code("find", str(PLAIN), "--offset", "37"),
    ("kdump find", 1): lambda tmp: _code("find", str(PLAIN), "--offset", "1000000"),
    ("kdump find", 2): lambda tmp: _code("find", str(tmp), "--offset", "0"),
    ("kdump summary", 0): lambda tmp: _code("summary", str(PLAIN)),
    ("kdump summary", 1): lambda tmp: _code("summary", str(_corrupt_partition(tmp))),
    ("kdump summary", 2): lambda tmp: _code("summary", str(tmp / "missing")),
    ("kdump txn", 0): lambda tmp: _code("txn", str(PLAIN)),
    ("kdump txn", 1): lambda tmp: _code("txn", str(_corrupt_partition(tmp))),
    ("kdump txn", 2): lambda tmp: _code("txn", str(tmp / "missing")),
    ("kdump txn", 3): lambda tmp: _code("txn", str(_hanging_partition(tmp))),
    ("kdump tiered", 0): lambda tmp: _code("tiered", *_tiered(tmp)),
    ("kdump tiered", 1): lambda tmp: _code("tiered", *_tiered(tmp, damaged=True)),
    ("kdump tiered", 2): lambda tmp: _code("tiered", str(tmp / "missing"), "--remote", str(tmp)),
    ("kdump rebuild-index", 0): lambda tmp: _code("rebuild-index", str(SEGMENT), "--out", str(tmp / "out")),
    # A batch past Integer.MAX_VALUE above the base offset: no index can hold it, so nothing is written.
    ("kdump rebuild-index", 1): lambda tmp: _code("rebuild-index", _bytes_file(
        tmp, "00000000000000000000.log", encode_batch_v2([Record(3_000_000_000, 0, b"k", b"v")],
                                                         base_offset=3_000_000_000)), "--out", str(tmp / "out")),
    ("kdump rebuild-index", 2): lambda tmp: _code("rebuild-index", str(PLAIN / "00000000000000000000.index"),
                                                  "--out", str(tmp)),
    ("kdump gen", 0): lambda tmp: _code("gen", str(tmp / "logs"), "--records", "5"),
    ("kdump gen", 1): lambda tmp: _code("gen", "/proc/kdump-cannot-write-here", "--records", "5"),
    ("kdump gen", 2): lambda tmp: _code("gen", str(Path(_bytes_file(tmp, "notes", b"x")).parent),
                                        "--records", "5"),  # holds someone's files, no --force
    ("kdump partition-for", 0): lambda tmp: _code("partition-for", "--group", "g"),
    ("kdump partition-for", 2): lambda tmp: _code("partition-for"),
    ("kdump completion", 0): lambda tmp: _code("completion", "bash"),
    ("kdump completion", 2): lambda tmp: _code("completion", "ksh"),
    ("kdump export", 0): lambda tmp: _code("export", str(PLAIN), "--to", str(tmp / "out.parquet")),
    ("kdump export", 1): lambda tmp: _code("export", str(PLAIN), "--to", "/proc/kdump-cannot-write-here"),
    ("kdump export", 2): lambda tmp: _code("export", str(PLAIN), "--to", str(tmp)),     # exists, no --force
    ("kdump spark verify", 0): lambda tmp: _code("spark", "verify", str(_spark_logs(tmp)), "--master", "local[2]"),
    ("kdump spark verify", 1): lambda tmp: _spark_verify_corrupt(tmp),
    ("kdump spark verify", 2): lambda tmp: _code("spark", "verify", str(tmp)),
    ("kdump spark export", 0): lambda tmp: _code("spark", "export", str(_spark_logs(tmp)), "--to", str(tmp / "out")),
    ("kdump spark export", 2): lambda tmp: _code("spark", "export", str(tmp), "--to", str(tmp / "out")),
    ("kdump spark recover", 0): lambda tmp: _code("spark", "recover", str(PLAIN), "--master", "local[2]"),
    ("kdump spark recover", 1): lambda tmp: _code("spark", "recover", str(_corrupt_partition(tmp)),
                                                  "--master", "local[2]"),
    ("kdump spark recover", 2): lambda tmp: _code("spark", "recover", str(tmp / "missing")),
    ("kdump spark replicas", 0): lambda tmp: _code("spark", "replicas", str(_cluster(tmp, "agree")),
                                                   "--master", "local[2]"),
    ("kdump spark replicas", 1): lambda tmp: _code("spark", "replicas", str(_cluster(tmp, "agree", broken=True)),
                                                   "--master", "local[2]"),
    ("kdump spark replicas", 2): lambda tmp: _code("spark", "replicas", str(tmp / "missing")),
    ("kdump spark replicas", 3): lambda tmp: _code("spark", "replicas", str(_cluster(tmp, "unclean")),
                                                   "--master", "local[2]"),
}


def _tiered(tmp: Path, damaged: bool = False) -> list[str]:
    tiered = build_tiered(tmp)
    if damaged:
        tiered.remote_log(1).unlink()
    return [str(tiered.log_dir), "--remote", str(tiered.remote_root)]


def _cluster(tmp: Path, scenario: str, *, broken: bool = False) -> Path:
    from kdump.gen.cluster_generator import ClusterGenSpec, generate_cluster

    generate_cluster(str(tmp / scenario), ClusterGenSpec("t", 3, 1, scenario, 40, value_bytes=8))
    if broken:   # a size field of 5 (below Kafka's 14) where broker 1's second batch starts
        log = tmp / scenario / "broker-1" / "t-0" / "00000000000000000000.log"
        data = bytearray(log.read_bytes())
        second = 12 + int.from_bytes(data[8:12], "big")
        data[second + 8:second + 12] = (5).to_bytes(4, "big")
        log.write_bytes(bytes(data))
    return tmp / scenario


def _bytes_file(tmp: Path, name: str, data: bytes) -> str:
    path = tmp / name
    path.write_bytes(data)
    return str(path)


def _spark_verify_corrupt(tmp: Path) -> int:
    logs = _spark_logs(tmp)
    corrupt_byte(sorted((logs / "orders-0").glob("*.log"))[0], 100)
    return _code("spark", "verify", str(logs), "--master", "local[2]")


def test_every_readme_cell_has_a_case_and_every_case_a_cell() -> None:
    assert sorted(CASES) == sorted(command_cells())


def test_the_tables_use_the_exit_code_enum() -> None:
    values = {int(code) for code in ExitCode}
    assert {code for _, code in command_cells()} | set(common_codes()) == values


def _cells_with_marks() -> list[object]:
    """Cases that start Spark carry the ``spark`` marker, as the other Spark tests do."""
    return [pytest.param(command, code, marks=pytest.mark.spark)
            if command.startswith("kdump spark") and code != ExitCode.USAGE else (command, code)
            for command, code in command_cells()]


@pytest.mark.parametrize(("command", "code"), _cells_with_marks())
def test_command_gives_the_documented_code(command: str, code: int, tmp_path: Path) -> None:
    assert CASES[(command, code)](tmp_path) == code


# --- codes every command shares ------------------------------------------------------------------------

# README command -> (arguments that reach its callback, the callable to replace with a failing one)
def _callback_target(command: str) -> tuple[object, str]:
    from kdump.cli import main

    if command == "kdump --files":
        return main, "dump_files"
    group = main.cli
    for word in command.split()[1:]:
        group = group.get_command(None, word)  # type: ignore[attr-defined,arg-type]
    return group, "callback"


ARGS = {
    "kdump --files": ["--files", str(SEGMENT)],
    "kdump verify-index": ["verify-index", str(PLAIN)],
    "kdump verify": ["verify", str(PLAIN)],
    "kdump recover": ["recover", str(PLAIN)],
    "kdump find": ["find", str(PLAIN), "--offset", "1"],
    "kdump summary": ["summary", str(PLAIN)],
    "kdump txn": ["txn", str(PLAIN)],
    "kdump tiered": ["tiered", str(PLAIN), "--remote", str(PLAIN)],
    "kdump rebuild-index": ["rebuild-index", str(SEGMENT), "--out", "unused"],
    "kdump gen": ["gen", "unused"],
    "kdump partition-for": ["partition-for", "--group", "g"],
    "kdump completion": ["completion", "bash"],
    "kdump spark verify": ["spark", "verify", "unused"],
    "kdump spark export": ["spark", "export", "unused", "--to", "unused"],
    "kdump export": ["export", "unused", "--to", "unused"],
    "kdump spark recover": ["spark", "recover", str(PLAIN)],
    "kdump replicas": ["replicas", str(PLAIN)],
    "kdump groups": ["groups", str(PLAIN)],
    "kdump spark replicas": ["spark", "replicas", str(PLAIN)],
}


def _raising(exc: BaseException) -> Callable[..., None]:
    def fail(*_args: object, **_kwargs: object) -> None:
        raise exc

    return fail


def _in_process(command: str, exc: BaseException, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    owner, attr = _callback_target(command)
    monkeypatch.setattr(owner, attr, _raising(exc))
    result = run_kdump(*ARGS[command])
    return result.exit_code, result.stderr


def _subprocess_help(command: str, **popen: object) -> tuple[int, bytes]:
    import subprocess

    words = command.split()[1:]
    args = [w for w in words if not w.startswith("--")] + ["--help"]
    proc = subprocess.run([sys.executable, "-m", "kdump", *args], stderr=subprocess.PIPE, cwd=ROOT,
                          timeout=60, **popen)  # type: ignore[call-overload]
    return proc.returncode, proc.stderr


def _internal(command: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    code, err = _in_process(command, RuntimeError("boom"), monkeypatch)
    assert err == "Error: internal error RuntimeError: boom (rerun with --traceback and report it)\n"
    return code


def _output(command: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    with open("/dev/full", "wb") as full:
        code, err = _subprocess_help(command, stdout=full)
    assert err == b"Error: standard output: No space left on device\n"
    return code


def _interrupted(command: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    code, err = _in_process(command, KeyboardInterrupt(), monkeypatch)
    assert err == "Error: interrupted\n"
    return code


def _broken_pipe(command: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will ever read: the first write fails with EPIPE
    try:
        code, err = _subprocess_help(command, stdout=write_end)
    finally:
        os.close(write_end)
    assert err == b""
    return code


COMMON_CASES: dict[int, Callable[[str, Path, pytest.MonkeyPatch], int]] = {
    ExitCode.INTERNAL: _internal,
    ExitCode.OUTPUT: _output,
    ExitCode.INTERRUPTED: _interrupted,
    ExitCode.BROKEN_PIPE: _broken_pipe,
}


def test_every_common_code_has_a_case() -> None:
    assert sorted(COMMON_CASES) == sorted(common_codes())


@pytest.mark.parametrize("code", common_codes())
@pytest.mark.parametrize("command", commands())
def test_every_command_gives_the_common_codes(command: str, code: int, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    assert sorted(ARGS) == sorted(commands())
    assert COMMON_CASES[code](command, tmp_path, monkeypatch) == code
