"""``kdump summary`` output from ``PartitionSummary``: plain lines, Rich renderables, a JSON object.

Renderers never print: the CLI picks one and writes it (Rich only when stdout is a terminal).
``summary_lines`` is the stable plain text, ``summary_renderable`` its per-segment Rich form
(``--detail``); the compact table is ``summary_table``.
Times go through a ``TimeStyle`` (``--time-format``/``--tz``); JSON keeps Kafka's milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from kdump.render.times import TimeStyle
from kdump.verify.partition_summary import CHECKPOINT_MEANING, PartitionSummary, SegmentSummary

EPOCH = TimeStyle()


def _opt(value: object) -> str:
    return "-" if value is None else str(value)


def _range(low: object, high: object) -> str:
    return "-" if low is None else f"{low}..{high}"


def time_range(low: int | None, high: int | None, times: TimeStyle, separator: str = "..") -> str:
    return "-" if low is None or high is None else f"{times(low)}{separator}{times(high)}"


def _sorted(values: Iterable[object]) -> str:
    return ",".join(str(v) for v in sorted(values, key=str)) or "-"


def _checkpoint_text(summary: PartitionSummary) -> str:
    parts = [f"{name}: {summary.checkpoints[name]}" for name in CHECKPOINT_MEANING.values()
             if name in summary.checkpoints]
    return " ".join(parts) if parts else "no checkpoint entries"


def summary_lines(summary: PartitionSummary, times: TimeStyle = EPOCH) -> list[str]:
    low, high = summary.time_range
    state = f" [{summary.state}]" if summary.state else ""
    lines = [
        f"Partition {summary.topic}-{summary.partition}{state} ({summary.path})",
        f"  segments: {len(summary.segments)} logStartOffset: {_opt(summary.log_start_offset)} "
        f"logEndOffset: {_opt(summary.log_end_offset)} bytes: {summary.total('log_bytes')}",
        f"  batches: {summary.total('batches')} records: {summary.total('records')} "
        f"codecs: {_sorted(summary.union('codecs'))} magics: {_sorted(summary.union('magics'))} "
        f"timestamps: {time_range(low, high, times)}",
        f"  producers: {len(summary.union('producers'))} transactionalBatches: "
        f"{summary.total('transactional_batches')} controlBatches: {summary.total('control_batches')} "
        f"snapshots: {len(summary.snapshots)}",
        f"  checkpoints: {_checkpoint_text(summary)}",
    ]
    if summary.leader_epochs:
        lines.append("  leaderEpochs: " + " ".join(f"{e.epoch}@{e.start_offset}" for e in summary.leader_epochs))
    if summary.topic_id:
        lines.append(f"  topicId: {summary.topic_id}")
    for seg in summary.segments:
        lines.append("  " + segment_line(seg))
    for f in summary.findings:
        where = f" at offset {f.offset}" if f.offset is not None else ""
        lines.append(f"  {f.severity}: {f.file}{where}: {f.text}")
    return lines


def segment_line(seg: SegmentSummary) -> str:
    return (f"segment {seg.base_offset:020d}: offsets {_range(seg.first_offset, seg.last_offset)} "
            f"batches: {seg.batches} records: {seg.records} log: {seg.log_bytes} index: {seg.index_bytes} "
            f"timeindex: {seg.time_index_bytes} txnindex: {seg.txn_index_bytes} "
            f"codecs: {_sorted(seg.codecs)} magics: {_sorted(seg.magics)}")


def summary_renderable(summary: PartitionSummary, times: TimeStyle = EPOCH) -> Group:
    """Header lines plus one table row per segment."""
    head = summary_lines(summary, times)[:5]
    table = Table(show_edge=False, pad_edge=False)
    for column in ("base offset", "offsets", "batches", "records", "log bytes", "codecs", "magics", "time range"):
        table.add_column(column, justify="right" if column in ("batches", "records", "log bytes") else "left")
    for seg in summary.segments:
        table.add_row(str(seg.base_offset), _range(seg.first_offset, seg.last_offset), str(seg.batches),
                      str(seg.records), str(seg.log_bytes), _sorted(seg.codecs), _sorted(seg.magics),
                      time_range(seg.min_timestamp, seg.max_timestamp, times))
    styled = {"error": "bold red", "warning": "yellow", "note": "dim"}
    findings = [Text(f"  {f.severity}: {f.text}", style=styled.get(f.severity, "")) for f in summary.findings]
    return Group(Text(head[0], style="bold"), *(Text(line) for line in head[1:]), table, *findings)


def summary_object(summary: PartitionSummary) -> dict[str, Any]:
    low, high = summary.time_range
    return {
        "type": "partitionSummary", "topic": summary.topic, "partition": summary.partition,
        "path": summary.path, "state": summary.state, "logStartOffset": summary.log_start_offset,
        "logEndOffset": summary.log_end_offset, "bytes": summary.total("log_bytes"),
        "batches": summary.total("batches"), "records": summary.total("records"),
        "codecs": sorted(summary.union("codecs"), key=str), "magics": sorted(summary.union("magics"), key=str),
        "minTimestamp": low, "maxTimestamp": high, "producers": sorted(summary.union("producers"), key=str),
        "snapshots": summary.snapshots, "checkpoints": summary.checkpoints, "topicId": summary.topic_id,
        "leaderEpochs": [{"epoch": e.epoch, "startOffset": e.start_offset} for e in summary.leader_epochs],
        "segments": [{"baseOffset": s.base_offset, "path": s.path, "firstOffset": s.first_offset,
                      "lastOffset": s.last_offset, "batches": s.batches, "records": s.records,
                      "logBytes": s.log_bytes, "indexBytes": s.index_bytes, "timeIndexBytes": s.time_index_bytes,
                      "txnIndexBytes": s.txn_index_bytes, "codecs": sorted(s.codecs),
                      "magics": sorted(s.magics), "minTimestamp": s.min_timestamp,
                      "maxTimestamp": s.max_timestamp, "invalidBytes": s.invalid_bytes,
                      "paddingBytes": s.padding_bytes}
                     for s in summary.segments],
        "findings": [{"severity": f.severity, "path": f.file, "offset": f.offset, "text": f.text}
                     for f in summary.findings],
    }
