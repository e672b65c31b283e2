"""``kdump.dump.dump_files`` is the dump without click: same text as ``kdump --files``, same summaries."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from kdump.dump import DumpOptions, dump_files
from kdump.render.dialect import parse_kafka_version
from kdump.render.log_text import RecordTextOptions
from tests.kdump_testing import run_kdump

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOGDIRS = os.path.join(ROOT, "fixtures", "logdirs")


@pytest.mark.parametrize(("args", "options"), [
    (["--print-data-log"], DumpOptions(deep=True, records=RecordTextOptions(print_contents=True))),
    (["--deep-iteration", "--kafka-version", "3.9"], DumpOptions(deep=True, dialect=parse_kafka_version("3.9"))),
    (["--json", "--print-data-log"], DumpOptions(deep=True, json=True, records=RecordTextOptions(print_contents=True))),
    ([], DumpOptions()),
])
def test_library_writes_what_the_cli_writes(args: list[str], options: DumpOptions) -> None:
    paths = [os.path.join(LOGDIRS, "txn-1"), os.path.join(LOGDIRS, "plain-0", "00000000000000000000.index"),
             os.path.join(LOGDIRS, "missing.log")]
    cli = run_kdump("--files", ",".join(paths), *args)
    out, err = io.StringIO(), io.StringIO()
    result = dump_files(paths, options, out=out, err=err)
    assert out.getvalue() == cli.stdout and cli.stdout.count("\n") > 10
    assert err.getvalue() == cli.stderr
    assert result.failed == [paths[-1]] and cli.exit_code == 1 and not result.ok
    assert result.files[0] == os.path.join(LOGDIRS, "txn-1", "00000000000000000000.log")


def test_library_needs_no_click() -> None:
    partition = os.path.join(LOGDIRS, "plain-0")
    code = ("import sys; from kdump.dump import dump_files; r = dump_files([sys.argv[1]]); "
            "print(r.ok, 'click' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, partition], capture_output=True, text=True, check=True)
    assert done.stdout == run_kdump("--files", partition).stdout + "True False\n"
