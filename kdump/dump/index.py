"""``kdump --files X.index`` / ``X.timeindex``: DumpLogSegments' index dumps.

Stdout lines and the end-of-run summaries are Kafka's, in the ``--kafka-version`` dialect. Where
Kafka's tool crashes (missing ``.log`` or ``.index``, an entry past the end of the log, a batch
larger than ``--max-message-size``, an empty active segment with a preallocated index) kdump
writes one ``Note:`` line to stderr saying what is true and goes on. Files are only ever mapped
read-only: Kafka's tool creates a missing ``.index`` when dumping a time index; kdump does not.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, TypeVar

from kdump.dump.run import DumpRun
from kdump.errors import IndexFormatError, KdumpError
from kdump.format.batch import Batch
from kdump.format.index import offset_index_sanity_check, time_index_sanity_check
from kdump.log.batches import batch_at
from kdump.log.files import base_offset_of, java_absolute_path, java_path, sibling
from kdump.log.indexes import OffsetIndex, TimeIndex
from kdump.log.segment import ReadOnlyFile
from kdump.render import log_json
from kdump.verify.kafka_index_compare import TimeEntryLookup, max_record_timestamp, offset_at_position

_Index = TypeVar("_Index", OffsetIndex, TimeIndex)


@contextmanager
def _index_and_log(run: DumpRun, path: str, index_type: type[_Index]) -> Iterator[tuple[_Index, ReadOnlyFile | None]]:
    """The index and its segment's .log, opened in that order (see verify_segment); the .log is None
    after a note when it is missing (Kafka's tool dies with NoSuchFileException)."""
    base = base_offset_of(path)  # a bad name is reported before a missing file, as before
    log_path = sibling(path, ".log")
    with index_type(ReadOnlyFile(path), base, path) as index, ExitStack() as stack:
        log = None
        if os.path.exists(log_path):
            log = stack.enter_context(ReadOnlyFile(log_path))
        else:
            run.warn(f"Note: {java_path(path)}: log file missing ({os.path.basename(log_path)}); entries are "
                     f"printed without checking them")
        yield index, log


def _sanity(run: DumpRun, path: str, check: Any, index: OffsetIndex | TimeIndex) -> None:
    """--index-sanity-check: Kafka's message on success, one error line (exit 1) on failure."""
    try:
        # Kafka's checks read the first and last slots only.
        first = index.entry(0) if index.slots else None
        last = index.entry(index.slots - 1) if index.slots else None
        check(first, last, index.size, index.base_offset, java_absolute_path(path))
    except IndexFormatError as err:
        run.error(err, path)
        return
    run.emit({"type": "sanityCheck", "path": path, "passed": True}, f"{java_path(path)} passed sanity check.")


# --- .index ------------------------------------------------------------------------------------------------


def dump_offset_index(run: DumpRun, path: str) -> None:
    with _index_and_log(run, path, OffsetIndex) as (index, log):
        options = run.options
        run.emit(log_json.file_object(path, "index", size=index.size, baseOffset=index.base_offset, slots=index.slots,
                                      validEntries=index.entries))
        if index.slots == 0 and run.dialect.empty_index_line:
            run.emit({"type": "empty", "path": path}, f"{java_path(path)} is empty.")
            return
        if options.index_sanity_check:
            _sanity(run, path, offset_index_sanity_check, index)
            return
        legacy_check = run.dialect.index_checks_first_record
        base = index.base_offset
        mismatches: list[tuple[int, int]] = []
        for slot in range(index.slots):
            entry = index.entry(slot)
            stop = slot > 0 and entry.offset == base   # the dump tool's zero-entry stop
            if stop and not legacy_check:
                break
            if log is not None:
                if slot == 0 and index.entries == 0 and (not 0 <= entry.position <= log.size
                                                         or batch_at(log, entry.position) is None):
                    run.warn(f"Note: {java_path(path)}: preallocated, 0 valid entries ({index.slots} zero slots) "
                             f"and no batch at position 0 of the log ({log.size} bytes); nothing to check")
                    break
                # What Kafka compares the entry with (None, after a note, where Kafka's tool would crash).
                found, note = offset_at_position(log, entry.position, options.max_message_size, legacy_check)
                if note is not None:
                    run.warn(f"Note: {java_path(path)}: entry {slot} (offset {entry.offset} position "
                             f"{entry.position}): {note}")
                if found is not None and found != entry.offset:
                    mismatches.append((entry.offset, found))
            if stop:  # Kafka 2.2 compared the zero entry first, then stopped
                break
            if not options.verify_index_only:
                if options.json:
                    run.emit({"type": "indexEntry", "path": path, "slot": slot, "offset": entry.offset,
                              "position": entry.position})
                else:
                    run.out.write(f"offset: {entry.offset} position: {entry.position}\n")
        if mismatches:
            run.summaries.index_mismatches.setdefault(java_absolute_path(path), []).extend(mismatches)


# --- .timeindex --------------------------------------------------------------------------------------------


def dump_time_index(run: DumpRun, path: str) -> None:
    with _index_and_log(run, path, TimeIndex) as (index, log), ExitStack() as stack:
        offsets: OffsetIndex | None = None
        if log is not None and not os.path.exists(sibling(path, ".index")):
            run.warn(f"Note: {java_path(path)}: offset index missing; Kafka's tool would create an empty "
                     f"one and crash, kdump scans the log from its start instead")
        elif log is not None:
            offsets = stack.enter_context(OffsetIndex(ReadOnlyFile(sibling(path, ".index")), index.base_offset))
        options = run.options
        run.emit(log_json.file_object(path, "timeindex", size=index.size, baseOffset=index.base_offset,
                                      slots=index.slots, validEntries=index.entries))
        if options.index_sanity_check:
            _sanity(run, path, time_index_sanity_check, index)
            return
        lookup = TimeEntryLookup(log, offsets) if log is not None else None
        framing_noted = False
        stop_inside_found = run.dialect.index_checks_first_record
        abs_path = java_absolute_path(path)
        summaries = run.summaries
        base = index.base_offset
        prev_ts = -1
        for slot in range(index.slots):
            entry = index.entry(slot)
            stop = slot > 0 and entry.offset == base
            if stop and (not stop_inside_found or lookup is None):
                break
            if lookup is not None:
                batch = lookup.batch(entry.offset)
                broken = lookup.error
                if broken is not None and not framing_noted:
                    framing_noted = True
                    run.warn(f"Note: {java_path(path)}: the log's batches stop at position {broken.position}: "
                             f"{broken.reason}; later entries are reported as not found")
                if batch is None:
                    summaries.offsets_not_found.setdefault(abs_path, []).append((entry.offset, -1))
                elif batch.last_offset != entry.offset:
                    summaries.offsets_not_found.setdefault(abs_path, []).append((entry.offset, batch.last_offset))
                else:
                    max_ts = _max_record_timestamp(run, path, slot, batch, lookup.log)
                    if max_ts is not None and max_ts != entry.timestamp:
                        summaries.timestamp_mismatches.setdefault(abs_path, []).append((entry.timestamp, max_ts))
                    if prev_ts >= entry.timestamp:
                        summaries.out_of_order_timestamps.setdefault(abs_path, []).append((entry.timestamp, prev_ts))
                    if stop:  # Kafka 2.2 stopped only here, after checking a zero entry that matched a batch
                        break
            if not options.verify_index_only:
                if options.json:
                    run.emit({"type": "timeIndexEntry", "path": path, "slot": slot, "timestamp": entry.timestamp,
                              "offset": entry.offset})
                else:
                    run.out.write(f"timestamp: {entry.timestamp} offset: {entry.offset}\n")
            prev_ts = entry.timestamp


def _max_record_timestamp(run: DumpRun, path: str, slot: int, batch: Batch, log: ReadOnlyFile) -> int | None:
    try:
        return max_record_timestamp(log, batch)
    except KdumpError as err:
        run.warn(f"Note: {java_path(path)}: entry {slot}: cannot read the records of the batch at position "
                 f"{batch.position}: {err.reason}; Kafka's tool crashes here, kdump goes on")
        return None
