"""The one transaction replay ``verify`` and ``txn`` share (Kafka's ProducerStateManager), and the one
log end offset rule of ``verify``, ``summary`` and ``txn``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kdump.broker.replay import ABORT, COMMIT, OPEN, TxnReplay, log_end_offset
from kdump.log.logdir import read_partition_dir, walk_partitions
from kdump.verify.engine import Options, Tally, check_segment
from kdump.verify.partition_summary import read_partition_checkpoints, summarize_segments
from kdump.verify.transactions import analyze_transactions

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def test_transactions_open_on_data_and_close_on_markers() -> None:
    replay = TxnReplay()
    first = replay.begin(1, 0, 10)
    assert replay.begin(1, 0, 12) is first            # a later batch of the same open transaction
    other = replay.begin(2, 5, 11)
    aborted = replay.end(1, 0, 20, ABORT)
    # ProducerStateManager.lastStableOffset: the earliest other open transaction's first offset
    assert (aborted.first_offset, aborted.last_offset, aborted.last_stable_offset) == (10, 20, 11)
    committed = replay.end(2, 5, 21, COMMIT)
    assert committed is other and committed.outcome == COMMIT and committed.last_stable_offset is None
    empty = replay.end(3, 0, 30, ABORT)              # a marker with nothing open: CompletedTxn(first = marker)
    assert (empty.first_offset, empty.last_offset, empty.last_stable_offset) == (30, 30, 31)
    hanging = replay.begin(1, 1, 40)
    assert hanging.outcome == OPEN and replay.ongoing == {1: hanging}
    assert [t.first_offset for t in replay.transactions] == [10, 11, 30, 40]
    assert replay.aborted == [aborted, empty]


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
            aborted_by_verify = TxnReplay()
            for fact in facts:
                for kind, pid, offset in fact.txn_events:
                    if kind == "begin":
                        aborted_by_verify.begin(pid, -1, offset)
                    else:
                        aborted_by_verify.end(pid, -1, offset, ABORT if kind == "abort" else COMMIT)
            report = analyze_transactions(read_partition_dir(partition.path))
            assert [(t.producer_id, t.first_offset, t.last_offset) for t in report.aborted] == \
                [(t.producer_id, t.first_offset, t.last_offset) for t in aborted_by_verify.aborted], partition.path
            with_logs = [f for f in facts if f.log is not None]
            assert report.log_end_offset == log_end_offset(with_logs) == \
                summarize_segments(partition, read_partition_checkpoints(partition, {})).log_end_offset, partition.path
