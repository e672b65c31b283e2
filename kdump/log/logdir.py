"""Walking what a broker keeps on disk: ``log.dirs`` roots, partition directories, segments.

Naming rules from LogFileUtils and UnifiedLog: a partition directory is ``<topic>-<partition>``
split on the last '-' (with ``.<uuid>-delete``/``-future``/``-stray`` variants), segment files share
a 20-digit base-offset prefix. A name is not enough to tell a partition from a log dir: the usual
second broker's ``log.dirs`` is ``kafka-logs-1``. So a directory is a log dir when what it holds
says so (``meta.properties``, the log dir's checkpoint files, partition folders) and it holds no
segment files; a partition directory is one whose name parses and that is not a log dir.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kdump.errors import InputError
from kdump.log.files import parse_segment_file_name
from kdump.log.locations import absolute, base_name, is_dir, join, list_dir

_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)"
                            r"(?:\.(?P<uuid>[0-9a-f]{32})-(?P<state>delete|future|stray))?$")

# The order Kafka's files sort in when kdump expands a directory: by base offset, then this.
SUFFIX_ORDER = (".log", ".index", ".timeindex", ".txnindex", ".snapshot")


@dataclass(frozen=True, slots=True)
class SegmentFiles:
    """One segment: its files (absolute paths or URIs; None when absent) and the bytes of its ``.log`` that are
    the segment, [``start``, ``end``) (``end`` None: to the end of the file). A whole file is (0, None); a piece
    of a segment the broker splits (LogLoader.splitOverflowedSegment), or the bytes a recovery keeps or
    drops, is a narrower span of the same file. kdump's one segment shape, local or remote: the log dir walk,
    the remote store walk (kdump.log.remote_layout), the loader, the producer-state replay and the replica
    walks take it.

    A remote segment (KIP-405; RemoteLogSegmentMetadata's start offset and RemoteLogSegmentId) has
    ``remote_id`` and may carry the producer snapshot and the leader epoch checkpoint its remote storage
    manager keeps beside it (RemoteLogSegmentFileset, Kafka 4.3.0): the producer state and the partition's
    epochs at the segment's end. A local segment has neither: its partition's snapshots and checkpoint are
    the partition dir's own files."""

    base_offset: int
    log: str | None = None
    index: str | None = None
    time_index: str | None = None
    txn_index: str | None = None
    start: int = 0
    end: int | None = None
    remote_id: str | None = None                  # the RemoteLogSegmentId (22 base64url characters); None: local
    snapshot: str | None = None                   # remote only: the producer state at the segment's end
    leader_epoch_checkpoint: str | None = None    # remote only: the partition's epochs cut at the segment's end

    @property
    def remote(self) -> bool:
        return self.remote_id is not None

    def paths(self) -> list[str]:
        """The segment's own files: its log and its indexes."""
        return [p for p in (self.log, self.index, self.time_index, self.txn_index) if p is not None]

    def state_paths(self) -> list[str]:
        """A remote segment's producer snapshot and leader epoch checkpoint (none for a local segment)."""
        return [p for p in (self.snapshot, self.leader_epoch_checkpoint) if p is not None]


@dataclass(frozen=True, slots=True)
class PartitionDir:
    path: str
    topic: str
    partition: int
    state: str | None                           # None, "delete", "future" or "stray"
    segments: tuple[SegmentFiles, ...] = ()     # ascending base offset
    snapshots: tuple[str, ...] = ()             # producer-state .snapshot files, ascending offset
    other_files: tuple[str, ...] = field(default=())  # checkpoints, partition.metadata, .deleted/.cleaned/.swap


def parse_partition_dir_name(name: str) -> tuple[str, int, str | None] | None:
    """(topic, partition, state) for a partition directory name, None for anything else."""
    match = _PARTITION_DIR.match(name)
    if not match:
        return None
    return match.group("topic"), int(match.group("partition")), match.group("state")


def read_partition_dir(path: str) -> PartitionDir:
    """List one partition directory's files, grouped by segment."""
    name = base_name(path)
    parsed = parse_partition_dir_name(name)
    if parsed is None:
        raise InputError("not a partition directory (expected <topic>-<partition>)", path=path)
    topic, partition, state = parsed
    names = [entry for entry, _ in list_dir(path)]
    by_base: dict[int, dict[str, str]] = {}
    snapshots: list[tuple[int, str]] = []
    others: list[str] = []
    for file_name in names:
        full = join(absolute(path), file_name)
        segment = parse_segment_file_name(file_name)
        if segment is None or segment[2]:
            others.append(full)
            continue
        base, suffix, _ = segment
        if suffix == "snapshot":
            snapshots.append((base, full))
        else:
            by_base.setdefault(base, {})[suffix] = full
    segments = tuple(
        SegmentFiles(base, files.get("log"), files.get("index"), files.get("timeindex"), files.get("txnindex"))
        for base, files in sorted(by_base.items())
    )
    return PartitionDir(absolute(path), topic, partition, state, segments,
                        tuple(p for _, p in sorted(snapshots)), tuple(others))


LOG_DIR_FILES = frozenset({"meta.properties", "recovery-point-offset-checkpoint", "replication-offset-checkpoint",
                           "log-start-offset-checkpoint", "cleaner-offset-checkpoint", ".lock",
                           "bootstrap.checkpoint"})
"""Files only a log dir's root holds (LogManager, KafkaRaftServer)."""

PARTITION_FILES = frozenset({"leader-epoch-checkpoint", "partition.metadata"})
"""Files only a partition directory holds, besides its segment files."""


def holds_log_dir_files(path: str) -> bool:
    """Whether the directory's contents make it a log dir: log-dir files or partition folders, no segments."""
    try:
        entries = list_dir(path)
    except InputError:
        return False
    if any(parse_segment_file_name(n) is not None or n in PARTITION_FILES for n, _ in entries):
        return False
    if any(n in LOG_DIR_FILES for n, _ in entries):
        return True
    return any(parse_partition_dir_name(n) is not None and directory for n, directory in entries)


def is_partition_dir(path: str) -> bool:
    """A directory named ``<topic>-<partition>`` that does not hold a log dir's contents."""
    return (is_dir(path) and parse_partition_dir_name(base_name(path)) is not None
            and not holds_log_dir_files(path))


def walk_partitions(path: str) -> Iterator[PartitionDir]:
    """Every partition directory at or below ``path`` (a partition dir, a log dir, or a parent of log dirs).

    Sorted by topic then partition number within each directory level, so output is stable.
    """
    if is_partition_dir(path):
        yield read_partition_dir(path)
        return
    if not is_dir(path):
        raise InputError("not a directory", path=path)
    partitions = []
    subdirs = []
    for entry, directory in list_dir(path):
        full = join(path, entry)
        if not directory:
            continue
        parsed = parse_partition_dir_name(entry)
        if parsed is not None and not holds_log_dir_files(full):
            partitions.append((parsed[0], parsed[1], full))
        else:
            subdirs.append(full)
    for _, _, full in sorted(partitions):
        yield read_partition_dir(full)
    for full in sorted(subdirs):
        yield from walk_partitions(full)


def _sizes(paths: Iterable[str]) -> int:
    """The sizes of ``paths`` added up; a file gone since the walk counts 0."""
    total = 0
    for path in paths:
        try:
            total += os.stat(path).st_size
        except OSError:
            pass
    return total


def log_bytes(segments: Iterable[SegmentFiles]) -> int:
    """The size of the segments' ``.log`` files (for progress)."""
    return _sizes(seg.log for seg in segments if seg.log is not None)


def files_bytes(segments: Iterable[SegmentFiles]) -> int:
    """The size of all the segments' files, indexes too (how much a check may read)."""
    return _sizes(path for seg in segments for path in seg.paths())
