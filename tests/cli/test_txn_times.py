"""``kdump txn --time-format/--tz``: each transaction's span in the chosen form; the default text and
JSON keep Kafka's milliseconds and today's lines."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kdump_testing import run_kdump


def test_txn_time_span(tmp_path: Path) -> None:
    out = tmp_path / "logs"
    made = run_kdump("gen", str(out), "--topics", "t", "--partitions", "1", "--records", "40", "--transactional",
                     "t", "--start-time", "2024-05-01T12:00:00Z", "--time-step", "1000", "--seed", "3")
    assert made.exit_code == 0, made.stderr
    plain = run_kdump("txn", str(out / "t-0")).stdout
    assert " time: " not in plain
    first = json.loads(run_kdump("txn", str(out / "t-0"), "--json").stdout)["transactions"][0]
    assert first["firstTimestamp"] == 1714564800000   # the first record: --start-time
    iso = run_kdump("txn", str(out / "t-0"), "--time-format", "iso").stdout
    line = next(line for line in iso.splitlines() if f"firstOffset: {first['firstOffset']} " in line)
    end = first["markerTimestamp"]
    assert re.search(r" time: 2024-05-01T12:00:00\.000Z\.\.2024-05-01T12:00:\d\d\.\d{3}Z ", line), line
    assert line.replace(" time: ", "|").split("|")[1].startswith("2024-05-01T12:00:00.000Z..")
    both = run_kdump("txn", str(out / "t-0"), "--time-format", "both", "--tz", "Europe/Paris").stdout
    assert f" time: 1714564800000 (2024-05-01T14:00:00.000+02:00)..{end} (" in both
    # the rest of each line is today's
    assert [re.sub(r" time: \S+\.\.\S+", "", x) for x in iso.splitlines()] == plain.splitlines()
