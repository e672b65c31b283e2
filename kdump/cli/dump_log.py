"""``kdump --files X.log`` / ``X.checkpoint``: the batch and record dump of DumpLogSegments (spec §2.2)."""

from __future__ import annotations

import os

from kdump.cli.run import INT32_MAX, DumpRun
from kdump.errors import CorruptRecordError, InputError, InvalidRecordError, KdumpError
from kdump.format.batch import scan_batches
from kdump.format.control import parse_control_record
from kdump.format.records import decode_records
from kdump.log.files import base_offset_of, java_absolute_path, parse_java_long, split_temp_suffix
from kdump.log.segment import MappedFile, is_zero_padding
from kdump.render import log_json
from kdump.render.log_text import RecordLinesError, batch_line_renderer, record_lines


_LINES_PER_WRITE = 256
_RELEASE_EVERY = 16 * 1024 * 1024  # bytes between madvise calls that drop scanned pages from RSS


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
    with MappedFile(path) as segment:
        window = segment.size if options.max_bytes >= segment.size else options.max_bytes
        buf = segment.buf
        if options.json:
            out.write(log_json.dumps(log_json.file_object(path, "log", size=segment.size, **header_fields)) + "\n")
        else:
            out.write(header + "\n")
        tracker = _OffsetTracker(run)
        valid_bytes = 0
        next_release = _RELEASE_EVERY
        batch = None
        # Lines are written a few hundred at a time: one write per line halves the speed
        # (PERFORMANCE-NOTES.md), and what was printed before an error must still come out first.
        pending: list[str] = []
        pending_lines = 0
        line_of = batch_line_renderer(run.dialect)

        def flush() -> None:
            nonlocal pending_lines
            if pending:
                pending.append("")
                out.write("\n".join(pending))
                pending.clear()
                pending_lines = 0

        try:
            for batch in scan_batches(buf, 0, window):
                records = decode_records(buf, batch) if options.deep else None
                if options.json:
                    out.write(log_json.dumps(log_json.batch_object(path, batch, records)) + "\n")
                else:
                    pending.append(line_of(batch))
                    pending_lines += 1
                    if records is not None:
                        _check_control(batch, records)
                        pending.extend(record_lines(batch, records, options.records, run.dialect))
                        pending_lines += len(records)
                    if pending_lines >= _LINES_PER_WRITE:
                        flush()
                if records is not None:
                    tracker.feed(records)
                valid_bytes += batch.size
                if valid_bytes >= next_release:
                    segment.release_before(batch.position)
                    next_release = valid_bytes + _RELEASE_EVERY
        except CorruptRecordError as err:
            flush()
            tracker.close(path)
            if err.position is None or not is_zero_padding(buf, err.position, window):
                raise
            # Kafka dies here ("Found record size 0 ..."); the truth is that the rest is preallocated space.
            run.warn(f"Note: {path}: position {err.position}: the remaining {window - err.position} bytes are "
                     f"zero padding (a preallocated or crashed active segment); Kafka's tool stops here with "
                     f"\"{err.reason}\"")
            return
        except KdumpError as err:
            flush()
            if isinstance(err, RecordLinesError):  # what Kafka printed before it failed
                out.write("\n".join(err.printed) + "\n")
            if isinstance(err, InvalidRecordError) and batch is not None and not options.json and \
                    err.position == batch.position:
                # Kafka prints the batch line before it fails on the records; so do we.
                out.write(line_of(batch) + "\n")
            tracker.close(path)
            raise
        flush()
        tracker.close(path)
        invalid = window - valid_bytes
        if invalid > 0 and options.max_bytes == INT32_MAX:
            if options.json:
                out.write(log_json.dumps({"type": "invalidBytes", "path": path, "bytes": invalid,
                                          "position": valid_bytes}) + "\n")
            else:
                out.write(f"Found {invalid} invalid bytes at the end of {os.path.basename(path)}\n")


def _check_control(batch, records) -> None:  # type: ignore[no-untyped-def]
    """Parse control keys up front so a malformed one fails before any of the batch is printed."""
    if batch.is_control:
        for record in records:
            parse_control_record(record.key, record.value)


class _OffsetTracker:
    """Non-consecutive offsets of one file (spec §2.7), recorded in the run at ``close``."""

    def __init__(self, run: DumpRun) -> None:
        self.run = run
        self.previous = -1 if run.dialect.non_consecutive_from_minus_one else None
        self.gaps: list[tuple[int, int]] = []

    def feed(self, records) -> None:  # type: ignore[no-untyped-def]
        previous = self.previous
        gaps = self.gaps
        for record in records:
            offset = record.offset
            if previous is not None and offset != previous + 1:
                gaps.append((previous, offset))
            previous = offset
        self.previous = previous

    def close(self, path: str) -> None:
        if self.gaps:
            self.run.summaries.non_consecutive.setdefault(java_absolute_path(path), []).extend(self.gaps)
