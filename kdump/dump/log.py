"""``kdump --files X.log`` / ``X.checkpoint``: the batch and record dump of DumpLogSegments."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator

from kdump.dump.filters import start_position
from kdump.dump.run import DumpRun
from kdump.errors import InputError, KdumpError
from kdump.format.batch import INT32_MAX, Batch
from kdump.format.control import parse_control_record
from kdump.format.record_stream import LazyValue
from kdump.format.records import Record
from kdump.log.batches import PROBE_WINDOW_BYTES, WINDOW_BYTES, LogBatches
from kdump.log.files import (
    base_offset_of,
    java_absolute_path,
    parse_java_long,
    split_temp_suffix,
)
from kdump.log.segment import MAX_SEGMENT_BYTES, ReadOnlyFile
from kdump.log.spill import PairList
from kdump.render.log_text import (
    RecordLinesError,
    batch_line_renderer,
    batch_lines_renderer,
    decoded_texts,
    lazy_record_line,
    record_lines,
)

_LINES_PER_WRITE = 256


def log_header(path: str, run: DumpRun) -> tuple[str, dict[str, object]]:
    """The line after ``Dumping``, and its JSON fields."""
    name = split_temp_suffix(os.path.basename(path))[0]  # X.checkpoint.deleted is still a snapshot
    if name.endswith(".checkpoint"):
        if name == "bootstrap.checkpoint":
            return "KRaft bootstrap snapshot", {"bootstrapSnapshot": True}
        end_offset = parse_java_long(name[0:20]) if len(name) >= 31 else None
        epoch = parse_java_long(name[21:31]) if len(name) >= 31 else None
        if end_offset is None or epoch is None:
            raise InputError("a KRaft snapshot must be named <20-digit end offset>-<10-digit epoch>.checkpoint")
        return (f"Snapshot end offset: {end_offset}, epoch: {epoch}",
                {"snapshotEndOffset": end_offset, "epoch": epoch})
    base = base_offset_of(path)
    return f"{run.dialect.log_header}{base}", {"logStartingOffset": base}


def dump_log(run: DumpRun, path: str) -> None:
    options = run.options
    out = run.out
    header, header_fields = log_header(path, run)
    if not options.json and not os.path.exists(path):
        out.write(header + "\n")  # Kafka prints it before it opens the file
    with ReadOnlyFile(path) as segment:
        # --max-bytes defaults to Integer.MAX_VALUE; unless it was lowered, a segment past 2 GiB is read whole.
        window = segment.size if options.max_bytes >= min(segment.size, INT32_MAX) else options.max_bytes
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


def dump_batches(run: DumpRun, path: str, segment: ReadOnlyFile, start: int, window: int) -> LogBatches | None:
    """Kafka's lines for the batches of ``segment`` from position ``start``, those of ``run.options.filter``
    only; the batches read (for what follows them), or None when the filter's end stopped the scan."""
    options = run.options
    records_options = run.records
    out = run.out
    wanted = options.filter
    if options.json:
        from kdump.render import log_json
    match = wanted.matcher(lambda r: decoded_texts(r, records_options)) if wanted.active else None
    feed = None if match is not None else _OffsetTracker(run, path).feed  # gaps of a whole file only
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
    try:
        for batch in batches:
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


class _OffsetTracker:
    """Non-consecutive offsets of one file, recorded in the run's summaries.

    Kept in a ``PairList``, which spills to a temporary file: a crafted batch of millions of
    records at one offset gives millions of pairs, and Kafka's tool prints every one of them.
    """

    def __init__(self, run: DumpRun, path: str) -> None:
        self.run = run
        self.path = path
        self.previous = -1 if run.dialect.non_consecutive_from_minus_one else None
        self.gaps: PairList | None = None

    def feed(self, records) -> None:  # type: ignore[no-untyped-def]
        previous = self.previous
        for record in records:
            offset = record.offset
            if previous is not None and offset != previous + 1:
                if self.gaps is None:
                    self.gaps = self.run.summaries.non_consecutive.setdefault(java_absolute_path(self.path),
                                                                              PairList())
                self.gaps.append(previous, offset)
            previous = offset
        self.previous = previous
