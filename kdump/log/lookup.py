"""Kafka's lookups over a partition directory, step by step (LogSegment.translateOffset,
LogSegment.findOffsetByTimestamp).

Offset -> record: floor segment by base offset, binary-search the offset index for the largest
entry <= target, scan batches forward to the first whose lastOffset >= target (next segment if
none). Timestamp -> record: first segment whose largest timestamp >= target, time index lookup,
offset index lookup of that offset, scan to the first batch whose maxTimestamp >= target and the
first record in it with timestamp >= target.

Every step is recorded (for ``kdump find --explain``) and the log bytes the scan walks over are
counted, so tests can check that a lookup reads O(index.interval.bytes), not the whole segment.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kdump.errors import KdumpError
from kdump.format.batch import Batch
from kdump.format.records import Record
from kdump.log.batches import LogBatches, batch_at
from kdump.log.files import parse_segment_file_name, segment_file_name
from kdump.log.indexes import open_offset_index, open_time_index
from kdump.log.locations import base_name, exists, join, parent
from kdump.log.logdir import PartitionDir, SegmentFiles
from kdump.log.segment import ReadOnlyFile
from kdump.words import counted


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a lookup: a kind (segment, index, time-index, start, scan, result, note) and its words."""

    kind: str
    text: str
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass
class LookupResult:
    by: str                               # "offset" or "timestamp"
    target: int
    segment: SegmentFiles | None = None
    batch: Batch | None = None
    records: list[Record] = field(default_factory=list)   # every record of the batch found
    record: Record | None = None          # the record the lookup answers with
    log_record: Record | None = None      # the log's answer, when a wrong index entry makes the broker's differ
    steps: list[Step] = field(default_factory=list)
    bytes_read: int = 0                   # log bytes walked by the forward scan (whole batches)
    batches_scanned: int = 0

    def step(self, kind: str, text: str, **fields: Any) -> None:
        self.steps.append(Step(kind, text, fields))

    @property
    def found(self) -> bool:
        return self.record is not None


def _name(path: str | None) -> str:
    return os.path.basename(path) if path else "-"


def _log_segments(partition: PartitionDir) -> list[SegmentFiles]:
    return [s for s in partition.segments if s.log is not None]


def _offset_index_position(result: LookupResult, seg: SegmentFiles, target: int, log: ReadOnlyFile) -> int:
    """Step 2: the start position from the offset index (0 when there is none, or it cannot be trusted)."""
    if seg.index is None:
        result.step("index", f"no {seg.base_offset:020d}.index (the broker would rebuild it); start at position 0")
        return 0
    with open_offset_index(seg.index, seg.base_offset) as index:
        entry = index.lookup(target)
        if entry.slot < 0:
            result.step("index", f"{_name(seg.index)}: no entry <= {target} among {counted(index.entries, 'entry')}; "
                                 f"start at (base offset {seg.base_offset}, position 0)",
                        file=seg.index, slot=None, entries=index.entries, offset=seg.base_offset, position=0)
            return 0
        result.step("index", f"{_name(seg.index)}: slot {entry.slot} of {counted(index.entries, 'entry')} holds "
                             f"offset {entry.offset} position {entry.position} (largest entry <= {target})",
                    file=seg.index, slot=entry.slot, entries=index.entries, offset=entry.offset,
                    position=entry.position)
    problem = checked_entry(log, entry.offset, entry.position)[1]
    if problem is not None:
        # A corrupt entry: Kafka would read garbage or the wrong batch there; scan from the top so the
        # answer is right, and say why.
        result.step("note", f"index entry {entry.slot} cannot be used: {problem}; kdump scans the segment from "
                            f"position 0 instead", slot=entry.slot, reason=problem)
        return 0
    return entry.position


def checked_entry(log: ReadOnlyFile, offset: int, position: int, *,
                  check_crc: bool = False) -> tuple[Batch | None, str | None]:
    """The batch an offset-index entry (offset, position) points at, or None and why it cannot be used.

    It must point at a complete batch that starts at or before its offset: any other position would
    make the forward scan read from inside a batch, past the end, or skip the batches it needs.
    ``check_crc`` also asks for that batch's CRC to match, so that bytes inside a batch that happen
    to look like a header are not taken for one (Spark cuts segments into tasks at such entries).
    """
    if position < 0:
        return None, f"position {position} is negative"
    if position >= log.size:
        return None, f"position {position} is at or past the end of the log ({log.size} bytes)"
    try:
        batch = batch_at(log, position, check_crc=check_crc)
    except KdumpError as err:
        return None, f"no batch starts at position {position} ({err.reason})"
    if batch is None:
        return None, f"no complete batch starts at position {position}"
    if check_crc and not batch.is_valid:
        return None, f"the entry at position {position} fails its CRC check"
    if batch.base_offset > offset:
        return None, (f"the batch at position {position} starts at offset {batch.base_offset}, after the "
                      f"entry's offset {offset}")
    return batch, None


Found = tuple[list[Record], Record | None]   # the record a lookup answers with, and its group of records


def _scan_segment(result: LookupResult, seg: SegmentFiles, index_target: int | None,
                  answer: Callable[[LogBatches, Batch], Found | None], why: Callable[[Batch], str]) -> bool:
    """Walk ``seg``'s batches from the offset index's position for ``index_target`` (from position 0 when
    None) to the first that ``answer`` answers for, and record the answer (``why`` it is that batch)."""
    assert seg.log is not None
    with ReadOnlyFile(seg.log) as log:
        start = 0 if index_target is None else _offset_index_position(result, seg, index_target, log)
        result.step("start", f"scan {_name(seg.log)} from position {start} ({log.size} bytes in the segment)",
                    file=seg.log, position=start, segment_bytes=log.size)
        try:
            batches = LogBatches(log, start, check_crc=False)
            for batch in batches:
                result.batches_scanned += 1
                result.bytes_read += batch.size
                found = answer(batches, batch)
                if found is None:
                    _batch_step(result, batch, f"maxTimestamp {batch.max_timestamp}, {batch.size} bytes: skipped")
                    continue
                # The batch again, now with its CRC checked, for the batch line.
                batch = batch_at(log, batch.position, check_crc=True) or batch
                _batch_step(result, batch, why(batch))
                result.segment, result.batch = seg, batch
                result.records, result.record = found
                _summarise(result)
                return True
        except KdumpError as err:
            raise err.with_file(seg.log) from None
    return False


def _batch_step(result: LookupResult, batch: Batch, what: str) -> None:
    result.step("scan", f"batch at position {batch.position}: offsets {batch.base_offset}..{batch.last_offset}, "
                        f"{what}", position=batch.position, base_offset=batch.base_offset,
                last_offset=batch.last_offset)


def find_offset(partition: PartitionDir, target: int, log_start: int | None = None) -> LookupResult:
    """The record at ``target`` (or the next one after it, for compacted data) and how Kafka finds it;
    below ``log_start`` (the partition's log start offset, kdump.broker.unified_log) a fetch gets
    OFFSET_OUT_OF_RANGE (UnifiedLog.read -> LocalLog.read checks the offset against the log start)."""
    result = LookupResult("offset", target)
    if log_start is not None and target < log_start:
        result.step("result", f"offset {target} is below the log start offset {log_start}: out of range (a "
                              f"consumer gets OFFSET_OUT_OF_RANGE)", log_start_offset=log_start)
        return result
    segments = _log_segments(partition)
    bases = [s.base_offset for s in segments]
    i = bisect.bisect_right(bases, target) - 1
    if i < 0:
        first = bases[0] if bases else None
        result.step("result", f"offset {target} is below the first segment's base offset {first}: out of range"
                    if first is not None else "no segments in this partition directory")
        return result
    result.step("segment", f"{_name(segments[i].log)}: the largest base offset <= {target} "
                           f"({counted(len(segments), 'segment')})",
                file=segments[i].log, base_offset=bases[i])
    while i < len(segments):
        seg = segments[i]
        if _scan_segment(result, seg, target if seg.base_offset <= target else None,
                         lambda batches, b: _reaching(batches, b, target),
                         lambda b: f"{b.size} bytes: the first batch with lastOffset >= {target}"):
            return result
        result.step("scan", f"no batch with lastOffset >= {target} in {_name(seg.log)}")
        i += 1
        if i < len(segments):
            result.step("segment", f"move on to the next segment {_name(segments[i].log)}", file=segments[i].log,
                        base_offset=segments[i].base_offset)
    result.step("result", f"offset {target} is beyond the end of the log")
    return result


def _find_record(groups: Iterator[list[Record]],
                 wanted: Callable[[Record], bool]) -> tuple[list[Record], Record | None]:
    """The first record that is ``wanted``, and the group of records it was decoded in."""
    group: list[Record] = []
    for group in groups:
        record = next((r for r in group if wanted(r)), None)
        if record is not None:
            return group, record
    return group, None


def _summarise(result: LookupResult) -> None:
    if result.record is None:
        result.step("result", f"the batch holds no record at or after {result.target} (compacted away)")
    else:
        result.step("result", f"record at offset {result.record.offset} (timestamp {result.record.timestamp})",
                    offset=result.record.offset, timestamp=result.record.timestamp)
    result.step("read", f"{counted(result.batches_scanned, 'batch')} scanned, {result.bytes_read} bytes of log read",
                batches=result.batches_scanned, bytes=result.bytes_read)


def segment_largest_timestamp(seg: SegmentFiles) -> int | None:
    """The time index's last entry (a rolled segment's largest timestamp), None without one."""
    if seg.time_index is None:
        return None
    with open_time_index(seg.time_index, seg.base_offset) as time_index:
        last = time_index.last_entry()
    return last.timestamp if last is not None and last.timestamp >= 0 else None


def _largest_timestamp(seg: SegmentFiles) -> tuple[int, str]:
    """LogSegment.largestTimestamp: the time index's last entry, else the .log's mtime."""
    largest = segment_largest_timestamp(seg)
    if largest is not None:
        return largest, f"last time-index entry {largest}"
    assert seg.log is not None
    mtime = int(os.stat(seg.log).st_mtime * 1000)
    return mtime, f"no time-index entry, so the .log's mtime {mtime}"


@dataclass(frozen=True, slots=True)
class TimeIndexChoice:
    """TimeIndex.lookup(target) in one segment: the offset the broker starts from, and the entry before it
    (the base offset for the first), where a scan that does not trust the chosen entry starts."""

    offset: int
    before: int
    slot: int | None = None
    timestamp: int | None = None
    file: str | None = None

    def describe(self) -> str:
        assert self.file is not None and self.slot is not None
        return (f"{self.file}: slot {self.slot} (position {self.slot * 12}) holds timestamp {self.timestamp} "
                f"offset {self.offset}")


def _time_index_offset(result: LookupResult, seg: SegmentFiles, target: int) -> TimeIndexChoice:
    """TimeIndex.lookup(target).offset: the offset of the largest entry <= ``target`` (the base offset if none)."""
    if seg.time_index is None:
        result.step("time-index", f"no {seg.base_offset:020d}.timeindex; use the base offset {seg.base_offset}")
        return TimeIndexChoice(seg.base_offset, seg.base_offset)
    with open_time_index(seg.time_index, seg.base_offset) as index:
        entry = index.lookup(target)
        if entry.slot >= 0:
            result.step("time-index", f"{_name(seg.time_index)}: slot {entry.slot} of "
                                      f"{counted(index.entries, 'entry')} holds timestamp {entry.timestamp} "
                                      f"offset {entry.offset} (largest timestamp <= {target})",
                        file=seg.time_index, slot=entry.slot,
                        timestamp=entry.timestamp, offset=entry.offset)
            before = index.entry(entry.slot - 1).offset if entry.slot > 0 else seg.base_offset
            return TimeIndexChoice(entry.offset, min(before, entry.offset), entry.slot, entry.timestamp,
                                   seg.time_index)
        result.step("time-index", f"{_name(seg.time_index)}: no entry <= {target} among "
                                  f"{counted(index.entries, 'entry')}; use (-1, base offset {seg.base_offset})",
                    file=seg.time_index, slot=None, offset=seg.base_offset)
        return TimeIndexChoice(entry.offset, entry.offset)


def skipped_by_time_entry(seg: SegmentFiles, log: ReadOnlyFile, choice: TimeIndexChoice, target: int,
                          log_start: int, broker_position: int) -> tuple[Record, int] | None:
    """The log's first record with a timestamp >= ``target`` that a broker's lookup skips because it
    trusts a wrong time-index entry, if it skips one: before ``broker_position`` (where the broker starts,
    from the offset index's entry for the time-index entry's offset), with a record whose timestamp is
    above the entry's (an entry claims the largest timestamp up to its offset). Returns it and the
    position to scan from instead (the offset index's for the entry before): about index.interval.bytes
    are read."""
    if choice.slot is None or choice.timestamp is None or choice.before >= choice.offset or seg.index is None:
        return None
    with open_offset_index(seg.index, seg.base_offset) as index:
        entry = index.lookup(choice.before)
    start = entry.position if entry.slot >= 0 else 0
    if not 0 <= start < broker_position:
        return None
    first: Record | None = None
    try:
        batches = LogBatches(log, start, broker_position, check_crc=False)
        for batch in batches:
            if batch.max_timestamp < target:
                continue
            for group in batches.iter_records(batch):
                for r in group:
                    if r.offset >= max(choice.before, log_start) and r.timestamp >= target:
                        first = first or r
                        if r.timestamp > choice.timestamp:
                            return first, start
    except KdumpError:
        return None     # the offset index entry does not hold either: no claim about the time index
    return None


def scan_start(seg: SegmentFiles, log: ReadOnlyFile, offset: int | None = None,
               timestamp: int | None = None) -> tuple[int, str | None]:
    """Where a scan for records at or after ``offset`` with timestamps >= ``timestamp`` starts in this
    segment, by Kafka's index lookups (as ``find``), and a note when an index could not be used (the
    scan then starts at position 0, which is always right, only slower) or a time-index entry is wrong
    (the scan starts at the entry before it, so it gives what the log holds)."""
    result = LookupResult("offset", seg.base_offset)
    target = seg.base_offset if offset is None else max(offset, seg.base_offset)
    skipped_note = None
    try:
        choice = None if timestamp is None else _time_index_offset(result, seg, timestamp)
        position = _offset_index_position(result, seg, target if choice is None else max(target, choice.offset), log)
        skipped = None if choice is None or timestamp is None else \
            skipped_by_time_entry(seg, log, choice, timestamp, target, position)
        if choice is not None and skipped is not None:
            skipped_note = (f"the time index entry {choice.describe()} skips offset {skipped[0].offset} (timestamp "
                            f"{skipped[0].timestamp}): a broker's lookup trusts it and starts at offset "
                            f"{choice.offset}; kdump starts at offset {choice.before} and prints what the log holds")
            position = skipped[1]
    except KdumpError as err:
        return 0, f"its index cannot be used ({err.reason}); scanning from position 0"
    if seg.index is None:
        return 0, skipped_note or "no .index beside it; scanning from position 0"
    notes = [step.text for step in result.steps if step.kind == "note"]
    return position, skipped_note or (notes[0] if notes else None)


def index_position(log: ReadOnlyFile, seg: SegmentFiles, offset: int) -> int:
    """Where a forward walk for ``offset`` may start in ``seg``: the position of its offset index's largest
    entry at or below ``offset``, checked against the log (LogSegment.translateOffset); 0 without a usable index."""
    return scan_start(seg, log, offset)[0] if seg.index is not None and offset > seg.base_offset else 0


def segment_of(log_path: str, base_offset: int) -> SegmentFiles:
    """A ``.log`` (a local path or a URI) and its ``.index`` when there is one beside it (LogFileUtils' names)."""
    parsed = parse_segment_file_name(base_name(log_path))
    if parsed is None or parsed[1:] != ("log", ""):
        return SegmentFiles(base_offset, log_path)
    index = join(parent(log_path), segment_file_name(parsed[0], ".index"))
    return SegmentFiles(base_offset, log_path, index if exists(index) else None)


def find_timestamp(partition: PartitionDir, target: int, log_start: int | None = None) -> LookupResult:
    """The first record with timestamp >= ``target``, found the way ListOffsets finds it (at or after
    ``log_start``, the partition's log start offset), and what the log holds when a wrong time-index
    entry makes the broker answer another record (``log_record``, with a note step saying why)."""
    result = LookupResult("timestamp", target)
    segments = _log_segments(partition)
    if not segments:
        result.step("result", "no segments in this partition directory")
        return result
    log_start = segments[0].base_offset if log_start is None else log_start
    chosen = None
    for seg in segments:
        largest, why = _largest_timestamp(seg)
        if largest >= target:
            chosen = seg
            result.step("segment", f"{_name(seg.log)}: the first segment whose largest timestamp >= {target} "
                                   f"({why})", file=seg.log, largest_timestamp=largest)
            break
    if chosen is None:
        # The broker keeps the active segment's max timestamp in memory; on disk the time index may
        # lag behind it, so kdump scans the last segment rather than answering "not found" early.
        chosen = segments[-1]
        result.step("segment", f"{_name(chosen.log)}: no segment's time index reaches {target}; the active "
                               f"segment's newest batches are not indexed yet, so scan it", file=chosen.log)
    seg = chosen
    choice = _time_index_offset(result, seg, target)
    start_offset = max(choice.offset, log_start)
    steps = len(result.steps)
    found = _scan_segment(result, seg, start_offset, lambda batches, b: _holding(batches, b, target, log_start),
                          lambda b: f"maxTimestamp {b.max_timestamp}: the first batch holding a record with "
                                    f"timestamp >= {target}")
    assert seg.log is not None
    broker_position = next((s.fields["position"] for s in result.steps[steps:] if s.kind == "start"), 0)
    with ReadOnlyFile(seg.log) as log:
        found_skipped = skipped_by_time_entry(seg, log, choice, target, log_start, broker_position)
    skipped = None if found_skipped is None else found_skipped[0]
    if skipped is not None and (result.record is None or result.record.offset > skipped.offset):
        result.log_record = skipped
        answer = "nothing" if result.record is None else f"offset {result.record.offset}"
        result.step("note", f"the broker answers {answer} because it trusts the time index entry "
                            f"{choice.describe()}; the log's first record with timestamp >= {target} is at offset "
                            f"{skipped.offset} (timestamp {skipped.timestamp})", offset=skipped.offset,
                    timestamp=skipped.timestamp, file=choice.file, slot=choice.slot)
    if found:
        return result
    result.step("result", f"no record with timestamp >= {target} in {_name(seg.log)}")
    result.step("read", f"{counted(result.batches_scanned, 'batch')} scanned, {result.bytes_read} bytes of log read",
                batches=result.batches_scanned, bytes=result.bytes_read)
    return result


def _reaching(batches: LogBatches, batch: Batch, target: int) -> Found | None:
    """The first record of ``batch`` at or after offset ``target``, once the batch reaches it (compacted
    away: none, and still the answer)."""
    if batch.last_offset < target:
        return None
    return _find_record(batches.iter_records(batch), lambda r: r.offset >= target)


def _holding(batches: LogBatches, batch: Batch, target: int, log_start: int) -> Found | None:
    """The first record of ``batch`` with timestamp >= ``target`` (at or after ``log_start``), if any."""
    if batch.max_timestamp < target:
        return None
    found = _find_record(batches.iter_records(batch), lambda r: r.timestamp >= target and r.offset >= log_start)
    return found if found[1] is not None else None
