"""``kdump summary`` on a terminal (compact table, --detail) versus a pipe (stable plain text)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from kdump.log.logdir import walk_partitions
from kdump.render.summary_table import partition_row, partitions_table
from kdump.render.times import TimeStyle
from kdump.verify.partition_summary import read_partition_checkpoints, summarize_segments
from kdump_testing import run_kdump, run_on_a_terminal

START = "2024-05-01T12:00:00Z"   # 1714564800000 (GNU date -u -d 2024-05-01T12:00:00Z +%s%3N)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two log dirs (as a broker with two log.dirs): topic ``b`` in the first, ``a`` in the second, and
    twelve partitions of ``a`` so partition 10 must sort after 2."""
    base = tmp_path_factory.mktemp("summary")
    for name, args in (("d1", ["--topics", "b", "--partitions", "2"]),
                       ("d2", ["--topics", "a", "--partitions", "12", "--transactional", "a"])):
        made = run_kdump("gen", str(base / name), *args, "--records", "50", "--time-step", "1000",
                         "--start-time", START, "--seed", "4")
        assert made.exit_code == 0, made.stderr
    return base


def _table(root: Path, width: int, times: TimeStyle) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    rows = [partition_row(summarize_segments(p, read_partition_checkpoints(p, {}))) for p in walk_partitions(str(root))]
    console.print(partitions_table(rows, times))
    return console.file.getvalue()


def test_table_rows_sorted_with_totals(root: Path) -> None:
    text = _table(root, 160, TimeStyle("iso"))
    rows = [line.split("│") for line in text.splitlines() if "│" in line]
    cells = [[c.strip() for c in row] for row in rows]
    firsts = [(c[0], c[1]) for c in cells if c[0]]
    expected = [("a", str(n)) for n in range(12)] + [("a total", "12")] + [("b", "0"), ("b", "1"), ("b total", "2")] \
        + [("all topics", "14")]
    assert firsts == expected
    by_name = {(c[0], c[1]): c for c in cells if c[0]}
    assert by_name[("b", "0")][4] == "0..49"            # 50 records from offset 0
    assert by_name[("b", "0")][3] == "50/5"             # gen's default: 10 records a batch
    assert by_name[("b", "0")][6] == "2024-05-01T12:00:00.000Z"   # --start-time
    assert by_name[("b", "0")][7] == "2024-05-01T12:00:49.000Z"   # 49 steps of --time-step 1000 later
    assert by_name[("a", "0")][8] == "txn"
    assert by_name[("b total", "2")][3] == "100/10" and by_name[("b total", "2")][2] == "2"   # 2 segments


def test_table_fits_the_terminal_width(root: Path) -> None:
    for width in (80, 100, 140):
        assert max(len(line) for line in _table(root, width, TimeStyle("iso")).splitlines()) <= width


def test_no_cell_wraps_on_an_80_column_terminal(root: Path) -> None:
    """14 partitions, 2 topic totals and the overall total: 17 rows of one line each, not 4 lines each."""
    text = _table(root, 80, TimeStyle("iso"))
    rows = [[c.strip() for c in line.split("│")] for line in text.splitlines() if "│" in line]
    assert len(rows) == 17 and all(row[0] for row in rows)
    header = text.splitlines()[0]
    assert "first time (UTC)" in header and "span" in header and "segs" not in header
    by_name = {(c[0], c[1]): c for c in rows}
    assert by_name[("b", "0")][2:] == ["50", "0..49", by_name[("b", "0")][4], "2024-05-01 12:00:00", "49s", ""]
    assert by_name[("a total", "12")][5:7] == ["2024-05-01 12:00:00", "49s"]
    paris = _table(root, 80, TimeStyle("iso", __import__("zoneinfo").ZoneInfo("Europe/Paris")))
    assert "times in Europe/Paris" in paris and "2024-05-01 14:00:00 │" in paris
    assert max(len(line) for line in paris.splitlines()) <= 80


def test_table_times_follow_time_format_and_tz(root: Path) -> None:
    paris = _table(root, 160, TimeStyle("iso", __import__("zoneinfo").ZoneInfo("Europe/Paris")))
    assert "2024-05-01T14:00:00.000+02:00" in paris
    assert "1714564800000" in _table(root, 160, TimeStyle("epoch"))


def _on_a_terminal(args: list[str], columns: int = 150) -> str:
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm", "NO_COLOR": "1"}
    code, _, err, seen = run_on_a_terminal(args, env, stdout=True, stderr=False)
    assert code == 0, err
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode()).replace("\r\n", "\n")


def test_terminal_gets_the_table_pipe_gets_plain_text(root: Path) -> None:
    table = _on_a_terminal(["summary", str(root)])
    assert "records/batches" in table and "all topics" in table and "Partition " not in table
    piped = subprocess.run([sys.executable, "-m", "kdump", "summary", str(root)], capture_output=True, timeout=120)
    plain = piped.stdout.decode()
    assert b"\x1b" not in piped.stdout and plain.startswith(f"Partition b-0 ({root}/d1/b-0)\n")
    assert "  batches: 5 records: 50 codecs: none magics: 2 timestamps: 1714564800000..1714564849000\n" in plain
    assert run_kdump("summary", str(root), "--plain").stdout == plain


def test_detail_on_a_terminal_is_per_segment(root: Path) -> None:
    detail = _on_a_terminal(["summary", "--detail", str(root / "d1")])
    assert "Partition b-0" in detail and "base offset" in detail and "2024-05-01T12:00:00.000Z" in detail


def test_plain_text_and_json_take_time_format(root: Path) -> None:
    plain = run_kdump("summary", str(root / "d1" / "b-0"), "--time-format", "both", "--tz", "Asia/Kolkata").stdout
    assert ("timestamps: 1714564800000 (2024-05-01T17:30:00.000+05:30)..1714564849000 "
            "(2024-05-01T17:30:49.000+05:30)") in plain
    obj = json.loads(run_kdump("summary", str(root / "d1" / "b-0"), "--json", "--time-format", "iso").stdout)
    assert obj["minTimestamp"] == 1714564800000   # JSON keeps Kafka's milliseconds
