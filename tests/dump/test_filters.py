"""--files filters through the CLI: what they read, their fallbacks, their usage errors, --escape.

Which lines a filter keeps is checked against the real DumpLogSegments in
tests/kafka/test_real_dump_filters.py; here the records' contents come from kafka-python.
"""

from __future__ import annotations

import datetime
import io
import os
import re
import shlex
import shutil
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from kdump.dump import DumpOptions, dump_files
from kdump.dump.filters import RecordFilter
from kdump.log.segment import ReadOnlyFile
from tests.kdump_testing import run_kdump

ROOT = Path(__file__).resolve().parents[2]
PLAIN = ROOT / "fixtures" / "logdirs" / "plain-0"


@pytest.fixture(scope="module")
def big_partition(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("big") / "logs"
    done = run_kdump("gen", str(out), "--topics", "big", "--partitions", "1", "--records", "40000",
                     "--segment-bytes", "1000000000", "--seed", "1")
    assert done.exit_code == 0, done.stderr
    return out / "big-0"


def kafka_python_records(log: Path) -> dict[int, tuple[bytes | None, int]]:
    """offset -> (key, timestamp), decoded by kafka-python."""
    records = MemoryRecords(log.read_bytes())
    found = {}
    while records.has_next():
        batch = records.next_batch()
        for record in batch:
            found[record.offset] = (record.key, record.timestamp)
    return found


class ReadCounter:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.bytes = 0
        read, read_into = ReadOnlyFile.read, ReadOnlyFile.read_into

        def counted_read(this: ReadOnlyFile, position: int, length: int) -> bytes:
            data = read(this, position, length)
            self.bytes += len(data)
            return data

        def counted_read_into(this: ReadOnlyFile, view: memoryview, position: int) -> int:
            got = read_into(this, view, position)
            self.bytes += got
            return got

        monkeypatch.setattr(ReadOnlyFile, "read", counted_read)
        monkeypatch.setattr(ReadOnlyFile, "read_into", counted_read_into)


def test_an_offset_range_reads_kilobytes_through_the_index(big_partition: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    log = big_partition / "00000000000000000000.log"
    expected = kafka_python_records(log)
    counter = ReadCounter(monkeypatch)
    got = run_kdump("--files", str(log), "--offsets", "30000..30002", "--print-data-log")
    assert got.exit_code == 0 and got.stderr == ""
    record_lines = [line for line in got.stdout.splitlines() if line.startswith("| offset:")]
    assert [line.split()[2] for line in record_lines] == ["30000", "30001", "30002"]
    for line, offset in zip(record_lines, (30000, 30001, 30002), strict=True):
        key, timestamp = expected[offset]
        assert f" CreateTime: {timestamp} " in line and f" key: {key.decode()} payload: " in line
    size = log.stat().st_size
    assert size > 3_000_000 and counter.bytes < 200_000, (counter.bytes, size)


def test_from_time_is_positioned_through_the_time_index(big_partition: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = big_partition / "00000000000000000000.log"
    expected = kafka_python_records(log)
    target = expected[35000][1]
    first = min(o for o, (_, t) in expected.items() if t >= target)
    counter = ReadCounter(monkeypatch)
    got = run_kdump("--files", str(log), "--from", str(target), "--limit", "2")
    assert got.exit_code == 0
    offsets = [int(line.split()[2]) for line in got.stdout.splitlines() if line.startswith("| offset:")]
    assert offsets == sorted(o for o, (_, t) in expected.items() if t >= target)[:2] and offsets[0] == first
    assert counter.bytes < 200_000


def test_a_missing_or_corrupt_index_falls_back_to_a_scan_with_a_note(tmp_path: Path) -> None:
    part = tmp_path / "plain-0"
    shutil.copytree(PLAIN, part)
    log = part / "00000000000000000035.log"
    with_index = run_kdump("--files", str(log), "--offsets", "49..", "--print-data-log")
    assert with_index.stderr == "" and with_index.stdout.count("| offset:") == 1
    index = part / "00000000000000000035.index"
    index.write_bytes(index.read_bytes()[:4] + (999).to_bytes(4, "big"))   # entry 0 points at no batch
    corrupt = run_kdump("--files", str(log), "--offsets", "49..", "--print-data-log")
    assert (corrupt.exit_code, corrupt.stdout) == (0, with_index.stdout)
    assert corrupt.stderr.startswith(f"Note: {log}: index entry 0 cannot be used: ")
    index.unlink()
    missing = run_kdump("--files", str(log), "--offsets", "49..", "--print-data-log")
    assert (missing.exit_code, missing.stdout) == (0, with_index.stdout)
    assert missing.stderr == f"Note: {log}: no .index beside it; scanning from position 0\n"


@pytest.mark.parametrize(("args", "message"), [
    (["--offsets", "9..3"], "Error: --offsets 9..3: the first offset is after the last\n"),
    (["--offsets", "x..3"], "Error: --offsets 'x..3': give A..B, A.. or ..B with offsets >= 0 (or one offset)\n"),
    (["--offsets", ".."], "Error: --offsets '..': give A..B, A.. or ..B with offsets >= 0 (or one offset)\n"),
    (["--limit", "0"], "Error: --limit must be at least 1, not 0\n"),
    (["--from", "1700000000000", "--to", "2023-01-01"], "Error: --from 1700000000000 is after --to 1672531200000\n"),
    (["--key", "("], "Error: --key '(' is not a regular expression: missing ), unterminated subpattern at "
                     "position 0\n"),
])
def test_invalid_filters_are_usage_errors(args: list[str], message: str) -> None:
    got = run_kdump("--files", str(PLAIN), *args)
    assert (got.exit_code, got.stdout, got.stderr) == (1, "", message)


def test_an_unreadable_time_is_a_usage_error() -> None:
    got = run_kdump("--files", str(PLAIN), "--from", "yesterday")
    assert got.exit_code == 1 and got.stdout == ""
    assert got.stderr.splitlines()[-1].startswith("Error: Invalid value for '--from': 'yesterday' is not a time")


def test_time_inputs_iso_and_relative() -> None:
    ms = int(datetime.datetime(2023, 11, 14, 22, 13, 57, tzinfo=datetime.UTC).timestamp() * 1000)
    by_iso = run_kdump("--files", str(PLAIN), "--from", "2023-11-14T22:13:57Z", "--to", "2023-11-14T23:13:58+01:00")
    by_ms = run_kdump("--files", str(PLAIN), "--from", str(ms), "--to", str(ms + 1000))
    in_range = sum(ms <= t <= ms + 1000 for log in PLAIN.glob("*.log") for _, t in kafka_python_records(log).values())
    assert by_iso.exit_code == 0 and by_iso.stdout == by_ms.stdout and by_ms.stdout.count("| offset:") == in_range > 0
    recent = run_kdump("--files", str(PLAIN), "--from", "-1h")   # the fixtures are from 2023: nothing
    assert recent.exit_code == 0 and "| offset:" not in recent.stdout
    found = run_kdump("find", str(PLAIN), "--timestamp", "2023-11-14T22:13:57Z")
    assert found.stdout == run_kdump("find", str(PLAIN), "--timestamp", str(ms)).stdout
    assert found.exit_code == 0 and found.stdout.count("| offset:") == 1


def _segment_with_value(tmp_path: Path, value: bytes, header_key: str) -> Path:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    builder.append(0, timestamp=1700000000000, key=b"k", value=value, headers=[(header_key, b"v")])
    part = tmp_path / "t-0"
    part.mkdir()
    log = part / "00000000000000000000.log"
    log.write_bytes(bytes(builder.build()))
    return log


def test_escape_stops_a_value_from_forging_a_line(tmp_path: Path) -> None:
    log = _segment_with_value(tmp_path, b"a\n| offset: 99\x1b[2J\\n", "h\r1")
    raw = run_kdump("--files", str(log), "--print-data-log")
    assert "\n| offset: 99" in raw.stdout   # Kafka's raw output: the value prints a second record line
    escaped = run_kdump("--files", str(log), "--print-data-log", "--escape")
    lines = escaped.stdout.splitlines()
    assert escaped.exit_code == 0 and len(lines) == 4 and sum(line.startswith("| offset:") for line in lines) == 1
    assert lines[3].endswith(" headerKeys: [h\\r1] key: k payload: a\\n| offset: 99\\x1b[2J\\\\n")
    filtered = run_kdump("--files", str(log), "--escape", "--value", r"a\\n\|")
    assert filtered.stdout.count("| offset:") == 1


def test_library_filter_matches_the_cli() -> None:
    out = io.StringIO()
    result = dump_files([str(PLAIN)], DumpOptions(deep=True, filter=RecordFilter(first_offset=41, last_offset=52)),
                        out=out)
    cli = run_kdump("--files", str(PLAIN), "--offsets", "41..52")
    assert result.ok and out.getvalue() == cli.stdout
    assert [int(line.split()[2]) for line in cli.stdout.splitlines() if line.startswith("| offset:")] == \
        list(range(41, 53))
    assert [os.path.basename(p) for p in result.files] == ["00000000000000000035.log", "00000000000000000050.log"]


def test_the_guides_everyday_commands_work() -> None:
    readme = (ROOT / "docs" / "guide.md").read_text()
    block = readme.split("## Everyday use", 1)[1].split("```sh\n", 1)[1].split("\n```", 1)[0]
    commands = [shlex.split(line)[1:] for line in block.splitlines()]
    assert len(commands) == 6
    for args in commands:
        got = run_kdump(*args, cwd=ROOT)
        assert got.exit_code == 0 and re.search(r"(\| offset|\"type\":\"record\")", got.stdout) and "Error" not in got.stderr, args


def test_a_directory_with_an_unreadable_time_index_or_odd_log_name_is_still_filtered(tmp_path: Path) -> None:
    part = tmp_path / "plain-0"
    shutil.copytree(PLAIN, part)
    (part / "00000000000000000000.timeindex").write_bytes(b"\x00" * 5)   # not a multiple of 12 bytes
    (part / "notes.log").write_text("not a segment\n")
    got = run_kdump("--files", str(part), "--from", "1700000037500", "--offsets", "..60")
    offsets = [int(line.split()[2]) for line in got.stdout.splitlines() if line.startswith("| offset:")]
    expected = sorted(o for log in PLAIN.glob("*.log") for o, (_, t) in kafka_python_records(log).items()
                      if t >= 1700000037500)
    assert offsets == expected
    assert f"Dumping {part}/notes.log" in got.stdout and got.exit_code == 1
    assert got.stderr.count("Error:") == 1 and "notes.log" in got.stderr
