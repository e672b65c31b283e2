"""``kdump summary`` on a terminal: one row per partition, sorted by topic then partition number, a
total row for each topic of several partitions (a single partition's row is its topic's total) and
one for all topics, fitted by Rich to the terminal's width.

A ``PartitionRow`` keeps only what the table shows, so a run over thousands of partitions holds a
few numbers per partition until the table is printed, not their summaries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich.filesize import decimal
from rich.table import Table

from kdump.render.summary_text import time_range
from kdump.render.times import TimeStyle
from kdump.verify.partition_summary import PartitionSummary

_TWO_LINES = "\n"   # a range in a table cell: first and last time on lines of their own


@dataclass(frozen=True, slots=True)
class PartitionRow:
    topic: str
    partition: int
    path: str
    segments: int
    records: int
    batches: int
    offsets: str
    log_bytes: int
    min_timestamp: int | None
    max_timestamp: int | None
    flags: str
    has_errors: bool


def partition_flags(summary: PartitionSummary) -> str:
    """What a row must not hide: state, problems, transactional data, zero padding."""
    flags = [summary.state] if summary.state else []
    for severity in ("error", "warning"):
        count = sum(1 for f in summary.findings if f.severity == severity)
        if count:
            flags.append(f"{count} {severity}{'s' if count > 1 else ''}")
    if summary.total("transactional_batches"):
        flags.append("txn")
    if summary.total("padding_bytes"):
        flags.append("padded")
    return ", ".join(flags)


def _offsets(summary: PartitionSummary) -> str:
    start, end = summary.log_start_offset, summary.log_end_offset
    if start is None or end is None:
        return "-"
    return f"{start}..{end - 1}" if end > start else f"empty at {end}"


def partition_row(summary: PartitionSummary) -> PartitionRow:
    low, high = summary.time_range
    return PartitionRow(summary.topic, summary.partition, summary.path, len(summary.segments),
                        summary.total("records"), summary.total("batches"), _offsets(summary),
                        summary.total("log_bytes"), low, high, partition_flags(summary),
                        any(f.severity == "error" for f in summary.findings))


def partitions_table(rows: Iterable[PartitionRow], times: TimeStyle) -> Table:
    """The table of ``rows`` (see the module doc)."""
    table = Table(show_edge=False, pad_edge=False, collapse_padding=True)
    table.add_column("topic", overflow="fold", min_width=5)
    table.add_column("part", justify="right", no_wrap=True)   # in a total row: how many partitions
    table.add_column("segs", justify="right", no_wrap=True)
    table.add_column("records/batches", justify="right", overflow="fold", min_width=5)
    table.add_column("offsets", overflow="fold", min_width=5)
    table.add_column("size", justify="right", no_wrap=True)
    table.add_column("first / last time", overflow="fold")
    table.add_column("flags", overflow="fold", min_width=4)
    ordered = sorted(rows, key=lambda r: (r.topic, r.partition, r.path))
    topics: dict[str, list[PartitionRow]] = {}
    for row in ordered:
        topics.setdefault(row.topic, []).append(row)
    for topic, members in topics.items():
        for r in members:
            table.add_row(topic, str(r.partition), str(r.segments), f"{r.records}/{r.batches}", r.offsets,
                          decimal(r.log_bytes), time_range(r.min_timestamp, r.max_timestamp, times, _TWO_LINES),
                          r.flags, end_section=len(members) == 1)
        if len(members) > 1:
            table.add_row(*_total_row(f"{topic} total", members, times), style="bold", end_section=True)
    if len(ordered) > 1 and len(topics) > 1:
        table.add_row(*_total_row("all topics", ordered, times), style="bold")
    return table


def _total_row(label: str, rows: list[PartitionRow], times: TimeStyle) -> list[str]:
    lows = [r.min_timestamp for r in rows if r.min_timestamp is not None]
    highs = [r.max_timestamp for r in rows if r.max_timestamp is not None]
    flagged = sum(1 for r in rows if r.has_errors)
    return [label, str(len(rows)), str(sum(r.segments for r in rows)),
            f"{sum(r.records for r in rows)}/{sum(r.batches for r in rows)}", "",
            decimal(sum(r.log_bytes for r in rows)),
            time_range(min(lows) if lows else None, max(highs) if highs else None, times, _TWO_LINES),
            f"{flagged} with errors" if flagged else ""]
