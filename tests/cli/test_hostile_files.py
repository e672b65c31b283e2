"""Files an operator's disk really holds: preallocated tails, FIFOs, corrupt index entries, offset
overflow, segments past 2 GiB. Each command gives a true answer or one line, never a hang or a traceback.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatch

from kdump.format.batch import V2_ATTRIBUTES_OFFSET, V2_HEADER, V2_HEADER_SIZE
from kdump.format.crc import crc32c
from kdump.format.encode import encode_batch_v2
from kdump.format.index import encode_offset_entry
from kdump.format.records import Record
from kdump_testing import run_kdump

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _kdump(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kdump", *args], capture_output=True, text=True, timeout=timeout)


def _batch(base: int, count: int = 3) -> bytes:
    return encode_batch_v2([Record(base + i, 1_700_000_000_000 + i, b"k", b"value") for i in range(count)],
                           base_offset=base)


# --- preallocated zero padding: one rule in every command ------------------------------------------


@pytest.fixture(scope="module")
def preallocated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pre") / "logs"
    result = run_kdump("gen", str(out), "--topics", "p", "--partitions", "1", "--records", "50",
                       "--segment-bytes", "4096", "--preallocate", "--log-preallocate")
    assert result.exit_code == 0, result.stderr
    active = out / "p-0" / "00000000000000000040.log"
    assert active.stat().st_size == 4096 and active.read_bytes().endswith(bytes(64))
    return out


def test_preallocated_log_passes_verify_index(preallocated: Path) -> None:
    result = run_kdump("verify-index", str(preallocated))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "framing" not in result.stdout


def test_find_at_the_log_end_of_a_preallocated_log_is_not_found(preallocated: Path) -> None:
    result = run_kdump("find", str(preallocated / "p-0"), "--offset", "50")
    assert (result.exit_code, result.stdout.strip()) == (1, "offset 50 is beyond the end of the log")
    found = run_kdump("find", str(preallocated / "p-0"), "--offset", "49")
    assert found.exit_code == 0 and "offset: 49" in found.stdout


@pytest.mark.parametrize("command", ["summary", "txn"])
def test_summary_and_txn_call_padding_padding(preallocated: Path, command: str) -> None:
    result = run_kdump(command, str(preallocated))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "error" not in (result.stdout + result.stderr).lower()


# --- special files never block --------------------------------------------------------------------


@pytest.fixture()
def partition_with_fifos(tmp_path: Path) -> Path:
    partition = tmp_path / "logs" / "t-0"
    shutil.copytree(FIXTURES / "logdirs" / "plain-0", partition)
    os.mkfifo(partition / "00000000000000000100.log")
    os.mkfifo(partition / "00000000000000000100.index")
    (partition / "leader-epoch-checkpoint").unlink()
    os.mkfifo(partition / "leader-epoch-checkpoint")
    return partition


@pytest.mark.parametrize("args", [["--files", "{p}"], ["--files", "{p}/00000000000000000100.log"],
                                  ["summary", "{p}"], ["txn", "{p}"], ["verify-index", "{p}"]])
def test_fifos_are_skipped_with_one_line(partition_with_fifos: Path, args: list[str]) -> None:
    result = _kdump(*(a.format(p=partition_with_fifos) for a in args), timeout=60)
    assert "Traceback" not in result.stderr
    assert "FIFO" in result.stdout + result.stderr
    fifo_lines = [line for line in (result.stdout + result.stderr).splitlines() if "FIFO" in line]
    assert all("00000000000000000100.log" in line or "00000000000000000100.index" in line
               or "leader-epoch-checkpoint" in line for line in fifo_lines)


def test_rebuild_index_of_a_fifo_is_refused(partition_with_fifos: Path, tmp_path: Path) -> None:
    result = _kdump("rebuild-index", str(partition_with_fifos / "00000000000000000100.log"),
                    "--out", str(tmp_path / "out"), timeout=60)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert not (tmp_path / "out" / "00000000000000000100.index").exists()


# --- corrupt index entries never give a wrong answer ---------------------------------------------


def _kafka_python_timestamp(log: Path, offset: int) -> int:
    """The record's timestamp as kafka-python reads the log (an independent decoder)."""
    data = log.read_bytes()
    pos = 0
    while pos < len(data):
        size = struct.unpack_from(">i", data, pos + 8)[0]
        batch = DefaultRecordBatch(data[pos:pos + 12 + size])
        for record in batch:
            if record.offset == offset:
                return int(record.timestamp)
        pos += 12 + size
    raise AssertionError(f"offset {offset} not in {log}")


@pytest.mark.parametrize("position", ["negative", "minus-size", "near-end"])
def test_find_never_trusts_a_corrupt_index_entry(tmp_path: Path, position: str) -> None:
    partition = tmp_path / "plain-0"
    shutil.copytree(FIXTURES / "logdirs" / "plain-0", partition)
    log = partition / "00000000000000000000.log"
    index = partition / "00000000000000000000.index"
    size = log.stat().st_size
    bad = {"negative": -8, "minus-size": -(size - 100), "near-end": size - 5}[position]
    entries = bytearray(index.read_bytes())
    entries[0:8] = encode_offset_entry(0, 14, 0)[:4] + struct.pack(">i", bad)  # (offset 14, bad position)
    index.write_bytes(bytes(entries))
    result = run_kdump("find", str(partition), "--offset", "16", "--explain")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "cannot be used" in result.stdout
    json_result = run_kdump("find", str(partition), "--offset", "16", "--json")
    assert '"offset": 16' in json_result.stdout.replace('"offset":16', '"offset": 16')
    assert str(_kafka_python_timestamp(log, 16)) in json_result.stdout


# --- offset overflow and batches below the base offset ------------------------------------------


@pytest.mark.parametrize("name,base", [("00000000000000000000.log", 3_000_000_000),
                                       ("00000000000000000100.log", 0)])
def test_rebuild_index_reports_batches_that_do_not_fit_the_segment(tmp_path: Path, name: str, base: int) -> None:
    log = tmp_path / "t-0" / name
    log.parent.mkdir()
    log.write_bytes(_batch(base) if base else _batch(0) + _batch(3))
    result = _kdump("rebuild-index", str(log), "--out", str(tmp_path / "out"))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(f"Error: {log}: position 0: ")
    assert ("Integer.MAX_VALUE" in result.stderr) if base else ("below the segment's base offset" in result.stderr)


# --- segments past 2 GiB --------------------------------------------------------------------------


def _hole_batch(base_offset: int, hole: int) -> tuple[bytes, int]:
    """A v2 batch header whose record area is ``hole`` zero bytes (left as a hole in a sparse file),
    with the CRC Kafka would compute over it, and the entry's total size."""
    batch_length = V2_HEADER_SIZE - 12 + hole
    fields = [base_offset, batch_length, 0, 2, 0, 0, 0, 1_700_000_000_000, 1_700_000_000_000, -1, -1, -1, 1]
    header = bytearray(V2_HEADER.pack(*fields))
    crc = crc32c(header[V2_ATTRIBUTES_OFFSET:])
    zeros = bytes(1 << 20)
    left = hole
    while left:
        step = min(left, len(zeros))
        crc = crc32c(zeros[:step], crc)
        left -= step
    fields[4] = crc
    return V2_HEADER.pack(*fields), 12 + batch_length


def test_a_segment_past_2_gib_is_read_to_its_end(tmp_path: Path) -> None:
    log = tmp_path / "00000000000000000000.log"
    hole = 1_100 << 20
    with open(log, "wb") as f:
        for base in (0, 1):
            header, size = _hole_batch(base, hole)
            start = f.tell()
            f.write(header)
            f.seek(start + size)
        tail_position = f.tell()
        f.write(_batch(2))
    assert tail_position > 2**31 - 1
    result = _kdump("--files", str(log), timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    batch_lines = [line for line in lines if line.startswith("baseOffset:")]
    assert [line.split()[1] for line in batch_lines] == ["0", "1", "2"]
    assert all(line.endswith("isvalid: true") for line in batch_lines)
    assert f"position: {tail_position} " in batch_lines[2]
    assert not any("invalid bytes" in line for line in lines)
    assert "past Kafka's segment limit of 2147483647" in result.stderr


@pytest.mark.parametrize("name,base", [("00000000000000000000.log", 3_000_000_000),
                                       ("00000000000000000100.log", 0)])
def test_verify_index_and_summary_flag_batches_outside_the_segment(tmp_path: Path, name: str, base: int) -> None:
    partition = tmp_path / "t-0"
    partition.mkdir()
    (partition / name).write_bytes(_batch(base) if base else _batch(0) + _batch(3))
    (partition / name.replace(".log", ".index")).write_bytes(b"")
    expected = "Integer.MAX_VALUE above the segment's base offset" if base else "below the segment's base offset"
    verify_index = run_kdump("verify-index", str(partition))
    assert verify_index.exit_code == 1 and expected in verify_index.stdout
    summary = run_kdump("summary", str(partition))
    assert summary.exit_code == 1 and expected in summary.stdout
