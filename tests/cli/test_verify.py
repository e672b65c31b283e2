"""``kdump verify``: every rule of the engine, through the command, on copies of the generated fixtures.

Expected counts come from kafka-python's record readers (an independent implementation); expected
problems from Kafka's rules (what a broker's recovery or a consumer's lookup would do with the bytes).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import threading
import time
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatch
from kafka.record.legacy_records import LegacyRecordBatch
from kafka.record.memory_records import MemoryRecords
from kafka.record.util import calc_crc32c

from kdump.format.encode import encode_batch_v2
from kdump.format.index import encode_offset_entry, encode_time_entry
from kdump.format.records import Record
from kdump.log.files import segment_file_name
from kdump_testing import index_fixtures, run_kdump

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
fx = index_fixtures()
SEG = segment_file_name(0, "")
T0 = 1_700_000_000_000


def log_dir_copy(tmp_path: Path, name: str = "kafka-logs-1") -> Path:
    return Path(shutil.copytree(FIXTURES / "logdirs", tmp_path / name))


def verify_json(*args: str) -> tuple[int, list[dict], dict]:
    result = run_kdump("verify", "--json", *args)
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    return result.exit_code, [o for o in objs if o["type"] == "finding"], objs[-1]


def errors(findings: list[dict]) -> list[str]:
    return [f["check"] for f in findings if f["severity"] == "error"]


def kafka_python_counts(root: Path) -> tuple[int, int]:
    """(batches, records) of every .log under ``root``: records decoded by kafka-python, up to zero padding."""
    batches = records = 0
    for log in sorted(root.rglob("*.log")):
        data = log.read_bytes()
        pos = 0
        while pos + 12 <= len(data) and data[pos:].strip(b"\0"):
            entry = data[pos:pos + 12 + struct.unpack_from(">i", data, pos + 8)[0]]
            magic = entry[16]
            batch = DefaultRecordBatch(entry) if magic == 2 else LegacyRecordBatch(entry, magic)
            batches += 1
            records += sum(1 for _ in batch)
            pos += len(entry)
    return batches, records


# --- what a run looked at ------------------------------------------------------------------------------------


def test_clean_log_dir_counts_match_kafka_python(tmp_path: Path) -> None:
    root = log_dir_copy(tmp_path)
    code, findings, summary = verify_json(str(root))
    assert code == 0 and errors(findings) == []
    assert (summary["batches"], summary["records"]) == kafka_python_counts(root)
    assert (summary["partitions"], summary["ok"]) == (11, True)


@pytest.mark.parametrize("partition", ["v0-lz4-0", "v1-snappy-0"])
def test_compressed_legacy_wrapper_counts_its_inner_messages(partition: str) -> None:
    code, _, summary = verify_json(str(FIXTURES / "logdirs" / partition))
    batches, records = kafka_python_counts(FIXTURES / "logdirs" / partition)
    assert code == 0 and (summary["batches"], summary["records"]) == (batches, records)
    assert records > batches


def test_a_log_dir_named_like_a_partition_is_walked(tmp_path: Path) -> None:
    root = log_dir_copy(tmp_path)              # kafka-logs-1: topic "kafka-logs", partition 1, by name
    result = run_kdump("verify-index", str(root))
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1].startswith("verify-index OK: 109 files in 35 segments of 11 partitions")
    summary = run_kdump("summary", str(root))
    assert summary.stdout.count("Partition ") == 11


def test_nothing_to_check_is_not_ok(tmp_path: Path) -> None:
    empty = tmp_path / "kafka-logs-2"
    empty.mkdir()
    result = run_kdump("verify", str(empty))
    assert result.exit_code == 2
    assert "nothing was checked" in result.stdout.splitlines()[-1] and "FAILED" in result.stdout
    (tmp_path / "t-0").mkdir()
    assert run_kdump("verify-index", str(tmp_path / "t-0")).exit_code == 2


@pytest.mark.parametrize("kind", ["dangling symlink", "directory", "fifo"])
def test_an_unreadable_log_is_not_ok(kind: str, tmp_path: Path) -> None:
    part = tmp_path / "t-0"
    part.mkdir()
    log = part / f"{SEG}.log"
    if kind == "dangling symlink":
        log.symlink_to(tmp_path / "gone.log")
    elif kind == "directory":
        log.mkdir()
    else:
        os.mkfifo(log)
    for command in ("verify", "verify-index"):
        result = run_kdump(command, str(part))
        assert result.exit_code == 2
        assert f"error: {log}: cannot be read: " in result.stdout
        assert "1 unreadable path" in result.stdout.splitlines()[-1]


# --- the log itself ------------------------------------------------------------------------------------------


def test_a_flipped_payload_byte_fails(tmp_path: Path) -> None:
    root = log_dir_copy(tmp_path)
    log = root / "plain-0" / f"{SEG}.log"
    data = bytearray(log.read_bytes())
    data[100] ^= 0x01                                       # inside the first batch's records
    log.write_bytes(bytes(data))
    with pytest.raises(Exception):  # noqa: B017  kafka-python agrees the batch is corrupt
        batch = MemoryRecords(bytes(data)).next_batch()
        assert batch.validate_crc()
    code, findings, _summary = verify_json(str(root))
    assert code == 1 and errors(findings) == ["crc"]
    (crc,) = [f for f in findings if f["severity"] == "error"]
    assert (crc["file"], crc["position"]) == (str(log), 0)
    stored, size = struct.unpack_from(">I", data, 17)[0], struct.unpack_from(">i", data, 8)[0]
    computed = calc_crc32c(bytes(data[21:12 + size]))       # kafka-python's CRC-32C of the bytes
    assert crc["text"].startswith(f"Record is corrupt (stored crc = {stored}, computed crc = {computed})")
    assert run_kdump("verify", str(log)).exit_code == 1


def _undecodable_batch() -> bytes:
    """A v2 batch whose CRC is right but whose record count claims two records more than it holds."""
    data = bytearray(encode_batch_v2([Record(i, T0 + i, None, b"v%d" % i) for i in range(3)], base_offset=0))
    struct.pack_into(">i", data, 57, 5)
    struct.pack_into(">I", data, 17, calc_crc32c(bytes(data[21:])))
    return bytes(data)


def test_records_that_cannot_be_decoded_fail_deep(tmp_path: Path) -> None:
    data = _undecodable_batch()
    batch = DefaultRecordBatch(data)
    assert batch.validate_crc()
    with pytest.raises(Exception):  # noqa: B017  kafka-python cannot read its records either
        list(batch)
    part = tmp_path / "t-0"
    part.mkdir()
    (part / f"{SEG}.log").write_bytes(data)
    assert verify_json(str(part))[0] == 0                   # default: CRC and framing only (documented)
    code, findings, _ = verify_json("--deep", str(part))
    assert code == 1 and errors(findings) == ["records"]
    assert findings[-1]["position"] == 0 and "cannot be decoded" in findings[-1]["text"]


def test_one_framing_break_is_one_finding(tmp_path: Path) -> None:
    part = Path(fx.make_case("healthy-leader", str(tmp_path)))
    log = part / f"{SEG}.log"
    batches = fx.batches_of(log.read_bytes())
    broken = batches[len(batches) // 2].position
    data = bytearray(log.read_bytes())
    struct.pack_into(">i", data, broken + 8, 5)             # a size field below Kafka's minimum of 14
    log.write_bytes(bytes(data))
    for command in ("verify", "verify-index"):
        result = run_kdump(command, "--json", str(part))
        found = [json.loads(line) for line in result.stdout.splitlines()][:-1]
        assert result.exit_code == 1
        assert [(f["check"], f["position"]) for f in found if f["severity"] == "error"] == [("framing", broken)]
        assert "index entries after it were not checked" in found[-1]["text"]


def _partition_with_tail(tmp_path: Path, *, tail_in: str) -> Path:
    part = tmp_path / "t-0"
    part.mkdir()
    first = encode_batch_v2([Record(i, T0 + i, None, b"x") for i in range(5)], base_offset=0)
    second = encode_batch_v2([Record(5 + i, T0 + 5 + i, None, b"y") for i in range(5)], base_offset=5)
    partial = second[:len(second) // 2]
    (part / segment_file_name(0, ".log")).write_bytes(first + (partial if tail_in == "first" else b""))
    if tail_in == "first":
        (part / segment_file_name(5, ".log")).write_bytes(second)
    else:
        (part / segment_file_name(0, ".log")).write_bytes(first + partial)
    return part


def test_a_partial_batch_at_the_end_of_the_active_segment_is_an_append(tmp_path: Path) -> None:
    code, findings, _ = verify_json(str(_partition_with_tail(tmp_path, tail_in="active")))
    assert code == 0
    assert [f["check"] for f in findings if f["check"] == "append-in-progress"] == ["append-in-progress"]


def test_a_partial_batch_in_a_rolled_segment_is_corruption(tmp_path: Path) -> None:
    code, findings, _ = verify_json(str(_partition_with_tail(tmp_path, tail_in="first")))
    assert code == 1 and errors(findings) == ["incomplete-batch"]


def test_offsets_against_file_names_and_across_segments(tmp_path: Path) -> None:
    root = log_dir_copy(tmp_path)
    part = root / "plain-0"
    for suffix in (".index", ".timeindex"):                  # entries are relative to the name: leave them out
        os.remove(part / segment_file_name(20, suffix))
    os.rename(part / segment_file_name(20, ".log"), part / segment_file_name(21, ".log"))
    code, findings, _ = verify_json(str(part))               # its first batch is below the name's offset
    assert code == 1 and errors(findings) == ["offset-range"]
    os.rename(part / segment_file_name(21, ".log"), part / segment_file_name(19, ".log"))
    code, findings, _ = verify_json(str(part))
    assert code == 1 and "segments-overlap" in errors(findings)


# --- the partition's other files -----------------------------------------------------------------------------


def test_an_abort_without_its_txn_index_entry_fails(tmp_path: Path) -> None:
    root = log_dir_copy(tmp_path)
    assert verify_json(str(root / "txn-0"))[0] == 0
    (root / "txn-0" / segment_file_name(55, ".txnindex")).write_bytes(b"")
    code, findings, _ = verify_json(str(root / "txn-0"))
    assert code == 1 and errors(findings) == ["txn-index-missing"]
    assert findings[-1]["offset"] == 65                     # the ABORT marker kdump txn shows at 55..65


def test_a_txn_index_entry_without_an_abort_fails(tmp_path: Path) -> None:
    root = log_dir_copy(tmp_path)
    index = root / "txn-0" / segment_file_name(27, ".txnindex")
    index.write_bytes(index.read_bytes() + struct.pack(">hqqqq", 0, 9000, 44, 54, 44))   # a committed range
    code, findings, _ = verify_json(str(root / "txn-0"))
    assert code == 1 and errors(findings) == ["txn-index-extra"]


def test_checkpoints_above_the_log_end_fail(tmp_path: Path) -> None:
    root = log_dir_copy(tmp_path)
    path = root / "recovery-point-offset-checkpoint"
    path.write_text(path.read_text().replace("plain 0 60", "plain 0 75"))
    code, findings, _ = verify_json(str(root / "plain-0"))
    assert code == 1 and errors(findings) == ["checkpoint-past-log"]
    assert findings[-1]["offset"] == 75


def test_leader_epoch_checkpoint_against_batch_epochs(tmp_path: Path) -> None:
    root = log_dir_copy(tmp_path)
    (root / "plain-0" / "leader-epoch-checkpoint").write_text("0\n1\n0 5\n")   # the log has epoch 0 from 0
    code, findings, _ = verify_json(str(root / "plain-0"))
    assert code == 1 and errors(findings) == ["leader-epoch-start"]
    (root / "plain-0" / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n1 70\n")  # past the log end 60
    code, findings, _ = verify_json(str(root / "plain-0"))
    assert code == 1 and errors(findings) == ["leader-epoch-past-log"]


# --- modes and output ----------------------------------------------------------------------------------------


def test_strict_mode_is_kafkas_verify_index_only(tmp_path: Path) -> None:
    part = fx.make_case("healthy-follower-pre41", str(tmp_path))
    assert run_kdump("verify-index", part).exit_code == 0
    result = run_kdump("verify-index", "--strict", "--errors-only", part)
    assert result.exit_code == 1
    assert all("index-mismatch" not in line and "Index offset: " in line
               for line in result.stdout.splitlines()[:-1])


def test_errors_only_and_text_lines(tmp_path: Path) -> None:
    root = log_dir_copy(tmp_path)
    result = run_kdump("verify", str(root))
    assert [line.split(":")[0] for line in result.stdout.splitlines()[:-1]] == ["note", "note"]
    result = run_kdump("verify", "--errors-only", str(root))
    assert result.stdout.splitlines() == [
        "verify OK: 109 files in 35 segments of 11 partitions (192 batches, 672 records) checked: 0 errors, 2 notes"]


# --- a partition being written to ----------------------------------------------------------------------------


PREALLOCATED = 8 * 40000   # index bytes a broker preallocates (segment.index.bytes), here for 40,000 entries


def _write_live(part: Path, stop: threading.Event, done: list[int]) -> None:
    """Append batches as LogSegment.append does: the .log first, then entries into the preallocated indexes."""
    base = 0
    with open(part / f"{SEG}.log", "ab", buffering=0) as log, \
            open(part / f"{SEG}.index", "r+b", buffering=0) as index, \
            open(part / f"{SEG}.timeindex", "r+b", buffering=0) as tindex:
        position, offset, slot = 0, 0, 0
        while not stop.is_set() and slot < PREALLOCATED // 8 - 1:
            data = encode_batch_v2([Record(offset + i, T0 + offset + i, None, b"v" * 50) for i in range(4)],
                                   base_offset=offset)
            log.write(data[:40])                            # a reader may see half a batch
            log.write(data[40:])
            if offset:                                      # no broker indexes the first batch at position 0
                os.pwrite(index.fileno(), encode_offset_entry(base, offset + 3, position), slot * 8)
                os.pwrite(tindex.fileno(), encode_time_entry(base, T0 + offset + 3, offset + 3), slot * 12)
                slot += 1
            position += len(data)
            offset += 4
            done[0] = offset
            if offset % 400 == 0:
                time.sleep(0.001)                           # leave the reader a share of a small machine


def test_a_partition_being_written_to_raises_no_false_alarm(tmp_path: Path) -> None:
    part = tmp_path / "live-0"
    part.mkdir()
    (part / f"{SEG}.log").write_bytes(b"")
    (part / f"{SEG}.index").write_bytes(bytes(PREALLOCATED))
    (part / f"{SEG}.timeindex").write_bytes(bytes(PREALLOCATED // 8 * 12))
    stop, done = threading.Event(), [0]
    writer = threading.Thread(target=_write_live, args=(part, stop, done))
    writer.start()
    runs = 0
    try:
        while writer.is_alive() and runs < 10:
            for command in ("verify-index", "verify"):
                result = run_kdump(command, "--json", str(part))
                found = [json.loads(line) for line in result.stdout.splitlines()]
                assert result.exit_code == 0, found
                assert {f["check"] for f in found[:-1]} <= {"append-in-progress", "padding"}
            runs += 1
    finally:
        stop.set()
        writer.join()
    assert runs >= 5 and done[0] > 0
    assert run_kdump("verify", str(part)).exit_code == 0


def test_an_unreadable_partition_file_is_not_ok(tmp_path: Path) -> None:
    part = Path(shutil.copytree(FIXTURES / "logdirs" / "plain-0", tmp_path / "t-0"))
    (part / "leader-epoch-checkpoint").unlink()
    os.mkfifo(part / "leader-epoch-checkpoint")
    code, findings, summary = verify_json(str(part))
    assert code == 2 and summary["unreadable"] == [str(part / "leader-epoch-checkpoint")]
    assert [f["check"] for f in findings if f["severity"] == "error"] == ["unreadable"]


INDEX_FILES = sorted((p.parent.name, p.suffix) for p in (FIXTURES / "corrupt-index").glob(f"*/{SEG}.*index"))


@pytest.mark.parametrize(("case", "suffix"), INDEX_FILES)
def test_strict_findings_are_the_dumps_mismatches(case: str, suffix: str) -> None:
    """verify-index --strict reports the entries Kafka 3.9's --verify-index-only lists as mismatches."""
    directory = FIXTURES / "corrupt-index" / case
    index = directory / f"{SEG}{suffix}"
    dump = run_kdump("--files", str(index), "--verify-index-only", "--kafka-version", "3.9")
    quoted = re.compile(r"Index offset: \d+, log offset: \d+" if suffix == ".index"
                        else r"Indexed offset: \d+, found log offset: -?\d+")
    expected = sorted(quoted.findall(dump.stdout + dump.stderr))
    strict = run_kdump("verify-index", "--strict", "--json", str(directory))
    found = [json.loads(line) for line in strict.stdout.splitlines()][:-1]
    mismatches = sorted(m for f in found if f["severity"] == "error" and f["file"] == str(index)
                        for m in quoted.findall(f["text"]))
    if (case, suffix) == ("healthy-empty-active-0", ".timeindex"):
        # Kafka's dump reads the first zero slot of an empty preallocated time index as an entry;
        # kdump's rules take it for padding in every mode.
        assert (expected, mismatches) == (["Indexed offset: 0, found log offset: -1"], [])
    else:
        assert mismatches == expected
