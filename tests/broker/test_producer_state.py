"""The one producer-state replay (kdump.broker.producer_state) and what every command asks of it.

Expected values come from Kafka 4.3.0's storage/src/main/java/org/apache/kafka/storage/internals/log/:
ProducerAppendInfo.appendDataBatch/appendEndTxnMarker, ProducerStateManager.lastStableOffset,
truncateAndReload/loadFromSnapshot and LogLoader.recoverSegment.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from kdump.broker.producer_state import ProducerStateManager
from kdump.broker.unified_log import log_end_offset
from kdump.format.checkpoint import OffsetCheckpointEntry, encode_offset_checkpoint
from kdump.format.control import ControlType, encode_control_key, encode_end_txn_marker
from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump.format.snapshot import ProducerSnapshotEntry, encode_producer_snapshot
from kdump.format.txnindex import encode_aborted_txn, parse_aborted_txns
from kdump.log.logdir import read_partition_dir, walk_partitions
from kdump.verify.engine import Options, Tally, check_segment
from kdump.verify.partition_check import expected_aborts, read_state
from kdump.verify.partition_summary import read_partition_checkpoints, summarize_segments
from kdump.verify.transactions import analyze_transactions
from kdump_testing import run_kdump

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
T0 = 1_700_000_000_000


def test_transactions_start_on_data_and_complete_on_markers() -> None:
    state = ProducerStateManager()
    assert state.append_data_batch(1, 0, 10, 10, is_transactional=True)          # starts a transaction
    assert not state.append_data_batch(1, 0, 12, 12, is_transactional=True)      # the same one goes on
    assert state.append_data_batch(2, 5, 11, 11, is_transactional=True)
    aborted = state.append_end_txn_marker(1, 0, 20, is_abort=True)
    # lastStableOffset: the earliest other ongoing transaction's first offset
    assert aborted is not None and (aborted.first_offset, aborted.last_offset, aborted.last_stable_offset) == (10, 20, 11)
    committed = state.append_end_txn_marker(2, 5, 21, is_abort=False)
    assert committed is not None and not committed.is_aborted and committed.last_stable_offset == 22
    # appendEndTxnMarker: a marker from a producer with no ongoing transaction completes nothing
    assert state.append_end_txn_marker(3, 0, 30, is_abort=True) is None
    assert state.first_undecided_offset is None
    state.append_data_batch(1, 1, 40, 41, is_transactional=True)
    assert list(state.ongoing()) == [(1, 40)] and state.first_undecided_offset == 40


def test_a_snapshot_s_ongoing_transaction_completes_on_its_marker() -> None:
    state = ProducerStateManager()
    state.load_snapshot([ProducerSnapshotEntry(9, 0, 2, 2, 2, T0, -1, 0)])
    completed = state.append_end_txn_marker(9, 0, 20, is_abort=True)
    assert completed is not None and completed.aborted_txn().first_offset == 0
    assert state.snapshot_entries() == [ProducerSnapshotEntry(9, 0, 2, 2, 2, -1, -1, -1)]


@dataclass
class Seg:
    base_offset: int
    last_offset: int | None


def test_log_end_offset() -> None:
    assert log_end_offset([]) is None
    assert log_end_offset([Seg(0, 99), Seg(100, None)]) == 100   # empty active segment
    assert log_end_offset([Seg(0, None), Seg(50, None)]) == 50
    assert log_end_offset([Seg(0, 99), Seg(100, 149)]) == 150


def test_txn_summary_and_verify_agree_on_every_fixture_partition() -> None:
    for root in (FIXTURES / "logdirs", *sorted((FIXTURES / "real-broker").glob("*/logs"))):
        for partition in walk_partitions(str(root)):
            facts = [check_segment(seg, False, Options(), Tally())[1] for seg in partition.segments]
            by_verify = [t for t in expected_aborts(read_state(partition), facts) if t.is_aborted]
            report = analyze_transactions(read_partition_dir(partition.path))
            assert [(t.producer_id, t.first_offset, t.last_offset) for t in report.aborted] == \
                [(t.producer_id, t.first_offset, t.last_offset) for t in by_verify], partition.path
            with_logs = [f for f in facts if f.log is not None]
            assert report.log_end_offset == log_end_offset(with_logs) == \
                summarize_segments(partition, read_partition_checkpoints(partition, {})).log_end_offset, partition.path


def _data(offset: int, count: int, pid: int = -1, transactional: bool = False) -> bytes:
    records = [Record(offset + i, T0 + offset + i, b"k", b"v") for i in range(count)]
    return encode_batch_v2(records, base_offset=offset, producer_id=pid, producer_epoch=0 if pid >= 0 else -1,
                           base_sequence=0 if pid >= 0 else -1, is_transactional=transactional)


def _marker(offset: int, pid: int, kind: ControlType = ControlType.ABORT) -> bytes:
    record = Record(offset, T0 + offset, encode_control_key(int(kind)), encode_end_txn_marker(3))
    return encode_batch_v2([record], base_offset=offset, producer_id=pid, producer_epoch=0,
                           is_transactional=True, is_control=True)


def _log_dir(root: Path, segments: dict[int, bytes], *, recovery_point: int, log_start: int | None = None) -> Path:
    part = root / "t-0"
    part.mkdir(parents=True)
    for base, data in segments.items():
        (part / f"{base:020d}.log").write_bytes(data)
        (part / f"{base:020d}.index").write_bytes(b"")
        (part / f"{base:020d}.timeindex").write_bytes(b"")
    (root / "recovery-point-offset-checkpoint").write_bytes(
        encode_offset_checkpoint([OffsetCheckpointEntry("t", 0, recovery_point)]))
    if log_start is not None:
        (root / "log-start-offset-checkpoint").write_bytes(
            encode_offset_checkpoint([OffsetCheckpointEntry("t", 0, log_start)]))
    return part


def test_an_abort_with_no_transaction_of_its_producer_is_no_alarm(tmp_path: Path) -> None:
    """Case 1: plain records, then an ABORT from a producer that wrote nothing here (it added the
    partition to its transaction and aborted before sending): the broker writes no .txnindex entry."""
    logs = tmp_path / "logs"
    _log_dir(logs, {0: _data(0, 5) + _marker(5, 77)}, recovery_point=0)
    verify = run_kdump("verify", str(logs))
    assert verify.exit_code == 0, verify.stdout + verify.stderr
    txn = run_kdump("txn", str(logs), "--json")
    assert txn.exit_code == 0 and json.loads(txn.stdout)["findings"] == [], txn.stdout
    out = tmp_path / "copy"
    assert run_kdump("recover", str(logs), "--out", str(out)).exit_code == 0
    assert not (out / "t-0" / f"{0:020d}.txnindex").exists()
    copy = run_kdump("verify", str(out))
    assert copy.exit_code == 0, copy.stdout + copy.stderr


def test_an_abort_without_its_index_entry_is_an_error_for_txn_and_verify(tmp_path: Path) -> None:
    """Case 8: ``kdump txn`` exits 1 (an error line) where ``verify`` reports the missing entry."""
    logs = tmp_path / "logs"
    _log_dir(logs, {0: _data(0, 2, 5, transactional=True) + _marker(2, 5)}, recovery_point=3)
    txn = run_kdump("txn", str(logs))
    assert txn.exit_code == 1 and "error: " in txn.stdout and "has no .txnindex entry" in txn.stdout, txn.stdout
    assert run_kdump("verify", str(logs)).exit_code == 1


def test_recover_out_keeps_the_entry_kafka_rebuilds_from_a_snapshot(tmp_path: Path) -> None:
    """Case 1: retention deleted the segment with producer 9's data (offsets 0-2); the snapshot at 20
    still holds its ongoing transaction. Recovering segment 20, LogLoader.recoverSegment reloads that
    snapshot (truncateAndReload keeps snapshots in (log start 10, 20]) and the ABORT at 20 completes
    the transaction: CompletedTxn(9, 0, 20), lastStableOffset 21 -> an entry in 20's .txnindex."""
    logs = tmp_path / "logs"
    part = _log_dir(logs, {10: _data(10, 10), 20: _marker(20, 9) + _data(21, 2)}, recovery_point=20, log_start=10)
    ongoing = encode_producer_snapshot([ProducerSnapshotEntry(9, 0, 2, 2, 2, T0, 3, 0)])
    (part / f"{10:020d}.snapshot").write_bytes(ongoing)
    (part / f"{20:020d}.snapshot").write_bytes(ongoing)
    (part / f"{20:020d}.txnindex").write_bytes(encode_aborted_txn(9, 0, 20, 21))    # as the broker wrote it
    assert run_kdump("verify", str(logs)).exit_code == 0
    txn = json.loads(run_kdump("txn", str(part), "--json").stdout)
    assert [(t["outcome"], t["firstOffset"], t["lastOffset"]) for t in txn["transactions"]] == [("ABORT", 0, 20)]
    assert txn["findings"] == []
    out = tmp_path / "copy"
    result = run_kdump("recover", str(logs), "--out", str(out))
    assert result.exit_code == 0, result.stdout + result.stderr
    entries = parse_aborted_txns((out / "t-0" / f"{20:020d}.txnindex").read_bytes(), "copy")
    assert [(e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset) for e in entries] == [(9, 0, 20, 21)]
    copy = run_kdump("verify", str(out))
    assert copy.exit_code == 0, copy.stdout + copy.stderr
