"""``kdump txn`` output: plain text lines and JSON objects from ``TxnReport`` (no parsing, no printing)."""

from __future__ import annotations

from typing import Any

from kdump.render.times import TimeStyle
from kdump.verify.transactions import OPEN, Transaction, TxnReport
from kdump.words import counted


def _span(txn: Transaction, times: TimeStyle) -> str:
    """``time: first..end`` (the marker's time once complete, else the last data batch's)."""
    end = txn.marker_timestamp if txn.marker_timestamp is not None else txn.last_timestamp
    first = "unknown" if txn.first_timestamp is None else times(txn.first_timestamp)
    return f"time: {first}..{'unknown' if end is None else times(end)}"


def _txn_line(txn: Transaction, times: TimeStyle | None = None) -> str:
    parts = [f"{txn.outcome:<6} producerId: {txn.producer_id} producerEpoch: {txn.producer_epoch}",
             f"firstOffset: {txn.first_offset} lastOffset: {txn.last_offset}"]
    if txn.marker_offset is None and txn.last_data_offset is not None:
        parts[-1] = f"firstOffset: {txn.first_offset} lastDataOffset: {txn.last_data_offset}"
    parts.append(f"batches: {txn.batches} records: {txn.records} bytes: {txn.size_bytes}")
    duration = txn.duration_ms
    parts.append(f"durationMs: {duration if duration is not None else 'unknown'}")
    if times is not None:
        parts.append(_span(txn, times))
    if txn.coordinator_epoch is not None:
        parts.append(f"coordinatorEpoch: {txn.coordinator_epoch}")
    if txn.outcome == OPEN:
        parts.append("HANGING (no marker before the log end)")
    return " ".join(parts)


def txn_lines(report: TxnReport, times: TimeStyle | None = None) -> list[str]:
    """The text of one partition; ``times`` (``--time-format``/``--tz``) adds each transaction's time span."""
    lines = [f"Partition {report.topic}-{report.partition} ({report.path})",
             f"  log end offset: {report.log_end_offset if report.log_end_offset is not None else 'none'} "
             f"last stable offset: {report.last_stable_offset if report.last_stable_offset is not None else 'none'}",
             f"  transactions: {len(report.committed)} committed, {len(report.aborted)} aborted, "
             f"{len(report.open)} open; {counted(len(report.index_entries), '.txnindex entry')}"]
    by_producer: dict[int, list[Transaction]] = {}
    for txn in report.transactions:
        by_producer.setdefault(txn.producer_id, []).append(txn)
    for producer_id in sorted(by_producer):
        lines.append(f"  producer {producer_id}:")
        ordered = sorted(by_producer[producer_id], key=lambda t: t.first_offset)
        lines.extend(f"    {_txn_line(t, times)}" for t in ordered)
    for finding in report.findings:
        where = f" at offset {finding.offset}" if finding.offset is not None else ""
        lines.append(f"  {finding.severity}: {finding.file}{where}: {finding.text}")
    return lines


def txn_object(txn: Transaction) -> dict[str, Any]:
    return {"outcome": txn.outcome, "producerId": txn.producer_id, "producerEpoch": txn.producer_epoch,
            "firstOffset": txn.first_offset, "lastOffset": txn.last_offset,
            "lastDataOffset": txn.last_data_offset, "markerOffset": txn.marker_offset,
            "coordinatorEpoch": txn.coordinator_epoch, "batches": txn.batches, "records": txn.records,
            "bytes": txn.size_bytes, "firstTimestamp": txn.first_timestamp,
            "lastTimestamp": txn.last_timestamp, "markerTimestamp": txn.marker_timestamp,
            "durationMs": txn.duration_ms, "lastStableOffset": txn.last_stable_offset,
            "hanging": txn.outcome == OPEN}


def report_object(report: TxnReport) -> dict[str, Any]:
    return {"type": "partitionTransactions", "topic": report.topic, "partition": report.partition,
            "path": report.path, "logEndOffset": report.log_end_offset,
            "lastStableOffset": report.last_stable_offset,
            "transactions": [txn_object(t) for t in report.transactions],
            "txnIndex": [{"path": p, "producerId": e.producer_id, "firstOffset": e.first_offset,
                          "lastOffset": e.last_offset, "lastStableOffset": e.last_stable_offset}
                         for p, e in report.index_entries],
            "findings": [{"severity": f.severity, "path": f.file, "offset": f.offset, "text": f.text}
                         for f in report.findings]}
