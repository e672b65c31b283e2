"""``kdump summary`` output from ``PartitionSummary``: plain lines, Rich renderables, a JSON object.

Renderers never print: the CLI picks one and writes it (Rich only when stdout is a terminal).
``partitions_table`` is the compact view (a row per partition, totals per topic and overall);
``summary_lines`` the stable plain text, ``summary_renderable`` its per-segment Rich form (``--detail``).
Times go through a ``TimeStyle`` (``--time-format``/``--tz``); JSON keeps Kafka's milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Group
from rich.filesize import decimal
from rich.table import Table
from rich.text import Text

from kdump.render.times import TimeStyle
from kdump.verify.partition_summary import PartitionSummary, SegmentSummary

EPOCH = TimeStyle()


def _opt(value: object) -> str:
    return "-" if value is None else str(value)


def _range(low: object, high: object) -> str:
    return "-" if low is None else f"{low}..{high}"


def _time_range(low: int | None, high: int | None, times: TimeStyle, separator: str = "..") -> str:
    return "-" if low is None or high is None else f"{times(low)}{separator}{times(high)}"


def _sorted(values: Iterable[object]) -> str:
    return ",".join(str(v) for v in sorted(values, key=str)) or "-"


def _checkpoint_text(summary: PartitionSummary) -> str:
    names = ("recoveryPoint", "highWatermark", "logStartOffset", "firstDirtyOffset")
    parts = [f"{name}: {summary.checkpoints[name]}" for name in names if name in summary.checkpoints]
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
        f"timestamps: {_time_range(low, high, times)}",
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
        lines.append(f"  {f.severity}: {f.path}{where}: {f.text}")
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
                      _time_range(seg.min_timestamp, seg.max_timestamp, times))
    styled = {"error": "bold red", "warning": "yellow", "info": "dim"}
    findings = [Text(f"  {f.severity}: {f.text}", style=styled.get(f.severity, "")) for f in summary.findings]
    return Group(Text(head[0], style="bold"), *(Text(line) for line in head[1:]), table, *findings)


def partition_flags(summary: PartitionSummary) -> str:
    """What a row of the compact table must not hide: state, problems, transactions, padding."""
    flags = [summary.state] if summary.state else []
    errors = sum(1 for f in summary.findings if f.severity == "error")
    warnings = sum(1 for f in summary.findings if f.severity == "warning")
    if errors:
        flags.append(f"{errors} error{'s' if errors > 1 else ''}")
    if warnings:
        flags.append(f"{warnings} warning{'s' if warnings > 1 else ''}")
    if summary.total("transactional_batches"):
        flags.append("txn")
    if summary.total("padding_bytes"):
        flags.append("padded")
    return ", ".join(flags)


def _offsets(summary: PartitionSummary) -> str:
    end = summary.log_end_offset
    if summary.log_start_offset is None or end is None:
        return "-"
    return f"{summary.log_start_offset}..{end - 1}" if end > summary.log_start_offset else f"empty at {end}"


def _lowest(values: Iterable[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


def _highest(values: Iterable[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def partitions_table(summaries: Iterable[PartitionSummary], times: TimeStyle) -> Table:
    """One row per partition sorted by topic then partition number; a total row for each topic of several
    partitions (a single partition's row is its topic's total) and one for all topics."""
    table = Table(show_edge=False, pad_edge=False, collapse_padding=True)
    table.add_column("topic", overflow="fold", min_width=5)
    table.add_column("part", justify="right", no_wrap=True)   # a total row: how many partitions
    table.add_column("segs", justify="right", no_wrap=True)
    table.add_column("records/batches", justify="right", overflow="fold", min_width=5)
    table.add_column("offsets", overflow="fold", min_width=5)
    table.add_column("size", justify="right", no_wrap=True)
    table.add_column("first / last time", overflow="fold")
    table.add_column("flags", overflow="fold", min_width=4)
    ordered = sorted(summaries, key=lambda s: (s.topic, s.partition, s.path))
    topics: dict[str, list[PartitionSummary]] = {}
    for summary in ordered:
        topics.setdefault(summary.topic, []).append(summary)
    for topic, rows in topics.items():
        for s in rows:
            low, high = s.time_range
            table.add_row(topic, str(s.partition), str(len(s.segments)), f"{s.total('records')}/{s.total('batches')}",
                          _offsets(s), decimal(s.total("log_bytes")),
                          _time_range(low, high, times, _WRAPPABLE), partition_flags(s), end_section=len(rows) == 1)
        if len(rows) > 1:
            table.add_row(*_total_row(f"{topic} total", rows, times), style="bold", end_section=True)
    if len(ordered) > 1 and len(topics) > 1:
        table.add_row(*_total_row("all topics", ordered, times), style="bold")
    return table


_WRAPPABLE = "\n"   # a range in a table cell: first and last time on lines of their own


def _total_row(label: str, rows: list[PartitionSummary], times: TimeStyle) -> list[str]:
    low = _lowest(s.time_range[0] for s in rows)
    high = _highest(s.time_range[1] for s in rows)
    flagged = sum(1 for s in rows if any(f.severity == "error" for f in s.findings))
    records = sum(s.total("records") for s in rows)
    batches = sum(s.total("batches") for s in rows)
    return [label, str(len(rows)), str(sum(len(s.segments) for s in rows)), f"{records}/{batches}", "",
            decimal(sum(s.total("log_bytes") for s in rows)),
            _time_range(low, high, times, _WRAPPABLE), f"{flagged} with errors" if flagged else ""]


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
        "findings": [{"severity": f.severity, "path": f.path, "offset": f.offset, "text": f.text}
                     for f in summary.findings],
    }
