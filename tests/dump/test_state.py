"""``--files X.snapshot`` / ``X.txnindex``: Kafka's lines in every dialect."""

from __future__ import annotations

import io
import json
import os

import pytest

from kdump.dump.run import DumpOptions, DumpRun
from kdump.dump.state import dump_producer_snapshot, dump_txn_index, snapshot_entry_line
from kdump.format.snapshot import ProducerSnapshotEntry, encode_producer_snapshot
from kdump.format.txnindex import encode_aborted_txn
from kdump.render.dialect import parse_kafka_version

WITH = ProducerSnapshotEntry(1000, 3, 9, 41, 4, 1700000000000, 7, 30)
WITHOUT = ProducerSnapshotEntry(1001, 0, -1, -1, 0, 1700000000500, -1, -1)


def make_run(version: str = "4.3", json_output: bool = False) -> DumpRun:
    return DumpRun(options=DumpOptions(json=json_output, dialect=parse_kafka_version(version)),
                   out=io.StringIO(), err=io.StringIO())


# Expected strings assembled from the spec's format descriptions.
@pytest.mark.parametrize(("version", "with_meta", "without_meta"), [
    ("4.3",
     "producerId: 1000 producerEpoch: 3 coordinatorEpoch: 7 currentTxnFirstOffset: OptionalLong[30] "
     "lastTimestamp: 1700000000000 firstSequence: 5 lastSequence: 9 lastOffset: 41 offsetDelta: 4 "
     "timestamp: 1700000000000",
     "producerId: 1001 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty "
     "lastTimestamp: 1700000000500"),
    ("3.9",
     "producerId: 1000 producerEpoch: 3 coordinatorEpoch: 7 currentTxnFirstOffset: OptionalLong[30] "
     "lastTimestamp: 1700000000000 firstSequence: 5 lastSequence: 9 lastOffset: 41 offsetDelta: 4 "
     "timestamp: 1700000000000",
     "producerId: 1001 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty "
     "lastTimestamp: 1700000000500 "),
    ("3.4",
     "producerId: 1000 producerEpoch: 3 coordinatorEpoch: 7 currentTxnFirstOffset: Some(30) "
     "lastTimestamp: 1700000000000 firstSequence: 5 lastSequence: 9 lastOffset: 41 offsetDelta: 4 "
     "timestamp: 1700000000000",
     "producerId: 1001 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: None "
     "lastTimestamp: 1700000000500 "),
    ("3.0",
     "producerId: 1000 producerEpoch: 3 coordinatorEpoch: 7 currentTxnFirstOffset: Some(30) "
     "firstSequence: 5 lastSequence: 9 lastOffset: 41 offsetDelta: 4 timestamp: 1700000000000",
     "producerId: 1001 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: None "),
    # 2.4 as 3.0: the real 2.4.1 tool on a real broker's snapshot (fixtures/real-groups, corpus.py) prints
    # nothing after a producer without a batch; 2.2-2.3 print the stored fields (firstSequence wraps).
    ("2.4",
     "producerId: 1000 producerEpoch: 3 coordinatorEpoch: 7 currentTxnFirstOffset: Some(30) "
     "firstSequence: 5 lastSequence: 9 lastOffset: 41 offsetDelta: 4 timestamp: 1700000000000",
     "producerId: 1001 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: None "),
    ("2.3",
     "producerId: 1000 producerEpoch: 3 coordinatorEpoch: 7 currentTxnFirstOffset: Some(30) "
     "firstSequence: 5 lastSequence: 9 lastOffset: 41 offsetDelta: 4 timestamp: 1700000000000",
     "producerId: 1001 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: None "
     "firstSequence: 2147483647 lastSequence: -1 lastOffset: -1 offsetDelta: 0 timestamp: 1700000000500"),
])
def test_snapshot_lines_per_dialect(tmp_path, version: str, with_meta: str, without_meta: str) -> None:
    path = tmp_path / "00000000000000000042.snapshot"
    path.write_bytes(encode_producer_snapshot([WITH, WITHOUT]))
    run = make_run(version)
    dump_producer_snapshot(run, str(path))
    assert run.out.getvalue() == f"{with_meta}\n{without_meta}\n"
    assert run.err.getvalue() == ""


def test_first_sequence_wrap_in_output() -> None:
    entry = ProducerSnapshotEntry(5, 0, -1, 10, 0, 1, 0, -1)
    assert "firstSequence: 2147483647 lastSequence: -1" in snapshot_entry_line(entry, parse_kafka_version("4.3"))


@pytest.mark.parametrize(("version", "message"), [
    ("4.3", "Snapshot failed schema validation: Snapshot contained an unknown file version 2"),
    ("3.9", "Snapshot contained an unknown file version 2"),
])
def test_corrupt_snapshot_goes_to_stderr_and_run_continues(tmp_path, version: str, message: str) -> None:
    path = tmp_path / "00000000000000000000.snapshot"
    path.write_bytes(encode_producer_snapshot([WITH], version=2))
    run = make_run(version)
    dump_producer_snapshot(run, str(path))
    assert run.out.getvalue() == ""
    assert run.err.getvalue() == message + "\n"
    assert not run.failed


def test_crc_error_text(tmp_path) -> None:
    path = tmp_path / "00000000000000000000.snapshot"
    path.write_bytes(encode_producer_snapshot([], crc=1))
    run = make_run()
    dump_producer_snapshot(run, str(path))
    assert run.err.getvalue().startswith("Snapshot is corrupt (CRC is no longer valid). Stored crc: 1. Computed crc: ")


def test_snapshot_json(tmp_path) -> None:
    path = tmp_path / "00000000000000000000.snapshot"
    path.write_bytes(encode_producer_snapshot([WITH, WITHOUT]))
    run = make_run(json_output=True)
    dump_producer_snapshot(run, str(path))
    objs = [json.loads(line) for line in run.out.getvalue().splitlines()]
    assert objs[0]["type"] == "file" and objs[0]["entries"] == 2
    assert objs[1]["currentTxnFirstOffset"] == 30 and objs[1]["firstSequence"] == 5
    assert objs[2]["currentTxnFirstOffset"] is None and "firstSequence" not in objs[2]


def test_txn_index_lines(tmp_path) -> None:
    path = tmp_path / "00000000000000000000.txnindex"
    path.write_bytes(encode_aborted_txn(1001, 2, 6, 7) + encode_aborted_txn(1003, 9, 9, 7) + b"\x00" * 10)
    run = make_run("3.9")
    dump_txn_index(run, str(path))
    assert run.out.getvalue() == ("version: 0 producerId: 1001 firstOffset: 2 lastOffset: 6 lastStableOffset: 7\n"
                                  "version: 0 producerId: 1003 firstOffset: 9 lastOffset: 9 lastStableOffset: 7\n")


def test_missing_txn_index_prints_nothing(tmp_path) -> None:
    run = make_run()
    dump_txn_index(run, str(tmp_path / "00000000000000000000.txnindex"))
    assert run.out.getvalue() == "" and run.err.getvalue() == "" and not run.failed


def test_txn_index_version_error(tmp_path, monkeypatch) -> None:
    path = tmp_path / "00000000000000000000.txnindex"
    path.write_bytes(encode_aborted_txn(1, 2, 3, 4) + encode_aborted_txn(1, 5, 6, 7, version=0x0100))
    run = make_run()
    monkeypatch.chdir(tmp_path)
    dump_txn_index(run, "00000000000000000000.txnindex")
    assert run.out.getvalue() == "version: 0 producerId: 1 firstOffset: 2 lastOffset: 3 lastStableOffset: 4\n"
    assert run.err.getvalue() == (f"Error: Unexpected aborted transaction version 1 in transaction index "
                                  f"{os.getcwd()}/00000000000000000000.txnindex, current version is 0\n")
    assert run.failed
