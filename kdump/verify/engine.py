"""The steps of checking a log, for ``verify``, ``verify-index`` and Spark (``kdump.verify.driver`` runs them).

``plan(path)`` says what a path names (partitions, or one segment named by a file); for a partition,
``begin_partition`` reads its own files, ``check_segment`` walks each segment and ``finish_partition``
applies the partition rules. ``kdump verify-index`` runs the index rules only (``scope=INDEX``);
``kdump verify`` runs all of them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kdump.broker.log_dir_checkpoints import CheckpointCache
from kdump.errors import InputError, KdumpError
from kdump.findings import ERROR, NOTE, Finding
from kdump.log.files import FileKind, base_offset_of, file_kind, parse_segment_file_name, sibling
from kdump.log.index_builder import DEFAULT_INDEX_INTERVAL_BYTES
from kdump.log.logdir import PartitionDir, SegmentFiles, log_bytes
from kdump.log.remote_layout import walk_any
from kdump.log.segment import FileChangedError, ReadOnlyFile
from kdump.log.state_files import read_if_exists
from kdump.verify.partition_check import (
    PartitionState,
    ReadSmall,
    check_partition,
    read_state,
    read_txn_indexes,
)
from kdump.verify.segment_check import DecodedRanges, Opener, SegmentCheck, SegmentFacts, decode_batch

INDEX = "index"     # verify-index: the index rules (and the framing they stand on)
ALL = "all"         # verify: every rule
INDEX_CHECKS = frozenset({
    "index-size", "padding", "padding-not-zero", "offset-below-base", "offset-not-increasing",
    "position-not-increasing", "position-past-log", "position-not-batch", "offset-behind-position",
    "offset-past-log", "offset-not-batch-last", "index-mismatch", "timestamp-not-increasing", "offset-decreasing",
    "timestamp-not-max", "timestamp-reached-earlier", "offset-inside-batch", "time-index-no-roll-entry",
    "density", "log-missing", "index-missing", "timeindex-missing", "framing", "unreadable", "offset-range",
})
"""The rules ``verify-index`` reports; a ``framing`` break is among them because it ends the index checks,
and ``offset-range`` because no index can hold an offset outside the segment's range (KAFKA-6264)."""


@dataclass(frozen=True)
class Options:
    scope: str = ALL
    strict: bool = False
    deep: bool = False
    interval: int = DEFAULT_INDEX_INTERVAL_BYTES


@dataclass
class Tally:
    """What was looked at (a run that looked at nothing is not OK)."""

    partitions: int = 0
    segments: int = 0
    files: int = 0
    batches: int = 0
    records: int = 0
    bytes: int = 0
    unreadable: list[str] = field(default_factory=list)

    def merge(self, other: Tally) -> None:
        for name in ("partitions", "segments", "files", "batches", "records", "bytes"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.unreadable.extend(other.unreadable)

    def add_segment(self, facts: SegmentFacts, files: int) -> None:
        self.segments += 1
        self.files += files
        self.batches += facts.batches
        self.records += facts.records
        self.bytes += facts.size


def segment_of_file(path: str) -> tuple[SegmentFiles, bool]:
    """The segment a single file names (with its companions) and whether it is its directory's last."""
    kind = file_kind(path)
    if kind not in (FileKind.LOG, FileKind.INDEX, FileKind.TIME_INDEX):
        raise InputError("not a .log, .index or .timeindex file, nor a directory", path=path)
    base = base_offset_of(path)
    full = os.path.abspath(path)
    log = full if kind is FileKind.LOG else sibling(path, ".log")
    log_path = log if os.path.lexists(log) else None
    directory = os.path.dirname(full)
    try:
        later = any((parsed := parse_segment_file_name(n)) is not None and parsed[1:] == ("log", "") and
                    parsed[0] > base for n in os.listdir(directory))
    except OSError:
        later = False
    if kind is FileKind.LOG:
        index, tindex = sibling(path, ".index"), sibling(path, ".timeindex")
        return SegmentFiles(base, full, index if os.path.exists(index) else None,
                            tindex if os.path.exists(tindex) else None), not later
    if kind is FileKind.INDEX:
        return SegmentFiles(base, log_path, index=full), not later
    return SegmentFiles(base, log_path, time_index=full), not later


def plan(path: str) -> Iterator[PartitionDir | tuple[SegmentFiles, bool]]:
    """The partitions at or below a directory, or the one segment a file names."""
    if not os.path.isdir(path):
        if not os.path.lexists(path):
            raise InputError("No such file or directory", path=path)
        yield segment_of_file(path)
        return
    yield from walk_any(os.path.abspath(path))  # '.' must show its real name; walk_any: remote stores too


def planned_log_bytes(paths: Iterable[str]) -> int:
    """The bytes of ``.log`` that ``plan`` finds under ``paths`` (a progress bar's total; a path that cannot
    be walked counts 0, its error comes when it is checked)."""
    total = 0
    for path in paths:
        try:
            for target in plan(path):
                total += log_bytes(target.segments if isinstance(target, PartitionDir) else (target[0],))
        except KdumpError:
            continue
    return total


_ATTEMPTS = 3
"""How often a segment is read again when a file shrinks under kdump (a live broker rolling it)."""


def check_segment(seg: SegmentFiles, active: bool, options: Options, tally: Tally,
                  open_file: Opener = ReadOnlyFile,
                  decoded: DecodedRanges | None = None) -> tuple[list[Finding], SegmentFacts]:
    """The findings and facts of one segment (what a Spark task runs); an unreadable file is a finding.

    A live broker trims the active segment's preallocated files when it rolls and deletes whole
    segments by retention: a segment whose file shrank while it was read is read again, and one
    that keeps changing or disappears is a note, not a problem of the data. ``decoded``: the records
    workers decoded (``kdump.verify.driver``), for the first reading only (they were read once).
    """
    for attempt in range(_ATTEMPTS):
        check = SegmentCheck(seg, strict=options.strict, deep=options.deep, active=active,
                             interval=options.interval, open_file=open_file,
                             decoded=decoded if decoded is not None and attempt == 0 else decode_batch)
        findings: list[Finding] = []
        try:
            findings.extend(f for f in check if options.scope == ALL or f.check in INDEX_CHECKS)
            break
        except FileChangedError as err:
            if attempt + 1 < _ATTEMPTS:
                continue
            check.facts.complete = False
            findings = [Finding(NOTE, "changed-while-read", err.path or seg.log or seg.paths()[0],
                                f"the file changed each of the {_ATTEMPTS} times kdump read it (a live broker "
                                f"rolling or truncating it); not checked", position=err.position)]
        except KdumpError as err:
            file = err.path or seg.log or seg.paths()[0]
            check.facts.complete = False
            if not os.path.lexists(file):
                findings.append(Finding(NOTE, "deleted-while-read", file, "deleted while kdump ran (retention or a "
                                                                          "roll on a live broker); not checked"))
                break
            tally.unreadable.append(file)
            findings.append(Finding(ERROR, "unreadable", file, f"cannot be read: {err.reason}",
                                    position=err.position))
            break
    tally.add_segment(check.facts, len(seg.paths()))
    return findings, check.facts


def begin_partition(partition: PartitionDir, options: Options, tally: Tally, read: ReadSmall = read_if_exists,
                    cache: CheckpointCache | None = None) -> PartitionState:
    """What the partition's own files claim, read before its segments (see kdump.verify.partition_check)."""
    tally.partitions += 1
    if options.scope != ALL:
        return PartitionState(partition.path)
    state = read_state(partition, read, cache)
    tally.unreadable.extend(f.file for f in state.findings if f.check == "unreadable")
    return state


def finish_partition(partition: PartitionDir, before: PartitionState, facts: list[SegmentFacts], options: Options,
                     read: ReadSmall = read_if_exists) -> Iterator[Finding]:
    """The partition rules, once every segment was walked."""
    if options.scope != ALL:
        return
    after = PartitionState(partition.path)
    read_txn_indexes(partition, read, after)
    yield from check_partition(partition, before, facts, after)


def nothing_checked(tally: Tally) -> str | None:
    """Why a run that found no problem still is not OK, or None."""
    if tally.segments == 0 and tally.partitions == 0:
        return "no partition directories or segment files found: nothing was checked"
    if tally.files == 0:
        return f"{tally.partitions} partition directories hold no segment files: nothing was checked"
    return None


