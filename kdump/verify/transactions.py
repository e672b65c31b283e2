"""Transaction forensics for one partition: what ``kdump txn`` reports. Library only, no printing.

The transactions come from the one producer-state replay (kdump.broker.producer_state, Kafka's
ProducerStateManager), fed here with every batch so each transaction also gets its counts, sizes and
times; the aborted ones are then checked against the ``.txnindex`` files by the check ``kdump verify``
runs (kdump.verify.txn_index).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from kdump.broker.producer_state import CompletedTxn, ProducerStateManager
from kdump.broker.unified_log import LogOffsetsSnapshot, load_from_snapshot, log_end_offset
from kdump.errors import KdumpError
from kdump.findings import ERROR, WARNING, Finding
from kdump.format.batch import Batch
from kdump.format.control import parse_control_record
from kdump.format.snapshot import ProducerSnapshotEntry
from kdump.format.txnindex import AbortedTxn
from kdump.log.batches import LogBatches
from kdump.log.logdir import PartitionDir
from kdump.log.segment import ReadOnlyFile
from kdump.log.state_files import read_aborted_txns
from kdump.verify.partition_check import partition_checkpoints
from kdump.verify.txn_index import check_txn_index

COMMIT = "COMMIT"
ABORT = "ABORT"
OPEN = "OPEN"


@dataclass(slots=True)
class Transaction:
    """One transaction as ``kdump txn`` shows it: the producer state's view plus counts and times."""

    producer_id: int
    producer_epoch: int
    first_offset: int
    last_data_offset: int | None = None
    marker_offset: int | None = None
    outcome: str = OPEN
    coordinator_epoch: int | None = None
    batches: int = 0
    records: int = 0
    size_bytes: int = 0
    first_timestamp: int | None = None
    last_timestamp: int | None = None   # max timestamp of its data batches
    marker_timestamp: int | None = None
    last_stable_offset: int | None = None  # for aborts: what the broker writes to .txnindex

    @property
    def last_offset(self) -> int:
        """The marker's offset once complete (Kafka's CompletedTxn.lastOffset), else the last data offset."""
        if self.marker_offset is not None:
            return self.marker_offset
        return self.last_data_offset if self.last_data_offset is not None else self.first_offset

    @property
    def duration_ms(self) -> int | None:
        end = self.marker_timestamp if self.marker_timestamp is not None else self.last_timestamp
        if self.first_timestamp is None or end is None or self.first_timestamp < 0 or end < 0:
            return None
        return end - self.first_timestamp


@dataclass(slots=True)
class TxnReport:
    topic: str
    partition: int
    path: str
    log_end_offset: int | None = None
    offsets: LogOffsetsSnapshot | None = None   # the checkpoints and segments, with the first undecided offset
    transactions: list[Transaction] = field(default_factory=list)   # in order of first offset
    index_entries: list[tuple[str, AbortedTxn]] = field(default_factory=list)
    first_undecided_offset: int | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def open(self) -> list[Transaction]:
        return [t for t in self.transactions if t.outcome == OPEN]

    @property
    def committed(self) -> list[Transaction]:
        return [t for t in self.transactions if t.outcome == COMMIT]

    @property
    def aborted(self) -> list[Transaction]:
        return [t for t in self.transactions if t.outcome == ABORT]

    @property
    def last_stable_offset(self) -> int | None:
        """UnifiedLog.lastStableOffset: the first undecided offset, held below the high watermark (the
        checkpoint's, within the log; the log end offset without one). kdump.broker.unified_log, the one rule."""
        return None if self.offsets is None else self.offsets.last_stable_offset


class _Replay:
    """The producer state fed batch by batch, with a ``Transaction`` row per transaction it starts."""

    def __init__(self, report: TxnReport, snapshot: list[ProducerSnapshotEntry]) -> None:
        self.state = ProducerStateManager()
        self.rows: dict[tuple[int, int], Transaction] = {}    # (producer id, first offset) -> ongoing row
        self.completed: list[CompletedTxn] = []
        self.report = report
        self.state.load_snapshot(snapshot)
        for pid, first in self.state.ongoing():   # begun before the log's first segment
            self._add(Transaction(pid, self.state.producers[pid].producer_epoch, first))

    def _add(self, row: Transaction) -> Transaction:
        self.rows[(row.producer_id, row.first_offset)] = row
        self.report.transactions.append(row)
        return row

    def _row(self, batch: Batch) -> Transaction | None:
        first = self.state.entry(batch.producer_id).current_txn_first_offset
        if first is None:
            return None
        row = self.rows.get((batch.producer_id, first))
        return row or self._add(Transaction(batch.producer_id, batch.producer_epoch, first))

    def data(self, batch: Batch, count: int) -> None:
        self.state.append(batch)
        row = self._row(batch)
        if row is None:
            return
        row.last_data_offset = batch.last_offset
        row.batches += 1
        row.records += count
        row.size_bytes += batch.size
        timestamp = batch.base_timestamp if batch.delete_horizon_ms is None else batch.max_timestamp
        if row.first_timestamp is None:
            row.first_timestamp = timestamp
        row.last_timestamp = batch.max_timestamp if row.last_timestamp is None \
            else max(row.last_timestamp, batch.max_timestamp)

    def marker(self, batches: LogBatches, batch: Batch) -> None:
        records = next(batches.iter_records(batch), [])
        info = parse_control_record(records[0].key, records[0].value) if records else None
        row = self._row(batch)
        completed = self.state.append(batch, info)
        if completed is None or row is None or info is None:
            return    # a marker from a producer with no ongoing transaction completes nothing
        self.completed.append(completed)
        del self.rows[(batch.producer_id, completed.first_offset)]
        row.marker_offset = batch.base_offset
        row.outcome = ABORT if completed.is_aborted else COMMIT
        row.coordinator_epoch = info.coordinator_epoch
        row.marker_timestamp = batch.max_timestamp
        if completed.is_aborted:
            row.last_stable_offset = completed.last_stable_offset


@dataclass(slots=True)
class _Offsets:
    base_offset: int
    last_offset: int | None = None


def analyze_transactions(partition: PartitionDir) -> TxnReport:
    """Replay every segment of ``partition`` and cross-check aborted ranges against its .txnindex files."""
    report = TxnReport(partition.topic, partition.partition, partition.path)
    first_base = partition.segments[0].base_offset if partition.segments else 0
    # The producers a snapshot at the log's start holds (their transactions may have begun before it).
    start, entries = load_from_snapshot(partition.path, -1, first_base)
    replay = _Replay(report, entries)
    read: list[_Offsets] = []
    for segment in partition.segments:
        if segment.log is None:
            continue
        offsets = _Offsets(segment.base_offset)
        read.append(offsets)
        try:
            with ReadOnlyFile(segment.log) as log:
                batches = LogBatches(log, check_crc=False)
                for batch in batches:
                    offsets.last_offset = batch.last_offset
                    if batch.is_legacy or batch.producer_id < 0 or batch.last_offset < start:
                        continue
                    if batch.is_control:
                        replay.marker(batches, batch)
                    else:
                        replay.data(batch, batches.record_count(batch))
        except KdumpError as err:
            report.findings.append(Finding(ERROR, "unreadable", segment.log,
                                           f"stopped reading this segment: {err.reason}", position=err.position))
    report.log_end_offset = log_end_offset(read)
    report.first_undecided_offset = replay.state.first_undecided_offset
    for segment in partition.segments:
        if segment.txn_index is None:
            continue
        try:
            with ReadOnlyFile(segment.txn_index) as txn_index:
                for entry in read_aborted_txns(txn_index, segment.txn_index):
                    report.index_entries.append((segment.txn_index, entry))
        except KdumpError as err:
            report.findings.append(Finding(ERROR, "txn-index-unreadable", segment.txn_index, err.reason,
                                           position=err.position))
    entries_by_key = {(e.producer_id, e.last_offset): (path, e.first_offset, e.last_stable_offset)
                      for path, e in report.index_entries}
    checkpoints, _problems = partition_checkpoints(partition)
    report.offsets = checkpoints.offsets(first_base, report.log_end_offset, report.first_undecided_offset)
    # the .txnindex files are local: what lies below the local log start is in remote storage
    log_start = report.offsets.local_log_start_offset
    report.findings.extend(check_txn_index(report.path, replay.completed, entries_by_key,
                                           [s.base_offset for s in partition.segments], log_start))
    report.findings.extend(_hanging(report))
    return report


def _hanging(report: TxnReport) -> Iterator[Finding]:
    for txn in report.open:
        yield Finding(WARNING, "txn-hanging", report.path,
                      f"transaction of producer {txn.producer_id} (epoch {txn.producer_epoch}) is still open "
                      f"at the log end: it holds the last stable offset at {txn.first_offset} and blocks "
                      f"read_committed consumers", offset=txn.first_offset)


__all__ = ["ABORT", "COMMIT", "OPEN", "Transaction", "TxnReport", "analyze_transactions"]
