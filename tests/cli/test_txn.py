"""``kdump txn``: every committed, aborted and open transaction of a log whose truth the test builds."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kdump.cli.txn import txn
from kdump.format.control import ControlType, encode_control_key, encode_end_txn_marker
from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump.format.txnindex import encode_aborted_txn
from kdump.log.logdir import read_partition_dir
from kdump.verify.transactions import ABORT, COMMIT, OPEN, analyze_transactions

T0 = 1_700_000_000_000


def data(offset: int, count: int, pid: int, ts: int, transactional: bool = True) -> bytes:
    records = [Record(offset + i, ts + i, b"k", b"v%d" % i) for i in range(count)]
    return encode_batch_v2(records, base_offset=offset, producer_id=pid, producer_epoch=0 if pid >= 0 else -1,
                           base_sequence=0 if pid >= 0 else -1, is_transactional=transactional)


def marker(offset: int, pid: int, kind: ControlType, ts: int, coordinator_epoch: int = 5) -> bytes:
    record = Record(offset, ts, encode_control_key(int(kind)), encode_end_txn_marker(coordinator_epoch))
    return encode_batch_v2([record], base_offset=offset, producer_id=pid, producer_epoch=0,
                           is_transactional=True, is_control=True)


# The truth: (producer, outcome, first offset, last offset (marker, or last data offset), records).
# Producer 1003's ABORT at offset 9 follows no data of its own: ProducerAppendInfo.appendEndTxnMarker
# (Kafka 4.3.0) completes no transaction for it, so it is no transaction and has no .txnindex entry.
TRUTH = [
    (1000, COMMIT, 0, 3, 2),     # data 0-1, marker 3
    (1001, ABORT, 2, 6, 3),      # data 2, 4-5, marker 6; LSO at abort = 7 (1002 not yet open) -> see below
    (1002, OPEN, 7, 8, 2),       # data 7-8, never finished: hanging
    (1000, COMMIT, 10, 11, 1),   # data 10, marker 11
]


def build_partition(root: Path, *, index: bool = True) -> Path:
    part = root / "orders-0"
    part.mkdir(parents=True)
    seg0 = (data(0, 2, 1000, T0) + data(2, 1, 1001, T0 + 10) + marker(3, 1000, ControlType.COMMIT, T0 + 20)
            + data(4, 2, 1001, T0 + 30) + marker(6, 1001, ControlType.ABORT, T0 + 50))
    seg7 = (data(7, 2, 1002, T0 + 60) + marker(9, 1003, ControlType.ABORT, T0 + 70)
            + data(10, 1, 1000, T0 + 80) + marker(11, 1000, ControlType.COMMIT, T0 + 95)
            + data(12, 1, -1, T0 + 100, transactional=False))
    (part / "00000000000000000000.log").write_bytes(seg0)
    (part / "00000000000000000007.log").write_bytes(seg7)
    if index:
        # Entries as the broker writes them: LSO = first offset of another open txn, else marker + 1.
        (part / "00000000000000000000.txnindex").write_bytes(encode_aborted_txn(1001, 2, 6, 7))
    return part


def test_replay_finds_every_transaction(tmp_path) -> None:
    report = analyze_transactions(read_partition_dir(str(build_partition(tmp_path))))
    got = sorted((t.producer_id, t.outcome, t.first_offset, t.last_offset, t.records) for t in report.transactions)
    assert got == sorted(TRUTH)
    assert report.log_end_offset == 13
    assert report.last_stable_offset == 7
    assert [t.producer_id for t in report.open] == [1002]
    aborted = {t.producer_id: t for t in report.aborted}
    assert aborted[1001].last_stable_offset == 7 and 1003 not in aborted
    committed = next(t for t in report.committed if t.first_offset == 0)
    assert committed.duration_ms == 20 and committed.coordinator_epoch == 5 and committed.batches == 1
    # Only the hanging transaction is worth a warning; the index agrees with the log.
    assert [(f.severity, f.offset) for f in report.findings] == [("warning", 7)]


def test_missing_and_extra_index_entries(tmp_path) -> None:
    part = build_partition(tmp_path, index=False)
    (part / "00000000000000000007.txnindex").write_bytes(encode_aborted_txn(1004, 8, 12, 13))
    report = analyze_transactions(read_partition_dir(str(part)))
    texts = [(f.severity, f.offset, f.text) for f in report.findings]
    assert any(s == "error" and o == 6 and "has no .txnindex entry" in t for s, o, t in texts)
    assert any(s == "error" and o == 12 and "matches no ABORT marker" in t for s, o, t in texts)


def test_cli_text_and_json(tmp_path) -> None:
    build_partition(tmp_path)
    result = CliRunner().invoke(txn, [str(tmp_path)])
    assert result.exit_code == 3  # a hanging transaction
    out = result.output.splitlines()
    assert out[1] == "  log end offset: 13 last stable offset: 7"
    assert out[2] == "  transactions: 2 committed, 1 aborted, 1 open; 1 .txnindex entry"
    assert "    OPEN   producerId: 1002 producerEpoch: 0 firstOffset: 7 lastDataOffset: 8 batches: 1 records: 2 " \
           "bytes: " in result.output
    assert "HANGING" in result.output
    result = CliRunner().invoke(txn, [str(tmp_path), "--json"])
    obj = json.loads(result.output)
    assert obj["lastStableOffset"] == 7 and sum(t["hanging"] for t in obj["transactions"]) == 1
    assert len(obj["txnIndex"]) == 1


def test_cli_exit_zero_without_open_transactions(tmp_path) -> None:
    part = tmp_path / "t-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(data(0, 1, 7, T0) + marker(1, 7, ControlType.COMMIT, T0 + 1))
    result = CliRunner().invoke(txn, [str(part)])
    assert result.exit_code == 0, result.output
    assert "COMMIT producerId: 7 producerEpoch: 0 firstOffset: 0 lastOffset: 1" in result.output
