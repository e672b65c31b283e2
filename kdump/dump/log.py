"""``kdump --files X.log`` / ``X.checkpoint``: the batch and record dump of DumpLogSegments."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from kdump.dump.filters import start_position
from kdump.dump.run import DumpRun
from kdump.dump.text_bytes import utf8_writer
from kdump.errors import CorruptRecordError, InputError, KdumpError
from kdump.format.batch import INT32_MAX, Batch
from kdump.format.control import parse_control_record
from kdump.format.record_stream import LazyValue
from kdump.format.records import Record
from kdump.log.batches import PROBE_WINDOW_BYTES, WINDOW_BYTES, LogBatches
from kdump.log.files import (
    base_offset_of,
    java_absolute_path,
    parse_kraft_snapshot_name,
    split_temp_suffix,
)
from kdump.log.segment import MAX_SEGMENT_BYTES, ReadOnlyFile
from kdump.log.spill import PairList
from kdump.render.log_text import (
    DataLines,
    RecordLinesError,
    batch_line_renderer,
    batch_lines_renderer,
    data_lines_renderer,
    decoded_texts,
    lazy_record_line,
    record_lines,
)
from kdump.render.summaries import DumpSummaries

_LINES_PER_WRITE = 256


def log_header(path: str, run: DumpRun) -> tuple[str, dict[str, object]]:
    """The line after ``Dumping``, and its JSON fields."""
    name = split_temp_suffix(os.path.basename(path))[0]  # X.checkpoint.deleted is still a snapshot
    if name.endswith(".checkpoint"):
        if name == "bootstrap.checkpoint":
            return "KRaft bootstrap snapshot", {"bootstrapSnapshot": True}
        parsed = parse_kraft_snapshot_name(name)
        if parsed is None:
            raise InputError("a KRaft snapshot must be named <20-digit end offset>-<10-digit epoch>.checkpoint")
        end_offset, epoch = parsed
        return (f"Snapshot end offset: {end_offset}, epoch: {epoch}",
                {"snapshotEndOffset": end_offset, "epoch": epoch})
    base = base_offset_of(path)
    return f"{run.dialect.log_header}{base}", {"logStartingOffset": base}


def dump_window(size: int, max_bytes: int) -> int:
    """The bytes of a ``size``-byte segment a dump reads: --max-bytes defaults to Integer.MAX_VALUE; unless
    it was lowered, a segment past 2 GiB is read whole."""
    return size if max_bytes >= min(size, INT32_MAX) else max_bytes


class ScanEnd(NamedTuple):
    """Where a dump's walk of the batches ended: after its last complete entry, and the zero padding it
    stopped at (None: it did not stop at padding). ``LogBatches`` has both too."""

    valid_end: int
    padding_error: CorruptRecordError | None


class DumpedRange(NamedTuple):
    """What a worker's dump of the byte range ``[start, end)`` of a segment (``dump_range``) ended with."""

    start: int
    end: int
    valid_end: int
    padding_error: CorruptRecordError | None
    error: KdumpError | None           # what stopped it, after the lines it wrote before it
    first_offset: int | None           # its first and last record offsets, for the offset gaps between ranges
    last_offset: int | None


class RecordedRanges(NamedTuple):
    """A segment dumped in ranges by workers (``--jobs``, ``kdump.dump.files``): its size when the ranges were
    planned, and what each range ended with, in order, each yielded once its recorded output is written out."""

    path: str
    size: int
    played: Iterator[tuple[DumpedRange, DumpSummaries]]


def dump_log(run: DumpRun, path: str) -> None:
    options = run.options
    out = run.out
    header, header_fields = log_header(path, run)
    ranges = run.ranges if run.ranges is not None and run.ranges.path == path else None
    if not options.json and not os.path.exists(path):
        out.write(header + "\n")  # Kafka prints it before it opens the file
    # A segment dumped in ranges is read as the file was when they were planned.
    with ReadOnlyFile(path, size=None if ranges is None else ranges.size) as segment:
        window = dump_window(segment.size, options.max_bytes)
        if options.json:
            from kdump.render import log_json  # here: a text dump needs no JSON (json's import is 2 ms of start-up)

            run.emit(log_json.file_object(path, "log", size=segment.size, **header_fields))
        else:
            out.write(header + "\n")
        if segment.size > MAX_SEGMENT_BYTES:
            run.warn(f"Note: {path}: {segment.size} bytes is past Kafka's segment limit of {MAX_SEGMENT_BYTES} "
                     f"(Integer.MAX_VALUE): Kafka's tool and broker refuse to open it (\"The size of segment ... is "
                     f"larger than the maximum allowed segment size\"); kdump reads all of it")
        start, note = start_position(options.filter, path, segment)
        if note is not None:
            run.warn(f"Note: {path}: {note}")
        if ranges is not None:
            batches: ScanEnd | LogBatches | None = join_ranges(run, path, ranges.played, segment, window)
        else:
            batches = dump_batches(run, path, segment, start, window)
        if batches is None:
            return  # stopped at the filter's end: what follows was not read
        padding = batches.padding_error
        if padding is not None:
            # Kafka's tool dies here; the truth is that the rest is preallocated space.
            run.warn(f"Note: {path}: position {padding.position}: the remaining {window - batches.valid_end} bytes "
                     f"are zero padding (a preallocated or crashed active segment); Kafka's tool stops here with "
                     f"\"{padding.reason}\"")
            return
        valid_bytes = batches.valid_end
        invalid = window - valid_bytes
        if invalid > 0 and options.max_bytes == INT32_MAX:
            run.emit({"type": "invalidBytes", "path": path, "bytes": invalid, "position": valid_bytes},
                     f"Found {invalid} invalid bytes at the end of {os.path.basename(path)}")
        grown = segment.grown_by()
        if grown:
            run.warn(f"Note: {path}: the file grew by {grown} bytes while kdump read it (a live segment); "
                     f"this dump covers its first {segment.size} bytes")


def dump_range(run: DumpRun, path: str, start: int, end: int, size: int) -> DumpedRange:
    """A worker's share of a segment's dump (``--jobs``): the lines of the batches in ``[start, end)``, which
    starts at a batch (``kdump.log.ranges.batch_ranges``), of the file as it was at ``size``, on ``run``'s
    streams, and how it ended, for ``join_ranges``. Its offset gaps are its own; the one before its first
    record is the parent's to find. The file's lines before and after its batches (header, notes,
    ``Error:``) are the parent's too."""
    tracker = _OffsetTracker(run, path, previous=None)
    try:
        with ReadOnlyFile(path, size=size) as segment:
            batches = dump_batches(run, path, segment, start, end, tracker=tracker)
    except KdumpError as err:
        return DumpedRange(start, end, start, None, err, tracker.first, tracker.previous)
    assert batches is not None, "a filtered dump is not split"
    return DumpedRange(start, end, batches.valid_end, batches.padding_error, None, tracker.first, tracker.previous)


def join_ranges(run: DumpRun, path: str, played: Iterable[tuple[DumpedRange, DumpSummaries]],
                segment: ReadOnlyFile, window: int) -> ScanEnd | LogBatches:
    """The end of a dump of ``segment`` whose batches workers dumped in ranges (``dump_range``) up to ``window``,
    as one walk of them ends: ``played`` writes each range's output in turn; here the offset gaps found in each
    join the run's, with the gap across the boundary before it, and the error that stopped a range is raised
    (the ranges after it are not played: one walk stops there). A range that did not end where the next begins
    (its next entry runs past its end, or zeros fill the rest of it) leaves the walk somewhere no range starts:
    the rest is dumped here, from where it ended, as one walk goes on from there."""
    tracker = _OffsetTracker(run, path)
    for dumped, summaries in played:
        tracker.join(dumped.first_offset, dumped.last_offset)
        run.summaries.absorb(summaries)
        if dumped.error is not None:
            raise dumped.error
        if dumped.end >= window:
            return ScanEnd(dumped.valid_end, dumped.padding_error)
        if dumped.valid_end != dumped.end or dumped.padding_error is not None:
            batches = dump_batches(run, path, segment, dumped.valid_end, window, tracker=tracker)
            assert batches is not None, "a filtered dump is not split"
            return batches
    raise AssertionError("the last range of a segment ends at its window")


def dump_batches(run: DumpRun, path: str, segment: ReadOnlyFile, start: int, window: int, *,
                 tracker: _OffsetTracker | None = None) -> LogBatches | None:
    """Kafka's lines for the batches of ``segment`` from position ``start``, those of ``run.options.filter``
    only; the batches read (for what follows them), or None when the filter's end stopped the scan.
    ``tracker`` follows the offsets for the run's offset gaps (by default from the file's start)."""
    options = run.options
    records_options = run.records
    out = run.out
    wanted = options.filter
    if options.json:
        from kdump.render import log_json
    match = wanted.matcher(lambda r: decoded_texts(r, records_options)) if wanted.active else None
    # Offset gaps of a whole file (or of a worker's range of it) only.
    if match is None:
        tracker = tracker or _OffsetTracker(run, path)
    feed = None if tracker is None or match is not None else tracker.feed
    # A bounded filter reads a few batches: a small first window (it grows for a larger batch).
    bounded = match is not None and (wanted.last_offset is not None or wanted.limit is not None)
    batches = LogBatches(segment, start, window, window_bytes=PROBE_WINDOW_BYTES if bounded else WINDOW_BYTES)
    batch = None
    # Lines are written a few hundred at a time: one write per line halves the speed
    # (benchmarks/bench_dump.py), and what was printed before an error must still come out first.
    pending: list[str] = []
    pending_lines = 0
    line_of = batch_line_renderer(run.dialect, records_options.times)
    if match is None and not options.deep and not options.json:
        # A shallow dump: batch lines only, a run of batches at a time (most of a large segment's time).
        _dump_batch_runs(run, batches, line_of)
        return batches

    def flush() -> None:
        nonlocal pending_lines
        if pending:
            pending.append("")
            out.write("\n".join(pending))
            pending.clear()
            pending_lines = 0

    # Records come a group at a time (a compressed batch may hold millions); a large value is read
    # again only when it is written out, piece by piece. The key/value filters and JSON's decoded
    # texts hold the whole value.
    values = wanted.key is not None or wanted.value is not None or (records_options.print_contents and options.json)
    written = None   # the batch whose own line is already out
    previous_last: int | None = None
    data_lines = None if match is not None or options.json or not options.deep else data_lines_renderer(
        records_options, run.dialect)
    source: Iterable[Batch] = batches
    if data_lines is not None and tracker is not None:
        source = _unwritten_batches(batches, data_lines, tracker, flush, utf8_writer(out))
    try:
        for batch in source:
            if match is not None and wanted.past_end(batch, previous_last):
                flush()
                return None
            previous_last = batch.last_offset
            groups = batches.iter_records(batch, values=values) if options.deep else None
            if match is not None and groups is not None:
                groups = _matching(groups, match, batch.is_control, run)
            if groups is None and match is not None:
                pass  # no matching record: no batch line
            elif options.json:
                for chunk in log_json.batch_chunks(path, batch, groups, records_options, feed):
                    out.write(chunk)
                    written = batch
            else:
                pending.append(line_of(batch))
                pending_lines += 1
                for records in groups or ():
                    _check_control(batch, records)
                    if records_options.print_contents and _holds_lazy_value(records):
                        flush()
                        for piece in lazy_record_line(batch, records[0], records_options, run.dialect):
                            out.write(piece)
                    else:
                        pending.extend(record_lines(batch, records, records_options, run.dialect))
                        pending_lines += len(records)
                    if feed is not None:
                        feed(records)
                    if pending_lines >= _LINES_PER_WRITE:
                        flush()
                if pending_lines >= _LINES_PER_WRITE:
                    flush()
            if match is not None and run.limit_reached:  # before the next batch is even read
                flush()
                return None
    except KdumpError as err:
        flush()
        # In text the batch line and the records before the bad one are out now, as Kafka prints them.
        if isinstance(err, RecordLinesError):  # and what Kafka printed of the record it failed on
            out.write("\n".join(err.printed) + "\n")
        if options.json and batch is not None and err.position == batch.position:
            # The batch was read, its records not (all of them): keep it, with the error.
            out.write(log_json.dumps(log_json.batch_object(path, batch, err.reason) if written is not batch
                                     else log_json.records_error_object(path, batch, err.reason)) + "\n")
        raise
    flush()
    return batches


def _dump_batch_runs(run: DumpRun, batches: LogBatches, line_of: Callable[[Batch], str]) -> None:
    """The batch lines of a shallow dump, one write per run of batches (``LogBatches.runs``)."""
    lines_of = batch_lines_renderer(run.dialect, run.records.times)
    out = run.out
    for batch_run in batches.runs():
        try:
            text = lines_of(batch_run)
        except KdumpError:
            # A batch Kafka's tool cannot print: the lines before it come out first, as Kafka prints them.
            printed = []
            try:
                for batch in batch_run:
                    printed.append(line_of(batch) + "\n")
            finally:
                out.write("".join(printed))
            raise
        out.write(text)


def _unwritten_batches(batches: LogBatches, data_lines: DataLines, tracker: _OffsetTracker, flush: Callable[[], None],
                       write: Callable[[memoryview], object]) -> Iterator[Batch]:
    """A deep text dump's batches a run at a time: the lines of as many batches in a row as the C renderer
    writes (uncompressed v2 data batches) go out in one write, the rest of the run's batches are yielded for
    the caller to print (then the C renderer goes on after each). Why: a Python loop per batch and a Record
    per record cost more than the text itself (benchmarks/bench_real_tool.py)."""
    for batch_run in batches.runs():
        window = batches.window()
        if window is None:   # an entry too large to hold: read as a stream by the caller
            yield from batch_run
            continue
        view, base = window
        index = 0
        try:
            while index < len(batch_run):
                text, index, first, last, gaps = data_lines(view, base, batch_run, index, tracker.previous)
                if text:
                    flush()
                    write(text)
                    tracker.absorb(first, last, gaps)
                if index < len(batch_run):
                    yield batch_run[index]
                    index += 1
        finally:
            view.release()


def _holds_lazy_value(records: list[Record]) -> bool:
    # A record too large for the window comes alone in its group (format.record_stream).
    return len(records) == 1 and isinstance(records[0].value, LazyValue)


def _matching(groups: Iterator[list[Record]], match: Callable[[Record, bool], bool], is_control: bool,
              run: DumpRun) -> Iterator[list[Record]] | None:
    """The batch's matching records a group at a time, or None when it holds none (no batch line then)."""
    kept = (records for records in ([r for r in group if match(r, is_control) and run.take()] for group in groups)
            if records)
    first = next(kept, None)
    return None if first is None else itertools.chain((first,), kept)


def _check_control(batch, records) -> None:  # type: ignore[no-untyped-def]
    """Parse control keys up front so a malformed one fails before any of the batch is printed."""
    if batch.is_control:
        for record in records:
            parse_control_record(record.key, record.value)


_FROM_THE_START = -2   # not an offset: ``_OffsetTracker`` starts as the dialect starts a file


class _OffsetTracker:
    """Non-consecutive offsets of one file, recorded in the run's summaries.

    Kept in a ``PairList``, which spills to a temporary file: a crafted batch of millions of
    records at one offset gives millions of pairs, and Kafka's tool prints every one of them.
    ``previous`` None follows a range of the file that starts after its first record (``dump_range``).
    """

    def __init__(self, run: DumpRun, path: str, previous: int | None = _FROM_THE_START) -> None:
        self.run = run
        self.path = path
        if previous == _FROM_THE_START:
            # DumpLogSegments.dumpLog (Kafka 4.3.0) starts from lastOffset = -1 for the first record.
            previous = -1 if run.dialect.non_consecutive_from_minus_one else None
        self.previous = previous
        self.first: int | None = None
        self.gaps: PairList | None = None

    def _gap(self, previous: int, offset: int) -> None:
        if self.gaps is None:
            self.gaps = self.run.summaries.non_consecutive.setdefault(java_absolute_path(self.path), PairList())
        self.gaps.append(previous, offset)

    def feed(self, records) -> None:  # type: ignore[no-untyped-def]
        previous = self.previous
        if self.first is None and records:
            self.first = records[0].offset
        for record in records:
            offset = record.offset
            if previous is not None and offset != previous + 1:
                self._gap(previous, offset)
            previous = offset
        self.previous = previous

    def absorb(self, first: int | None, last: int | None, gaps: list[tuple[int, int]]) -> None:
        """What ``feed`` finds in records it did not see (the C renderer followed them from ``previous``):
        their first and last offsets, and the gaps among them, with the one before the first."""
        if self.first is None:
            self.first = first
        for previous, offset in gaps:
            self._gap(previous, offset)
        self.previous = last

    def join(self, first: int | None, last: int | None) -> None:
        """Records ``first``..``last`` were followed elsewhere (a worker's range, whose own gaps come next in
        the run's summaries): the gap before ``first``, as ``feed`` would have found it."""
        if first is None or last is None:
            return   # a range without records
        if self.previous is not None and first != self.previous + 1:
            self._gap(self.previous, first)
        self.previous = last
