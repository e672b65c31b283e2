"""Transaction forensics for one partition: what ``kdump txn`` reports. Library only, no printing.

The transactions come from the same replay ``kdump verify`` uses (``kdump.broker.replay``, Kafka's
ProducerStateManager), fed here with every batch so each transaction also gets its counts, sizes and
times; the aborted ones are then cross-checked against the ``.txnindex`` files.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from kdump.broker.replay import ABORT, COMMIT, OPEN, Transaction, TxnReplay, log_end_offset, record_count
from kdump.errors import KdumpError
from kdump.format.batch import Batch
from kdump.format.control import ControlType, parse_control_record
from kdump.format.txnindex import AbortedTxn
from kdump.log.batches import LogBatches
from kdump.log.logdir import PartitionDir
from kdump.log.segment import ReadOnlyFile
from kdump.log.state_files import read_aborted_txns
from kdump.verify.findings import LogFinding


@dataclass(slots=True)
class TxnReport:
    topic: str
    partition: int
    path: str
    log_end_offset: int | None = None
    transactions: list[Transaction] = field(default_factory=list)   # in order of first offset
    index_entries: list[tuple[str, AbortedTxn]] = field(default_factory=list)
    findings: list[LogFinding] = field(default_factory=list)

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
        """The LSO the log's content implies: first offset of the earliest open transaction, else the LEO."""
        opened = self.open
        return min(t.first_offset for t in opened) if opened else self.log_end_offset


def _add_data(replay: TxnReplay, batch: Batch, count: int) -> None:
    """A transactional data batch, with what ``kdump txn`` shows of its transaction."""
    txn = replay.begin(batch.producer_id, batch.producer_epoch, batch.base_offset)
    txn.last_data_offset = batch.last_offset
    txn.batches += 1
    txn.records += count
    txn.size_bytes += batch.size
    timestamp = batch.base_timestamp if batch.delete_horizon_ms is None else batch.max_timestamp
    if txn.first_timestamp is None:
        txn.first_timestamp = timestamp
    txn.last_timestamp = batch.max_timestamp if txn.last_timestamp is None \
        else max(txn.last_timestamp, batch.max_timestamp)


def _add_marker(replay: TxnReplay, batches: LogBatches, batch: Batch) -> None:
    """A control batch: ends the producer's transaction when it is an ABORT or COMMIT marker."""
    records = next(batches.iter_records(batch), [])
    if not records:
        return
    info = parse_control_record(records[0].key, records[0].value)
    if info.type_id in (ControlType.ABORT, ControlType.COMMIT):
        outcome = ABORT if info.type_id == ControlType.ABORT else COMMIT
        txn = replay.end(batch.producer_id, batch.producer_epoch, batch.base_offset, outcome)
        txn.coordinator_epoch = info.coordinator_epoch
        txn.marker_timestamp = batch.max_timestamp


@dataclass(slots=True)
class _Offsets:
    base_offset: int
    last_offset: int | None = None


def analyze_transactions(partition: PartitionDir) -> TxnReport:
    """Replay every segment of ``partition`` and cross-check aborted ranges against its .txnindex files."""
    report = TxnReport(partition.topic, partition.partition, partition.path)
    replay = TxnReplay()
    report.transactions = replay.transactions
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
                    if batch.producer_id < 0 or not batch.is_transactional:
                        continue
                    if batch.is_control:
                        _add_marker(replay, batches, batch)
                    else:
                        _add_data(replay, batch, record_count(batches, batch))
        except KdumpError as err:
            report.findings.append(LogFinding("error", segment.log, err.position,
                                           f"stopped reading this segment: {err.reason}"))
    report.log_end_offset = log_end_offset(read)
    for segment in partition.segments:
        if segment.txn_index is None:
            continue
        try:
            with ReadOnlyFile(segment.txn_index) as txn_index:
                for entry in read_aborted_txns(txn_index, segment.txn_index):
                    report.index_entries.append((segment.txn_index, entry))
        except KdumpError as err:
            report.findings.append(LogFinding("error", segment.txn_index, err.position, err.reason))
    report.findings.extend(cross_check(report, partition))
    return report


def cross_check(report: TxnReport, partition: PartitionDir) -> Iterator[LogFinding]:
    """Aborted transactions in the log versus entries in the .txnindex files."""
    in_log = {(t.producer_id, t.first_offset, t.last_offset): t for t in report.aborted}
    in_index = {(e.producer_id, e.first_offset, e.last_offset): (path, e) for path, e in report.index_entries}
    first_offset = partition.segments[0].base_offset if partition.segments else 0
    for key, txn in in_log.items():
        if key not in in_index:
            yield LogFinding("warning", report.path, txn.marker_offset,
                          f"aborted transaction of producer {key[0]} (offsets {key[1]}-{key[2]}) has no "
                          f".txnindex entry; read_committed consumers will see its records")
            continue
        path, entry = in_index[key]
        bases = [s.base_offset for s in partition.segments]
        owner = max((b for b in bases if b <= key[2]), default=None)
        if owner is not None and os.path.basename(path).split(".", 1)[0] != f"{owner:020d}":
            yield LogFinding("warning", path, key[2], f"entry for the abort at offset {key[2]} is stored in the "
                                                   f"wrong segment's .txnindex (expected {owner:020d}.txnindex)")
        if txn.last_stable_offset is not None and entry.last_stable_offset != txn.last_stable_offset \
                and key[1] >= first_offset:
            yield LogFinding("info", path, key[2], f"lastStableOffset {entry.last_stable_offset} in the index, "
                                                f"{txn.last_stable_offset} recomputed from the log")
    for key, (path, _entry) in in_index.items():
        if key in in_log:
            continue
        if any(t.producer_id == key[0] and t.marker_offset == key[2] for t in report.aborted):
            yield LogFinding("warning", path, key[2], f"index entry for producer {key[0]} says the aborted "
                                                   f"range starts at {key[1]}, the log says otherwise")
        elif key[2] < first_offset:
            yield LogFinding("info", path, key[2], f"index entry for producer {key[0]} ({key[1]}-{key[2]}) "
                                                f"refers to offsets no longer in the log")
        else:
            yield LogFinding("error", path, key[2], f"index entry for producer {key[0]} ({key[1]}-{key[2]}) "
                                                 f"matches no ABORT marker in the log")
    for txn in report.open:
        yield LogFinding("warning", report.path, txn.first_offset,
                      f"transaction of producer {txn.producer_id} (epoch {txn.producer_epoch}) is still open "
                      f"at the log end: it holds the last stable offset at {txn.first_offset} and blocks "
                      f"read_committed consumers")


__all__ = ["ABORT", "COMMIT", "OPEN", "Transaction", "TxnReport", "analyze_transactions", "cross_check"]
