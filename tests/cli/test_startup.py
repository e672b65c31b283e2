"""Each command imports only what it uses: start-up is most of a small run's time (a CI loop calls
``kdump verify-index`` once per segment). Asserted as the modules a real process loaded, never as a
time (benchmarks/bench_startup.py measures the times)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from kdump.cli.main import SUBCOMMANDS, cli, load_command

ROOT = Path(__file__).resolve().parents[2]
PLAIN = ROOT / "fixtures" / "logdirs" / "plain-0"

# The process's modules when it exits (a module kdump.format.codecs set up to load on first use and
# that nothing used is not loaded: importlib.util.LazyLoader's placeholder).
_PROBE = """
import atexit, sys
path = sys.argv[1]
def report():
    with open(path, "w") as out:
        out.write("\\n".join(name for name, module in list(sys.modules.items())
                              if type(module).__name__ != "_LazyModule"))
atexit.register(report)
sys.argv = ["kdump", *sys.argv[2:]]
from kdump.cli.entry import main
main()
"""

# Never needed to start: metadata lookups, process pools, codecs, Arrow and Spark, Rich's tables.
NEVER_AT_START = {"importlib.metadata", "multiprocessing", "concurrent.futures", "cramjam", "zstandard",
                  "lz4.frame", "pyarrow", "pyspark", "rich", "kdump.cli.spark", "kdump.spark", "kdump.arrow"}
# kdump.cli.completion also holds the option-value completers every command's options name (small).
SUBCOMMAND_MODULES = {entry[0].split(":")[0] if isinstance(entry, tuple) else entry.split(":")[0]
                      for entry in SUBCOMMANDS.values()} - {"kdump.cli.completion"}
LIBRARY = {"kdump.dump", "kdump.verify", "kdump.broker", "kdump.log.batches", "kdump.format.records"}


def loaded(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> set[str]:
    report = tmp_path / "modules"
    subprocess.run([sys.executable, "-c", _PROBE, str(report), *args], cwd=ROOT, timeout=120,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    return set(report.read_text().split())


def _under(modules: set[str], packages: set[str]) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)}


def test_version_help_and_completion_import_no_subcommand_and_no_library(tmp_path: Path) -> None:
    for args, env in ((["--help"], None), (["verify", "--help"], None),
                      ([], {"_KDUMP_COMPLETE": "bash_complete", "COMP_WORDS": "kdump ", "COMP_CWORD": "1"}),
                      ([], {"_KDUMP_COMPLETE": "bash_complete", "COMP_WORDS": "kdump --kafka-version ",
                            "COMP_CWORD": "2"})):
        modules = loaded(tmp_path, *args, env=env)
        assert "kdump.cli.main" in modules, args
        # verify shares verify-index's options and driver, and checks tiered storage too
        others = SUBCOMMAND_MODULES - ({"kdump.cli.verify", "kdump.cli.verify_index", "kdump.cli.tiered"}
                                       if args[:1] == ["verify"] else set())
        assert not _under(modules, NEVER_AT_START | others), (args, env)
        if args != ["verify", "--help"]:
            assert not _under(modules, LIBRARY | {"kdump.format"}), (args, env)
    # --version names the record decoder and line formatter in use by loading the extensions as those
    # modules do, without importing them, and no click (a lone --version is answered before the command
    # line is built) nor typing.
    modules = loaded(tmp_path, "--version")
    assert not _under(modules, NEVER_AT_START | SUBCOMMAND_MODULES | {"kdump.dump", "kdump.verify", "kdump.broker",
                                                                      "click", "kdump.cli.main", "typing",
                                                                      "kdump.format.records", "kdump.render.log_text"})
    assert {"kdump.format._v2records", "kdump.render._v2lines", "kdump.format.crc"} <= modules


def test_verify_index_of_one_partition_loads_neither_the_dump_nor_codecs(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "verify-index", "--jobs", "1", str(PLAIN))
    assert "kdump.cli.verify_index" in modules
    assert not _under(modules, NEVER_AT_START | (SUBCOMMAND_MODULES - {"kdump.cli.verify_index"}) | {"kdump.dump"})


def test_a_shallow_dump_loads_no_codec_and_no_checker(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "--files", str(PLAIN / "00000000000000000000.log"))
    assert "kdump.dump" in modules
    assert not _under(modules, NEVER_AT_START | SUBCOMMAND_MODULES | {"kdump.verify", "kdump.broker"})
    # Nor what only other files, directories, filters, workers or --json need (a CI loop dumps one segment
    # at a time).
    assert not _under(modules, {"kdump.dump.extra", "kdump.format.checkpoint", "kdump.log.logdir",
                                "kdump.log.lookup", "kdump.log.remote_layout", "kdump.dump.tape", "tempfile",
                                "zoneinfo", "kdump.render.log_json", "json", "base64"})


def test_the_table_names_each_command_by_its_own_name() -> None:
    ctx = click.Context(cli)
    for name in SUBCOMMANDS:
        command = load_command(name)
        assert command is not None and command.name == name
        assert cli.get_command(ctx, name) is command


@pytest.mark.parametrize("word, suggestion", [("verfy", "'verify'"), ("verify-idx", "'verify-index' or 'verify'"),
                                              ("sumary", "'summary'"),
                                              ("recovr", "'recover'")])
def test_a_misspelt_subcommand_gets_a_suggestion(word: str, suggestion: str) -> None:
    from kdump_testing import run_kdump

    result = run_kdump(word, "x")
    assert result.exit_code == 2   # click's usage error, as before
    assert f"No such command '{word}'. Did you mean {suggestion}?" in result.stderr


# The collector's state when the command's work starts (kdump.dump.dump_files), and when the process ends.
_COLLECTOR = """
import atexit, gc, sys
sys.argv = ["kdump", *sys.argv[1:]]
import kdump.dump as library
real = library.dump_files
def spy(*args, **kwargs):
    print("work:", gc.isenabled(), gc.get_freeze_count() > 0, file=sys.stderr)
    return real(*args, **kwargs)
library.dump_files = spy
from kdump.cli.entry import main
try:
    main()
finally:
    print("end:", gc.isenabled(), file=sys.stderr)
"""


@pytest.mark.parametrize("args", [["--files", str(PLAIN / "00000000000000000000.log")], ["--help"], ["--version"],
                                  ["no-such-command"]])
def test_the_collector_is_off_only_while_modules_import(args: list[str]) -> None:
    # kdump.cli.entry holds the cyclic GC off during start-up; the command's work runs with it on (a long
    # run's memory must not depend on reference counting alone), and every way out turns it back on.
    done = subprocess.run([sys.executable, "-c", _COLLECTOR, *args], cwd=ROOT, timeout=120, capture_output=True,
                          text=True)
    lines = [line for line in done.stderr.splitlines() if line.startswith(("work:", "end:"))]
    assert lines == (["work: True True"] if args[0] == "--files" else []) + ["end: True"], done.stderr
