"""Filtered dumps are Kafka's own lines: the real DumpLogSegments output, filtered here record by record.

Kafka 4.4.0's tool dumps each segment whole with --print-data-log; the expected output of
``kdump --files SEG --print-data-log --offsets A..B`` (and the other filters) is that output with
only the matching record lines kept, each batch line kept when its batch keeps a record. The
segments include real broker output (indexes written by Kafka), so the index positioning is checked
against segments kdump did not write.
"""

from __future__ import annotations

import datetime
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from zoneinfo import ZoneInfo

import corpus
import pytest
import real_kafka

from tests.kdump_testing import run_kdump

RELEASE = "4.4.0"  # the newest release: kdump's default --kafka-version
SEGMENTS = [
    "logdirs/plain-0/00000000000000000035.log",
    "logdirs/gzip-0/00000000000000000025.log",
    "logdirs/txn-1/00000000000000000000.log",
    "logdirs/v0-0/00000000000000000000.log",
    "logdirs/v1-snappy-0/00000000000000000000.log",
    "logdirs/zstd-0/00000000000000000000.log",
    "real-broker/4.3.0/logs/codec-none-0/00000000000000000000.log",
    "real-broker/4.3.0/logs/codec-gzip-0/00000000000000000000.log",
    "real-broker/4.3.0/logs/compacted-0/00000000000000000300.log",
    "real-broker/4.3.0/logs/txn-0/00000000000000000000.log",
]
_RECORD = re.compile(r"^\| offset: (\d+) \w+: (-?\d+) .*?(?: key: (.*?))?(?: payload: .*)?$")

Keep = Callable[[int, int, str | None], bool]


@pytest.fixture(scope="module")
def kafka_dumps() -> dict[str, tuple[str, str]]:
    """segment -> (its path in a copy, Kafka's --print-data-log stdout)."""
    root = real_kafka.corpus_dir("filters")
    paths = {}
    for segment in SEGMENTS:
        source = corpus.FIXTURES / segment
        if not source.exists():
            pytest.fail(f"fixture {segment} is missing")
        target = root / segment
        shutil.copytree(source.parent, target.parent, dirs_exist_ok=True)
        paths[segment] = str(target)
    outcomes = real_kafka.run_dump_log_segments(
        RELEASE, [["--files", paths[s], "--print-data-log"] for s in SEGMENTS],
        ["--files", paths[SEGMENTS[0]]], root=root)
    assert all(o.exit_code == 0 for o in outcomes)
    return {s: (paths[s], o.stdout) for s, o in zip(SEGMENTS, outcomes, strict=True)}


def records_of(stdout: str) -> list[tuple[int, int, str | None]]:
    return [(int(m.group(1)), int(m.group(2)), m.group(3)) for m in map(_RECORD.match, stdout.splitlines()) if m]


def kafka_filtered(stdout: str, keep: Keep, limit: int | None = None) -> str:
    """Kafka's output with the record lines ``keep`` accepts, each after its batch line."""
    lines = stdout.splitlines()
    out, batch, kept = lines[:2], None, 0
    for line in lines[2:]:
        match = _RECORD.match(line)
        if match is None:
            batch = line if line.startswith(("baseOffset:", "offset:")) else batch
            continue
        if (limit is None or kept < limit) and keep(int(match.group(1)), int(match.group(2)), match.group(3)):
            if batch is not None:
                out.append(batch)
                batch = None
            out.append(line)
            kept += 1
    return "\n".join(out) + "\n"


def _cases(records: list[tuple[int, int, str | None]]) -> list[tuple[list[str], Keep, int | None]]:
    offsets = [o for o, _, _ in records]
    lo, hi = offsets[len(offsets) // 3], offsets[2 * len(offsets) // 3]
    times = sorted(t for _, t, _ in records)
    t0, t1 = times[len(times) // 3], times[2 * len(times) // 3]
    return [
        (["--offsets", f"{lo}..{hi}"], lambda o, t, k: lo <= o <= hi, None),
        (["--offsets", f"{hi}.."], lambda o, t, k: o >= hi, None),
        (["--offsets", f"..{lo}"], lambda o, t, k: o <= lo, None),
        (["--offsets", str(hi)], lambda o, t, k: o == hi, None),
        (["--from", str(t0), "--to", str(t1)], lambda o, t, k: t0 <= t <= t1, None),
        (["--from", str(t1)], lambda o, t, k: t >= t1, None),
        (["--key", "[13579]$"], lambda o, t, k: k is not None and re.search("[13579]$", k) is not None, None),
        (["--offsets", f"{lo}..", "--limit", "3"], lambda o, t, k: o >= lo, 3),
        (["--offsets", f"{offsets[-1] + 1}.."], lambda o, t, k: False, None),
    ]


@pytest.mark.parametrize("segment", SEGMENTS)
def test_filtered_dump_is_kafkas_lines_for_the_matching_records(kafka_dumps: dict[str, tuple[str, str]],
                                                                 segment: str) -> None:
    path, kafka = kafka_dumps[segment]
    records = records_of(kafka)
    assert len(records) >= 10
    for args, keep, limit in _cases(records):
        expected = kafka_filtered(kafka, keep, limit)
        got = run_kdump("--files", path, "--print-data-log", *args)
        assert (got.exit_code, got.stdout) == (0, expected), args
        lines = run_kdump("--files", path, "--print-data-log", "--json", *args).stdout.splitlines()
        json_offsets = [obj["offset"] for obj in map(json.loads, lines) if obj["type"] == "record"]
        assert json_offsets == [int(m.group(1)) for m in map(_RECORD.match, expected.splitlines()) if m], args


def test_find_count_prints_kafkas_lines_from_the_found_record(kafka_dumps: dict[str, tuple[str, str]]) -> None:
    path, kafka = kafka_dumps["real-broker/4.3.0/logs/codec-none-0/00000000000000000000.log"]
    start = records_of(kafka)[40][0]
    expected = kafka_filtered(kafka, lambda o, t, k: o >= start, 25).split("\n", 2)[2]
    got = run_kdump("find", str(Path(path).parent), "--offset", str(start), "--count", "25", "--print-data-log")
    assert (got.exit_code, got.stdout) == (0, expected)


def _iso(ms: int, zone: str | None = None) -> str:
    """An instant as Java's DateTimeFormatter ISO_OFFSET_DATE_TIME writes it, with milliseconds."""
    when = datetime.datetime.fromtimestamp(ms / 1000, ZoneInfo(zone) if zone else datetime.UTC)
    text = when.isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z") if zone is None else text


@pytest.mark.parametrize(("args", "render"), [
    (["--time-format", "iso"], lambda ms: _iso(ms)),
    (["--time-format", "both"], lambda ms: f"{ms} ({_iso(ms)})"),
    (["--tz", "Asia/Kolkata"], lambda ms: _iso(ms, "Asia/Kolkata")),
])
def test_time_formats_change_only_the_timestamps(kafka_dumps: dict[str, tuple[str, str]], args: list[str],
                                                 render: Callable[[int], str]) -> None:
    path, kafka = kafka_dumps["logdirs/plain-0/00000000000000000035.log"]
    expected = re.sub(r"(CreateTime|LogAppendTime): (\d+)", lambda m: f"{m.group(1)}: {render(int(m.group(2)))}",
                      kafka)
    got = run_kdump("--files", path, "--print-data-log", *args)
    assert (got.exit_code, got.stdout) == (0, expected)
    assert "T22:" in expected or "+05:30" in expected


def test_a_log_dir_decodes_each_internal_topic_with_its_decoder(tmp_path: Path) -> None:
    """--decode-internal over a real broker's log dir: each partition's .log as Kafka dumps it with that
    topic's decoder (or --print-data-log for ordinary topics), and no decoder errors."""
    logs = tmp_path / "logs"
    shutil.copytree(corpus.FIXTURES / "real-broker" / "4.3.0" / "logs", logs)
    expected_by = {"__consumer_offsets-0": "--offsets-decoder", "__transaction_state-0": "--transaction-log-decoder",
                   "__cluster_metadata-0": "--cluster-metadata-decoder", "plain-0": "--print-data-log",
                   "txn-0": "--print-data-log"}
    logs_of = {d: str(logs / d / "00000000000000000000.log") for d in expected_by}
    kafka = real_kafka.run_dump_log_segments(RELEASE, [["--files", logs_of[d], flag] for d, flag in expected_by.items()],
                                             ["--files", logs_of["plain-0"]])
    for flags in (["--decode-internal"], ["--offsets-decoder", "--transaction-log-decoder",
                                          "--cluster-metadata-decoder"]):
        got = run_kdump("--files", str(logs), *flags)
        assert got.exit_code == 0 and "Error" not in got.stderr, flags
        sections = {s.split("\n", 1)[0]: "Dumping " + s for s in got.stdout.split("Dumping ")[1:]}
        for directory, outcome in zip(expected_by, kafka, strict=True):
            assert sections[logs_of[directory]] == outcome.stdout, (flags, directory)


def test_time_format_in_the_2_8_record_lines(kafka_dumps: dict[str, tuple[str, str]]) -> None:
    """2.8.x repeated batch fields on each record line, timestamp included: --time-format reaches it."""
    path = kafka_dumps["logdirs/plain-0/00000000000000000035.log"][0]
    kafka = real_kafka.run_dump_log_segments("2.8.2", [["--files", path, "--deep-iteration"]], ["--files", path])[0]
    expected = re.sub(r"CreateTime: (\d+)", lambda m: f"CreateTime: {_iso(int(m.group(1)))}", kafka.stdout)
    got = run_kdump("--files", path, "--deep-iteration", "--kafka-version", "2.8", "--time-format", "iso")
    assert (got.exit_code, got.stdout) == (0, expected) and expected.count("T22:") > 5
