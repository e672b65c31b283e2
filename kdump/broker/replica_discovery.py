"""The replicas of each partition found under several brokers' log dirs, and what their own files say.

A PATH is a broker's log dir (the broker named by ``meta.properties`` ``node.id`` or ``broker.id``,
the dir by ``directory.id``), a partition dir, or a folder holding such log dirs. Replicas of one
partition are matched by topic name and topic id (``partition.metadata``, KIP-516). A PATH may be an
s3://, gs://, hdfs:// URI as well: every file is reached through kdump.log.locations, so the same bytes are read.

Per replica this module reads the small files only: the log dir's checkpoints (as the broker reads them,
kdump.broker.log_dir_checkpoints), ``partition.metadata`` and ``leader-epoch-checkpoint``. What the
segments hold on disk and what the broker's loader leaves of them is kdump.broker.replica_state.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kdump.broker import unified_log
from kdump.broker.leader_epoch_cache import LeaderEpochFileCache
from kdump.broker.log_dir_checkpoints import CLEANER_CHECKPOINT, read_leader_epochs
from kdump.broker.log_manager import METADATA_TOPIC, LogDirState, read_log_dir_state
from kdump.broker.partition_plan import LoadedLog
from kdump.errors import InputError, KdumpError
from kdump.findings import WARNING, Finding
from kdump.format.checkpoint import (
    EpochEntry,
    parse_partition_metadata,
)
from kdump.log.locations import base_name, exists, is_dir, join
from kdump.log.locations import parent as parent_of
from kdump.log.logdir import PartitionDir, SegmentFiles, walk_partitions
from kdump.log.segment import read_small_file
from kdump.log.state_files import read_log_dir_identity

_SMALL_FILE_LIMIT = 64 << 20


@dataclass
class LogDir:
    """One broker log dir and what its own files say."""

    path: str
    broker: int | None
    directory_id: str | None
    state: LogDirState
    cleaner_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return str(self.broker) if self.broker is not None else base_name(self.path)


@dataclass
class DiskLog:
    """What a replica's segments hold as they lie on disk (kdump.broker.replica_state walks their headers)."""

    log_end_offset: int = 0
    first_batch_offset: int | None = None
    batches: int = 0
    records: int = 0
    bytes: int = 0
    batch_epochs: list[EpochEntry] = field(default_factory=list)      # where each epoch's batches start
    read_errors: list[str] = field(default_factory=list)              # "<file>: position <n>: <reason>"


@dataclass
class Replica:
    """One replica of a partition on one broker's disk: its files as they lie, and the log the broker's
    loader leaves of them (``loaded``; None for a ``-delete`` dir, which is not loaded, or one the broker
    cannot load, ``offline`` saying why). The offsets and epochs below are the loaded ones where there are."""

    log_dir: LogDir
    partition: PartitionDir
    topic_id: str | None = None
    checkpoint_epochs: list[EpochEntry] = field(default_factory=list)   # leader-epoch-checkpoint
    log_start_checkpoint: int = 0
    high_watermark_checkpoint: int | None = None                       # replication-offset-checkpoint
    recovery_point_checkpoint: int | None = None                       # recovery-point-offset-checkpoint
    cleaner_offset: int | None = None
    disk: DiskLog = field(default_factory=DiskLog)
    loaded: LoadedLog | None = None
    kept_parts: list[SegmentFiles] = field(default_factory=list)         # the loaded log's bytes
    lost_parts: list[SegmentFiles] = field(default_factory=list)         # the bytes loading drops
    offline: str | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def broker(self) -> int | None:
        return self.log_dir.broker

    @property
    def label(self) -> str:
        return self.log_dir.label

    @property
    def state(self) -> str | None:
        """None for a live replica; "future", "delete" or "stray" from the directory name, "offline" when the
        broker cannot load it."""
        if self.partition.state is None and self.offline is not None:
            return "offline"
        return self.partition.state

    @property
    def clean_shutdown(self) -> bool:
        return self.log_dir.state.clean_shutdown

    @property
    def log_start_offset(self) -> int:
        """The local log start offset (a tiered partition's log start below it is remote storage's)."""
        if self.loaded is not None:
            return self.loaded.local_log_start_offset
        first = self.partition.segments[0].base_offset if self.partition.segments else None
        return unified_log.local_log_start_offset(self.log_start_checkpoint, first)

    @property
    def log_end_offset(self) -> int:
        return self.loaded.log_end_offset if self.loaded is not None else self.disk.log_end_offset

    @property
    def high_watermark(self) -> int | None:
        if self.loaded is not None:
            return self.loaded.high_watermark
        return unified_log.high_watermark(self.high_watermark_checkpoint, self.log_start_offset, self.log_end_offset)

    @property
    def committed_end(self) -> int:
        """The high watermark as the broker loads it (within [log start, log end]; the log start without one)."""
        hw = self.high_watermark
        return self.log_start_offset if hw is None else hw

    @property
    def recovery_point(self) -> int | None:
        return self.loaded.recovery_point if self.loaded is not None else self.recovery_point_checkpoint

    @property
    def last_stable_offset(self) -> int | None:
        return self.loaded.last_stable_offset if self.loaded is not None else None

    @property
    def epochs(self) -> list[EpochEntry]:
        """The leader-epoch cache the broker holds (after loading: truncated to the loaded log)."""
        return list(self.loaded.epochs) if self.loaded is not None else list(self.checkpoint_epochs)

    @property
    def cache(self) -> LeaderEpochFileCache:
        return LeaderEpochFileCache(self.epochs)


def _read_log_dir(path: str) -> LogDir:
    identity = read_log_dir_identity(path)
    log_dir = LogDir(path, identity.broker, identity.directory_id, read_log_dir_state(path),
                     problems=[identity.problem] if identity.problem else [])
    log_dir.problems.extend(log_dir.state.notes)
    if log_dir.state.refusal is not None:
        log_dir.problems.append(f"{log_dir.state.refusal[0]}: {log_dir.state.refusal[1]}")
    log_dir.cleaner_offsets = log_dir.state.checkpoints.tables.get(CLEANER_CHECKPOINT, {})
    if CLEANER_CHECKPOINT in log_dir.state.checkpoints.problems:
        log_dir.problems.append(f"{join(path, CLEANER_CHECKPOINT)}: "
                                f"{log_dir.state.checkpoints.problems[CLEANER_CHECKPOINT].reason}")
    return log_dir


@dataclass
class Discovery:
    """Every replica found, and the KRaft metadata log copies among them."""

    replicas: list[Replica] = field(default_factory=list)
    metadata_dirs: list[PartitionDir] = field(default_factory=list)
    log_dirs: list[LogDir] = field(default_factory=list)


def discover(paths: Iterable[str], *, topic: str | None = None, partition: int | None = None) -> Discovery:
    """The replicas under ``paths`` (each a log dir, a partition dir or a folder of log dirs)."""
    found = Discovery()
    log_dirs: dict[str, LogDir] = {}
    seen: set[str] = set()
    for path in paths:
        if not is_dir(path):
            raise InputError("not a directory", path=path)
        for pdir in walk_partitions(path):
            if pdir.path in seen:
                continue
            seen.add(pdir.path)
            parent = parent_of(pdir.path)
            if pdir.topic == METADATA_TOPIC:
                found.metadata_dirs.append(pdir)
                continue
            if (topic is not None and pdir.topic != topic) or (partition is not None and pdir.partition != partition):
                continue
            if parent not in log_dirs:
                log_dirs[parent] = _read_log_dir(parent)
                found.log_dirs.append(log_dirs[parent])
            found.replicas.append(Replica(log_dirs[parent], pdir))
    return found


def read_replica_files(replica: Replica) -> None:
    """The partition's own files and the log dir's checkpoints for it (no segment is read)."""
    pdir, key = replica.partition, (replica.partition.topic, replica.partition.partition)
    meta = join(pdir.path, "partition.metadata")
    if exists(meta):
        try:
            replica.topic_id = parse_partition_metadata(read_small_file(meta, _SMALL_FILE_LIMIT), meta).topic_id
        except KdumpError as err:
            replica.findings.append(Finding(WARNING, "unreadable", meta, err.reason))
    epochs = join(pdir.path, "leader-epoch-checkpoint")
    try:
        replica.checkpoint_epochs = read_leader_epochs(pdir.path) or []
    except KdumpError as err:
        replica.findings.append(Finding(WARNING, "unreadable", epochs, err.reason))
    first_base = pdir.segments[0].base_offset if pdir.segments else None
    checkpoints = replica.log_dir.state.partition(*key, first_base)   # kdump.broker.log_dir_checkpoints
    replica.high_watermark_checkpoint = checkpoints.high_watermark
    replica.recovery_point_checkpoint = checkpoints.recovery_point
    replica.cleaner_offset = checkpoints.cleaner_offset
    replica.log_start_checkpoint = checkpoints.log_start_offset or 0


def group_partitions(replicas: Iterable[Replica]) -> Iterator[tuple[str, int, list[Replica]]]:
    """Replicas by (topic, partition) in name order; a replica whose topic id differs from the
    others' (a deleted and re-created topic) is still grouped, and flagged by the caller."""
    groups: dict[tuple[str, int], list[Replica]] = {}
    for replica in replicas:
        groups.setdefault((replica.partition.topic, replica.partition.partition), []).append(replica)
    for (topic, number), members in sorted(groups.items()):
        members.sort(key=lambda r: (r.broker if r.broker is not None else 1 << 31, r.log_dir.path,
                                    r.state or ""))
        yield topic, number, members


__all__ = [
    "Discovery",
    "DiskLog",
    "LogDir",
    "Replica",
    "discover",
    "group_partitions",
    "read_replica_files",
]
