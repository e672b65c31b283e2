"""``kdump summary`` on a terminal: one row per partition, sorted by topic then partition number, a
total row for each topic of several partitions (a single partition's row is its topic's total) and
one for all topics. No cell wraps where a narrower layout fits: on a narrow terminal the last time
becomes the span from the first, times lose their milliseconds and zone (named in the header), the
segment and batch counts go, then the span, the first time, the size and the offsets; a column whose
cells are all empty is left out. Topic names up to 40 characters stay whole (a longer one is shortened
in the middle before a column goes), so on 80 columns a 40-character name leaves room for the counts,
offsets and size, a 24-character one for the first time too (``--detail`` and ``--plain`` show everything).

A ``PartitionRow`` keeps only what the table shows, so a run over thousands of partitions holds a
few numbers per partition until the table is printed, not their summaries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich.cells import cell_len
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


_WIDEST = ("topic", "part", "segs", "records/batches", "offsets", "size", "first time", "last time", "flags")
_SPAN = ("topic", "part", "segs", "records/batches", "offsets", "size", "first time", "span", "flags")
_NARROW = ("topic", "part", "records", "offsets", "size", "first time", "span", "flags")


@dataclass(frozen=True, slots=True)
class _Layout:
    """One way to lay the table out; ``PartitionsTable`` draws the first that fits unwrapped."""

    short_times: bool             # ISO times to the second, the zone named once ("2024-05-01 12:00:00")
    columns: tuple[str, ...]      # the columns shown, in this order (a column of empty cells is left out)


def _without(columns: tuple[str, ...], *names: str) -> tuple[str, ...]:
    return tuple(c for c in columns if c not in names)


# Wide to narrow: the last time becomes the span from the first, times lose their milliseconds and
# zone, the segment and batch counts go, then the span, the first time, the size and the offsets.
_LAYOUTS = (_Layout(False, _WIDEST), _Layout(False, _SPAN), _Layout(True, _SPAN), _Layout(True, _NARROW),
            _Layout(True, _without(_NARROW, "span")), _Layout(True, _without(_NARROW, "span", "first time")),
            _Layout(True, _without(_NARROW, "span", "first time", "size")),
            _Layout(True, _without(_NARROW, "span", "first time", "size", "offsets")))

TOPIC_WIDTH = 40
"""Topic names up to this long are shown whole whatever goes; a longer one is shortened in the middle
before a column is left out (and, where even the narrowest layout does not fit, shorter still)."""
_TOPIC_MIN = 10
_RIGHT = frozenset(("part", "segs", "records/batches", "records", "size", "span"))
_MIN_WIDTH = {"topic": 5, "records/batches": 5, "records": 5, "offsets": 5, "flags": 4}


def shorten(text: str, width: int) -> str:
    """``text`` cut in the middle to ``width`` characters, an ellipsis where the cut is."""
    if len(text) <= width:
        return text
    head = width // 2
    return f"{text[:head]}\u2026{text[len(text) - (width - head - 1):]}"


@dataclass(frozen=True, slots=True)
class _Line:
    """A row of the table: its label (topic, suffix such as " total"; the topic may be shortened) and its
    cells by column name, short and long times both."""

    topic: str
    suffix: str
    cells: dict[str, str]
    total: bool
    end_section: bool

    def label(self, width: int | None) -> str:
        if width is None or not self.topic:
            return self.topic + self.suffix
        return shorten(self.topic, max(width - len(self.suffix), 1)) + self.suffix


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


def _short_time(ms: int | None, times: TimeStyle) -> str:
    if ms is None:
        return "-"
    if times.fmt == "epoch" or ms < 0:
        return str(ms)
    # "2024-05-01T12:00:00.123+02:00" to the second, "T" as a space; the zone is in the header
    return format_timestamp(ms, "iso", times.tz)[:19].replace("T", " ")


class PartitionsTable:
    """The table of some rows, laid out when Rich knows the width: the first of ``_LAYOUTS`` whose
    unwrapped width fits (a cell that wraps splits every timestamp over lines), its topic names whole,
    else up to ``TOPIC_WIDTH`` characters; where none fits, the narrowest with shorter names."""

    def __init__(self, rows: Iterable[PartitionRow], times: TimeStyle) -> None:
        self.rows = sorted(rows, key=lambda r: (r.topic, r.partition, r.path))
        self.times = times
        self.lines = _lines(self.rows, times)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        fitted = self._topic_width(TOPIC_WIDTH)
        for layout in _LAYOUTS:
            for width in (None, fitted):
                if self.width(console, options, layout, width) <= options.max_width:
                    yield self.table(layout, width)
                    return
        layout = _LAYOUTS[-1]
        over = self.width(console, options, layout, fitted) - options.max_width
        yield self.table(layout, self._topic_width(max(fitted - over, _TOPIC_MIN)))

    def _topic_width(self, most: int) -> int:
        """The topic column's width with names up to ``most`` characters whole, longer ones and the totals'
        labels ("<topic> total") shortened to it."""
        longest = max((len(line.topic) for line in self.lines if not line.total), default=0)
        return max([min(longest, most), *(len(line.suffix) for line in self.lines if not line.topic)])

    def width(self, console: Console, options: ConsoleOptions, layout: _Layout, topic_width: int | None) -> int:
        """The table's unwrapped width: that of its header and one row of each column's widest cell."""
        cells = self._shown(layout, topic_width)
        table = self._frame(layout, tuple(cells))
        table.add_row(*(max(column, key=cell_len) for column in cells.values()))
        unbounded = options.update_width(1 << 20)   # Measurement.get clamps to the width it is given
        return Measurement.get(console, unbounded, table).maximum

    def _shown(self, layout: _Layout, topic_width: int | None) -> dict[str, list[str]]:
        """The cells of the layout's columns by column, less the columns whose every cell is empty."""
        cells = {}
        for name in layout.columns:
            if name == "topic":
                column = [line.label(topic_width) for line in self.lines]
            else:
                key = "first time short" if name == "first time" and layout.short_times else name
                column = [line.cells[key] for line in self.lines]
            if any(column):
                cells[name] = column
        return cells

    def _frame(self, layout: _Layout, columns: tuple[str, ...]) -> Table:
        times = self.times
        zone = _zone_name(times) if layout.short_times and times.fmt != "epoch" else ""
        # "(UTC)" fits above a time; a longer zone name goes below the table not to wrap the header
        caption = f"times in {zone}" if zone and zone != "UTC" else None
        table = Table(show_edge=False, pad_edge=False, collapse_padding=True, caption=caption,
                      caption_justify="left")
        for name in columns:
            header = "first time (UTC)" if name == "first time" and zone == "UTC" else name
            if name in _MIN_WIDTH or name.endswith("time"):
                table.add_column(header, justify="right" if name in _RIGHT else "left", overflow="fold",
                                 min_width=_MIN_WIDTH.get(name))
            else:
                table.add_column(header, justify="right" if name in _RIGHT else "left", no_wrap=True)
        return table

    def table(self, layout: _Layout, topic_width: int | None) -> Table:
        """The table in ``layout``, topic names shortened to ``topic_width`` (None: whole)."""
        cells = self._shown(layout, topic_width)
        table = self._frame(layout, tuple(cells))
        for line, row in zip(self.lines, zip(*cells.values(), strict=True), strict=True):
            table.add_row(*row, style="bold" if line.total else None, end_section=line.end_section)
        return table


def partitions_table(rows: Iterable[PartitionRow], times: TimeStyle) -> PartitionsTable:
    """The table of ``rows`` (see the module doc and ``PartitionsTable``)."""
    return PartitionsTable(rows, times)


def _lines(rows: list[PartitionRow], times: TimeStyle) -> list[_Line]:
    """A line per partition, a total per topic of several partitions, one for all topics of several."""
    topics: dict[str, list[PartitionRow]] = {}
    for row in rows:
        topics.setdefault(row.topic, []).append(row)
    lines = []
    for topic, members in topics.items():
        for r in members:
            lines.append(_Line(topic, "", _cells(times, str(r.partition), [r], r.offsets, r.flags), False,
                               len(members) == 1))
        if len(members) > 1:
            lines.append(_Line(topic, " total", _total_cells(times, members), True, True))
    if len(rows) > 1 and len(topics) > 1:
        lines.append(_Line("", "all topics", _total_cells(times, rows), True, False))
    return lines


def _cells(times: TimeStyle, part: str, rows: list[PartitionRow], offsets: str, flags: str) -> dict[str, str]:
    """Every column's cell but the topic's, by column name ("first time short": to the second)."""
    lows = [r.min_timestamp for r in rows if r.min_timestamp is not None]
    highs = [r.max_timestamp for r in rows if r.max_timestamp is not None]
    low, high = (min(lows) if lows else None), (max(highs) if highs else None)
    records = sum(r.records for r in rows)
    return {"part": part, "segs": str(sum(r.segments for r in rows)),
            "records/batches": f"{records}/{sum(r.batches for r in rows)}", "records": str(records),
            "offsets": offsets, "size": decimal(sum(r.log_bytes for r in rows)),
            "first time": "-" if low is None else times(low), "first time short": _short_time(low, times),
            "last time": "-" if high is None else times(high), "span": _span(low, high), "flags": flags}


def _total_cells(times: TimeStyle, rows: list[PartitionRow]) -> dict[str, str]:
    flagged = sum(1 for r in rows if r.has_errors)
    return _cells(times, str(len(rows)), rows, "", f"{flagged} with errors" if flagged else "")
