"""``kdump --files X.index`` / ``X.timeindex``: DumpLogSegments' index dumps (spec §2.3, §2.4, §2.7).

Stdout lines and the end-of-run summaries are Kafka's, in the ``--kafka-version`` dialect. Where
Kafka's tool crashes (missing ``.log`` or ``.index``, an entry past the end of the log, a batch
larger than ``--max-message-size``, an empty active segment with a preallocated index) kdump
writes one ``Note:`` line to stderr saying what is true and goes on. Files are only ever mapped
read-only: Kafka's tool creates a missing ``.index`` when dumping a time index; kdump does not.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from kdump.cli.run import DumpRun
from kdump.errors import IndexFormatError, KdumpError
from kdump.format.batch import Batch, read_batch, scan_batches
from kdump.format.index import offset_index_sanity_check, time_index_sanity_check
from kdump.format.records import decode_records
from kdump.log.files import base_offset_of, java_absolute_path, java_path, sibling
from kdump.log.indexes import OffsetIndex, TimeIndex
from kdump.log.segment import MappedFile
from kdump.render import log_json


def _open_log(run: DumpRun, path: str, what: str) -> MappedFile | None:
    """The segment's .log, or None after a note (Kafka's tool dies with NoSuchFileException)."""
    log_path = sibling(path, ".log")
    if not os.path.exists(log_path):
        run.warn(f"Note: {java_path(path)}: log file missing ({os.path.basename(log_path)}); {what}")
        return None
    return MappedFile(log_path)


@contextmanager
def _index_and_log(run: DumpRun, path: str, index_type: Any) -> Iterator[tuple[Any, MappedFile | None]]:
    """The index over a read-only map and its segment's .log (None when missing), closed in order."""
    base = base_offset_of(path)  # a bad name is reported before a missing file, as before
    with MappedFile(path) as mapped, ExitStack() as stack:
        index = index_type(mapped.buf, base, path)
        log = _open_log(run, path, "entries are printed without checking them")
        if log is not None:
            stack.callback(log.close)
        try:
            yield index, log
        finally:
            index.buf = b""  # drop the index's view so the map can close


def _json(run: DumpRun, obj: dict[str, Any]) -> None:
    run.out.write(log_json.dumps(obj) + "\n")


def _sanity(run: DumpRun, path: str, check: Any, buf: memoryview, size: int, base: int) -> None:
    """--index-sanity-check: Kafka's message on success, one error line (exit 1) on failure."""
    try:
        check(buf, size, base, java_absolute_path(path))
    except IndexFormatError as err:
        run.error(err, path)
        return
    if run.options.json:
        _json(run, {"type": "sanityCheck", "path": path, "passed": True})
    else:
        run.out.write(f"{java_path(path)} passed sanity check.\n")


# --- .index ------------------------------------------------------------------------------------------------


def dump_offset_index(run: DumpRun, path: str) -> None:
    with _index_and_log(run, path, OffsetIndex) as (index, log):
        _offset_index_body(run, path, index, log)


def _offset_index_body(run: DumpRun, path: str, index: OffsetIndex, log: MappedFile | None) -> None:
    options = run.options
    if options.json:
        _json(run, log_json.file_object(path, "index", size=index.size, baseOffset=index.base_offset,
                                        slots=index.slots, validEntries=index.entries))
    if index.slots == 0 and run.dialect.major_minor >= (2, 8):
        if options.json:
            _json(run, {"type": "empty", "path": path})
        else:
            run.out.write(f"{java_path(path)} is empty.\n")
        return
    if options.index_sanity_check:
        _sanity(run, path, offset_index_sanity_check, index.buf, index.size, index.base_offset)
        return
    legacy_check = run.dialect.major_minor < (2, 3)
    base = index.base_offset
    mismatches: list[tuple[int, int]] = []
    for slot in range(index.slots):
        entry = index.entry(slot)
        stop = slot > 0 and entry.offset == base   # the dump tool's zero-entry stop
        if stop and not legacy_check:
            break
        if log is not None:
            if slot == 0 and index.entries == 0 and _no_batch_at(log, entry.position):
                run.warn(f"Note: {java_path(path)}: preallocated, 0 valid entries ({index.slots} zero slots) "
                         f"and no batch at position 0 of the log ({log.size} bytes); nothing to check")
                break
            found = _first_offset_at(run, path, slot, entry.offset, entry.position, log, legacy_check)
            if found is not None and found != entry.offset:
                mismatches.append((entry.offset, found))
        if stop:  # Kafka 2.2 compared the zero entry first, then stopped
            break
        if not options.verify_index_only:
            if options.json:
                _json(run, {"type": "indexEntry", "path": path, "slot": slot, "offset": entry.offset,
                            "position": entry.position})
            else:
                run.out.write(f"offset: {entry.offset} position: {entry.position}\n")
    if mismatches:
        run.summaries.index_mismatches.setdefault(java_absolute_path(path), []).extend(mismatches)


def _no_batch_at(log: MappedFile, position: int) -> bool:
    return next(scan_batches(log.buf, position, check_crc=False), None) is None if position <= log.size else True


def _first_offset_at(run: DumpRun, path: str, slot: int, offset: int, position: int, log: MappedFile,
                     first_record: bool) -> int | None:
    """What Kafka compares an entry with: the first batch's lastOffset in the window at ``position``
    (2.2: the first record's offset). None, after a note, where Kafka's tool would crash."""
    def note(text: str) -> None:
        run.warn(f"Note: {java_path(path)}: entry {slot} (offset {offset} position {position}): {text}")

    if position < 0 or position > log.size:
        note(f"position is past the end of the log ({log.size} bytes); Kafka's tool crashes here, kdump goes on")
        return None
    window_end = min(log.size, position + run.options.max_message_size)
    try:
        batch = next(scan_batches(log.buf, position, window_end, check_crc=False), None)
        if batch is None:
            whole = next(scan_batches(log.buf, position, check_crc=False), None)
            if whole is None:
                note(f"no complete batch at this position (the log has {log.size} bytes); Kafka's tool crashes "
                     f"here, kdump goes on")
                return None
            note(f"the batch here is {whole.size} bytes, larger than --max-message-size "
                 f"{run.options.max_message_size} (Kafka's tool crashes here); compared in full")
            batch = whole
        if first_record:
            return _first_record_offset(log, batch)
        return batch.last_offset
    except KdumpError as err:
        note(f"cannot read a batch here: {err.reason}; Kafka's tool crashes here, kdump goes on")
        return None


def _first_record_offset(log: MappedFile, batch: Batch) -> int | None:
    for candidate in scan_batches(log.buf, batch.position, check_crc=False):
        records = decode_records(log.buf, candidate)
        if records:
            return records[0].offset
    return None


# --- .timeindex --------------------------------------------------------------------------------------------


def dump_time_index(run: DumpRun, path: str) -> None:
    with _index_and_log(run, path, TimeIndex) as (index, log), ExitStack() as stack:
        offsets: OffsetIndex | None = None
        if log is not None and not os.path.exists(sibling(path, ".index")):
            run.warn(f"Note: {java_path(path)}: offset index missing; Kafka's tool would create an empty "
                     f"one and crash, kdump scans the log from its start instead")
        elif log is not None:
            mapped = stack.enter_context(MappedFile(sibling(path, ".index")))
            offsets = OffsetIndex(mapped.buf, index.base_offset)
            stack.callback(setattr, offsets, "buf", b"")  # drop the view before the map closes
        _time_index_body(run, path, index, log, offsets)


def _kafka_lookup_position(index: OffsetIndex | None, target: int) -> int:
    """OffsetIndex.lookup(target).position as Kafka computes it: a read-only index counts every slot
    (zero padding included), and its binary search returns the first exact match it meets."""
    if index is None or index.slots == 0:
        return 0

    def relative(slot: int) -> int:
        return index.entry(slot).offset - index.base_offset

    key = target - index.base_offset
    first_hot = max(0, index.slots - 1 - 8192 // OffsetIndex.entry_size)
    if relative(first_hot) < key:
        lo, hi = first_hot, index.slots - 1
    elif relative(0) > key:
        return 0
    else:
        lo, hi = 0, first_hot
    while lo < hi:
        mid = (lo + hi + 1) // 2
        found = relative(mid)
        if found > key:
            hi = mid - 1
        elif found < key:
            lo = mid
        else:
            return index.entry(mid).position
    return index.entry(lo).position


class _LogBatches:
    """The log's batch positions and last offsets, to find the first batch with lastOffset >= N."""

    def __init__(self, log: MappedFile) -> None:
        self.log = log
        self.positions: list[int] = []
        self.last_offsets: list[int] = []
        self.error: KdumpError | None = None
        try:
            for batch in scan_batches(log.buf, 0, check_crc=False):
                self.positions.append(batch.position)
                self.last_offsets.append(batch.last_offset)
        except KdumpError as err:
            self.error = err

    def first_ending_at_or_after(self, offset: int, start: int = 0) -> Batch | None:
        """The first batch at or after position ``start`` whose lastOffset >= ``offset``."""
        i = bisect.bisect_left(self.last_offsets, offset, lo=bisect.bisect_left(self.positions, start))
        if i == len(self.positions):
            return None
        return read_batch(self.log.buf, self.positions[i], check_crc=False)


def _time_index_body(run: DumpRun, path: str, index: TimeIndex, log: MappedFile | None,
                     offsets: OffsetIndex | None = None) -> None:
    options = run.options
    if options.json:
        _json(run, log_json.file_object(path, "timeindex", size=index.size, baseOffset=index.base_offset,
                                        slots=index.slots, validEntries=index.entries))
    if options.index_sanity_check:
        _sanity(run, path, time_index_sanity_check, index.buf, index.size, index.base_offset)
        return
    batches = _LogBatches(log) if log is not None else None
    if batches is not None and batches.error is not None:
        run.warn(f"Note: {java_path(path)}: the log's batches stop at position {batches.error.position}: "
                 f"{batches.error.reason}; later entries are reported as not found")
    stop_inside_found = run.dialect.major_minor < (2, 3)
    abs_path = java_absolute_path(path)
    summaries = run.summaries
    base = index.base_offset
    prev_ts = -1
    for slot in range(index.slots):
        entry = index.entry(slot)
        stop = slot > 0 and entry.offset == base
        if stop and (not stop_inside_found or batches is None):
            break
        if batches is not None:
            # Kafka starts at the position the offset index gives for this offset.
            batch = batches.first_ending_at_or_after(entry.offset, _kafka_lookup_position(offsets, entry.offset))
            if batch is None:
                summaries.offsets_not_found.setdefault(abs_path, []).append((entry.offset, -1))
            elif batch.last_offset != entry.offset:
                summaries.offsets_not_found.setdefault(abs_path, []).append((entry.offset, batch.last_offset))
            else:
                max_ts = _max_record_timestamp(run, path, slot, batch, batches.log)
                if max_ts is not None and max_ts != entry.timestamp:
                    summaries.timestamp_mismatches.setdefault(abs_path, []).append((entry.timestamp, max_ts))
                if prev_ts >= entry.timestamp:
                    summaries.out_of_order_timestamps.setdefault(abs_path, []).append((entry.timestamp, prev_ts))
                if stop:  # Kafka 2.2 stopped only here, after checking a zero entry that matched a batch
                    break
        if not options.verify_index_only:
            if options.json:
                _json(run, {"type": "timeIndexEntry", "path": path, "slot": slot, "timestamp": entry.timestamp,
                            "offset": entry.offset})
            else:
                run.out.write(f"timestamp: {entry.timestamp} offset: {entry.offset}\n")
        prev_ts = entry.timestamp


def _max_record_timestamp(run: DumpRun, path: str, slot: int, batch: Batch, log: MappedFile) -> int | None:
    """The dump tool recomputes the batch's max timestamp from its records (-1 when it has none)."""
    try:
        records = decode_records(log.buf, batch)
    except KdumpError as err:
        run.warn(f"Note: {java_path(path)}: entry {slot}: cannot read the records of the batch at position "
                 f"{batch.position}: {err.reason}; Kafka's tool crashes here, kdump goes on")
        return None
    return max((r.timestamp for r in records), default=-1)
