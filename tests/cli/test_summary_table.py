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


TOPIC_24 = "payments-eu-west-1-audit"                         # 24 characters
TOPIC_40 = "warehouse.inventory.snapshots.eu-west-1a"         # 40
TOPIC_50 = "warehouse.inventory.snapshots.eu-west-1a.compacted"  # 50


def _gen(out: Path, topics: str, partitions: str) -> Path:
    made = run_kdump("gen", str(out), "--topics", topics, "--partitions", partitions, "--records", "20")
    assert made.exit_code == 0, made.stderr
    return out


def _on_a_real_terminal(path: Path, columns: int) -> list[str]:
    """What `kdump summary PATH` shows on a pseudo-terminal whose kernel-reported width is ``columns``."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")} | {"TERM": "xterm", "NO_COLOR": "1"}
    code, _, err, seen = run_on_a_terminal(["summary", str(path)], env, stdout=True, stderr=False, columns=columns)
    assert code == 0, err
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode()).replace("\r\n", "\n").rstrip("\n").split("\n")


def test_long_topic_names_on_an_80_column_terminal(tmp_path: Path) -> None:
    """A 24-character topic used to fold the name and break every date over two lines at 80 columns."""
    wide = _on_a_real_terminal(_gen(tmp_path / "d24", TOPIC_24, "2"), 200)
    narrow = _on_a_real_terminal(tmp_path / "d24", 80)
    assert len(narrow) == len(wide) == 5 and max(map(len, narrow)) <= 80     # header, rule, 2 partitions, total
    assert narrow[0].split() == ["topic", "┃part", "┃records", "┃offsets", "┃", "size", "┃first", "time", "(UTC)"]
    for line, part in zip(narrow[2:4], "01", strict=True):   # the documented 80-column time format, whole
        assert re.fullmatch(rf"{TOPIC_24} │ +{part} │ +20 │0\.\.19 +│ *[0-9.]+ kB │2023-11-14 22:13:20", line), line
    assert narrow[4].startswith("payments-…-1-audit total │   2 │     40 │")   # the total's label fits the column
    # 40 characters whole, 50 shortened in the middle to 40; no room for a time: its column goes, not wraps
    names = _on_a_real_terminal(_gen(tmp_path / "d40", f"{TOPIC_40},{TOPIC_50}", "1"), 80)
    assert max(map(len, names)) <= 80 and "2023" not in "\n".join(names)
    rows = [line.split(" │") for line in names if " │" in line]
    assert [(row[0].rstrip(), row[2].strip()) for row in rows] == [
        (TOPIC_40, "20"), ("warehouse.inventory.…u-west-1a.compacted", "20"), ("all topics", "40")]
