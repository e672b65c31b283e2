"""``kdump summary`` on a terminal: one row per partition, sorted by topic then partition number, a
total row for each topic of several partitions (a single partition's row is its topic's total) and
one for all topics. No cell wraps where a narrower layout fits: on a narrow terminal the last time
becomes the span from the first, times lose their milliseconds and zone (named in the header), and
then the segment and batch counts go (``--detail`` and ``--plain`` show everything).

A ``PartitionRow`` keeps only what the table shows, so a run over thousands of partitions holds a
few numbers per partition until the table is printed, not their summaries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.filesize import decimal
from rich.measure import Measurement
from rich.table import Table

from kdump.render.times import TimeStyle, format_timestamp
from kdump.verify.partition_summary import PartitionSummary
from kdump.words import counted


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
            flags.append(counted(count, severity))
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


@dataclass(frozen=True, slots=True)
class _Layout:
    """One way to lay the table out; ``partitions_table`` draws the widest that fits unwrapped."""

    last_time: bool      # a "last time" column (else a "span" column: last minus first time)
    short_times: bool    # ISO times to the second, the zone named once ("2024-05-01 12:00:00")
    segments: bool       # the "segs" column and batch counts beside the record counts


_LAYOUTS = (_Layout(True, False, True), _Layout(False, False, True), _Layout(False, True, True),
            _Layout(False, True, False))


def _span(low: int | None, high: int | None) -> str:
    """``high - low`` for a person: 850ms, 49s, 12m05s, 3h07m, 2d04h (rounded down)."""
    if low is None or high is None:
        return "-"
    ms = high - low
    if ms < 1000:
        return f"{ms}ms"
    seconds = ms // 1000
    minutes, s = divmod(seconds, 60)
    hours, m = divmod(minutes, 60)
    days, h = divmod(hours, 24)
    if days:
        return f"{days}d{h:02d}h"
    if hours:
        return f"{hours}h{m:02d}m"
    return f"{minutes}m{s:02d}s" if minutes else f"{s}s"


def _zone_name(times: TimeStyle) -> str:
    return "UTC" if times.tz is None else str(times.tz)


def _time(ms: int | None, times: TimeStyle, layout: _Layout) -> str:
    if ms is None:
        return "-"
    if layout.short_times:
        if times.fmt == "epoch" or ms < 0:
            return str(ms)
        # "2024-05-01T12:00:00.123+02:00" to the second, "T" as a space; the zone is in the header
        return format_timestamp(ms, "iso", times.tz)[:19].replace("T", " ")
    return times(ms)


class PartitionsTable:
    """The table of some rows, laid out when Rich knows the width: the first of ``_LAYOUTS`` whose
    unwrapped width fits (a cell that wraps splits every timestamp over lines), else the narrowest."""

    def __init__(self, rows: Iterable[PartitionRow], times: TimeStyle) -> None:
        self.rows = sorted(rows, key=lambda r: (r.topic, r.partition, r.path))
        self.times = times

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        unbounded = options.update_width(1 << 20)   # Measurement.get clamps to the width it is given
        for layout in _LAYOUTS:
            table = self.table(layout)
            if Measurement.get(console, unbounded, table).maximum <= options.max_width:
                break
        yield table

    def table(self, layout: _Layout) -> Table:
        times = self.times
        short_zone = layout.short_times and times.fmt != "epoch"
        zone = _zone_name(times) if short_zone else ""
        # "(UTC)" fits above a time; a longer zone name goes below the table not to wrap the header
        caption = f"times in {zone}" if zone and zone != "UTC" else None
        table = Table(show_edge=False, pad_edge=False, collapse_padding=True, caption=caption,
                      caption_justify="left")
        table.add_column("topic", overflow="fold", min_width=5)
        table.add_column("part", justify="right", no_wrap=True)   # in a total row: how many partitions
        if layout.segments:
            table.add_column("segs", justify="right", no_wrap=True)
        table.add_column("records/batches" if layout.segments else "records", justify="right", overflow="fold",
                         min_width=5)
        table.add_column("offsets", overflow="fold", min_width=5)
        table.add_column("size", justify="right", no_wrap=True)
        table.add_column("first time (UTC)" if zone == "UTC" else "first time", overflow="fold")
        table.add_column("last time" if layout.last_time else "span", overflow="fold",
                         justify="left" if layout.last_time else "right")
        table.add_column("flags", overflow="fold", min_width=4)
        topics: dict[str, list[PartitionRow]] = {}
        for row in self.rows:
            topics.setdefault(row.topic, []).append(row)
        for topic, members in topics.items():
            for r in members:
                table.add_row(*_cells(layout, times, topic, str(r.partition), [r], r.offsets, r.flags),
                              end_section=len(members) == 1)
            if len(members) > 1:
                table.add_row(*_total_row(layout, times, f"{topic} total", members), style="bold", end_section=True)
        if len(self.rows) > 1 and len(topics) > 1:
            table.add_row(*_total_row(layout, times, "all topics", self.rows), style="bold")
        return table


def partitions_table(rows: Iterable[PartitionRow], times: TimeStyle) -> PartitionsTable:
    """The table of ``rows`` (see the module doc and ``PartitionsTable``)."""
    return PartitionsTable(rows, times)


def _cells(layout: _Layout, times: TimeStyle, label: str, part: str, rows: list[PartitionRow], offsets: str,
           flags: str) -> list[str]:
    lows = [r.min_timestamp for r in rows if r.min_timestamp is not None]
    highs = [r.max_timestamp for r in rows if r.max_timestamp is not None]
    low, high = (min(lows) if lows else None), (max(highs) if highs else None)
    records = sum(r.records for r in rows)
    cells = [label, part]
    if layout.segments:
        cells += [str(sum(r.segments for r in rows)), f"{records}/{sum(r.batches for r in rows)}"]
    else:
        cells.append(str(records))
    cells += [offsets, decimal(sum(r.log_bytes for r in rows)), _time(low, times, layout),
              _time(high, times, layout) if layout.last_time else _span(low, high), flags]
    return cells


def _total_row(layout: _Layout, times: TimeStyle, label: str, rows: list[PartitionRow]) -> list[str]:
    flagged = sum(1 for r in rows if r.has_errors)
    return _cells(layout, times, label, str(len(rows)), rows, "", f"{flagged} with errors" if flagged else "")
