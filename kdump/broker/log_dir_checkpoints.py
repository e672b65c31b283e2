"""A log dir's offset checkpoints and a partition's leader-epoch checkpoint, read as the broker reads them.

The one reader of these files: ``recover`` (kdump.broker.loader), ``replicas``, ``verify``, ``summary``,
``find``, ``txn`` and ``tiered`` all ask it, and the numbers they print come from kdump.broker.unified_log.
Kafka 4.3.0 keeps them in four files at the root of each log dir (``topic partition offset`` per line,
kdump.format.checkpoint):

- ``recovery-point-offset-checkpoint`` and ``log-start-offset-checkpoint``: LogManager
  (core/src/main/scala/kafka/log/LogManager.scala, RecoveryPointCheckpointFile and
  LogStartOffsetCheckpointFile), read by ``loadLogs`` before any partition loads;
- ``replication-offset-checkpoint``: ReplicaManager's high watermarks (HighWatermarkFilename);
- ``cleaner-offset-checkpoint``: LogCleanerManager's first dirty offsets;

and ``leader-epoch-checkpoint`` in each partition dir (LeaderEpochCheckpointFile). A tiered partition's
log start offset lies in remote storage, below its first local segment: whether a partition is tiered
comes from the log dir's ``__remote_log_metadata`` (kdump.broker.remote_log_metadata.remote_log_starts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kdump.broker.remote_log_metadata import remote_log_starts
from kdump.broker.unified_log import LogOffsetsSnapshot
from kdump.errors import KdumpError
from kdump.format.checkpoint import (
    LEADER_EPOCH_CHECKPOINT_NAME,
    EpochEntry,
    parse_leader_epoch_checkpoint,
    parse_offset_checkpoint,
)
from kdump.log.locations import join
from kdump.log.state_files import read_if_exists

RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
HIGH_WATERMARK_CHECKPOINT = "replication-offset-checkpoint"
LOG_START_CHECKPOINT = "log-start-offset-checkpoint"
CLEANER_CHECKPOINT = "cleaner-offset-checkpoint"
OFFSET_CHECKPOINTS = (RECOVERY_POINT_CHECKPOINT, HIGH_WATERMARK_CHECKPOINT, LOG_START_CHECKPOINT, CLEANER_CHECKPOINT)

ReadSmall = Callable[[str], "bytes | None"]
"""Reads a small file whole; None when it does not exist."""


@dataclass(frozen=True, slots=True)
class PartitionCheckpoints:
    """What the log dir's checkpoints say of one partition (None: no entry), and whether it is tiered."""

    recovery_point: int | None = None
    high_watermark: int | None = None
    log_start_offset: int | None = None
    cleaner_offset: int | None = None
    remote_log_start: int | None = None    # the first offset in remote storage of a tiered partition

    @property
    def remote_log_enabled(self) -> bool:
        return self.remote_log_start is not None

    def offsets(self, first_segment_base: int | None, log_end: int | None,
                first_unstable: int | None = None) -> LogOffsetsSnapshot:
        """The partition's offsets (kdump.broker.unified_log) from these checkpoints and its segments."""
        return LogOffsetsSnapshot.of(log_start_checkpoint=self.log_start_offset, first_segment_base=first_segment_base,
                                     log_end=log_end, high_watermark_checkpoint=self.high_watermark,
                                     recovery_point=self.recovery_point, first_unstable=first_unstable,
                                     remote_log_enabled=self.remote_log_enabled)


@dataclass
class LogDirCheckpoints:
    """The offset checkpoint files of one log dir: file name -> (topic, partition) -> offset, for the files
    that exist and parse; ``problems``: file name -> why it could not be read or parsed."""

    path: str
    tables: dict[str, dict[tuple[str, int], int]] = field(default_factory=dict)
    problems: dict[str, KdumpError] = field(default_factory=dict)
    _remote_starts: dict[tuple[str, int], int] | None = None     # read once, when a partition first needs it

    def remote_log_starts(self) -> dict[tuple[str, int], int]:
        """This log dir's ``__remote_log_metadata`` view (kdump.broker.remote_log_metadata), read once."""
        if self._remote_starts is None:
            self._remote_starts = remote_log_starts(self.path)
        return self._remote_starts

    def offset(self, name: str, topic: str, partition: int) -> int | None:
        return self.tables.get(name, {}).get((topic, partition))

    def partition(self, topic: str, partition: int, first_segment_base: int | None = None) -> PartitionCheckpoints:
        """The checkpoints of one partition. Its log start checkpoint below ``first_segment_base`` is a
        tiered partition's normal state, asked of the log dir's ``__remote_log_metadata`` only then."""
        start = self.offset(LOG_START_CHECKPOINT, topic, partition)
        below = start is not None and first_segment_base is not None and start < first_segment_base
        return PartitionCheckpoints(self.offset(RECOVERY_POINT_CHECKPOINT, topic, partition),
                                    self.offset(HIGH_WATERMARK_CHECKPOINT, topic, partition), start,
                                    self.offset(CLEANER_CHECKPOINT, topic, partition),
                                    self.remote_log_starts().get((topic, partition)) if below else None)


def read_log_dir_checkpoints(log_dir: str, read: ReadSmall = read_if_exists) -> LogDirCheckpoints:
    """Every offset checkpoint file of ``log_dir`` (a missing file holds no entry)."""
    out = LogDirCheckpoints(log_dir)
    for name in OFFSET_CHECKPOINTS:
        path = join(log_dir, name)
        try:
            data = read(path)
            if data is None:
                continue
            parsed = parse_offset_checkpoint(data, path)
        except KdumpError as err:
            out.problems[name] = err
            continue
        out.tables[name] = {(e.topic, e.partition): e.offset for e in parsed.entries}
    return out


class CheckpointCache:
    """One ``LogDirCheckpoints`` per log dir, each read once."""

    def __init__(self, read: ReadSmall = read_if_exists) -> None:
        self.read = read
        self._dirs: dict[str, LogDirCheckpoints] = {}

    def log_dir(self, log_dir: str) -> tuple[LogDirCheckpoints, bool]:
        """The checkpoints of ``log_dir``, and True the first time it is asked (to tell its problems once)."""
        found = self._dirs.get(log_dir)
        if found is not None:
            return found, False
        found = self._dirs[log_dir] = read_log_dir_checkpoints(log_dir, self.read)
        return found, True


def read_leader_epochs(partition_path: str, read: ReadSmall = read_if_exists) -> list[EpochEntry] | None:
    """The entries of the partition's ``leader-epoch-checkpoint`` (None when there is none); a file that
    cannot be read or parsed raises KdumpError."""
    path = join(partition_path, LEADER_EPOCH_CHECKPOINT_NAME)
    data = read(path)
    return None if data is None else list(parse_leader_epoch_checkpoint(data, path).entries)


__all__ = [
    "CLEANER_CHECKPOINT",
    "HIGH_WATERMARK_CHECKPOINT",
    "LOG_START_CHECKPOINT",
    "OFFSET_CHECKPOINTS",
    "RECOVERY_POINT_CHECKPOINT",
    "CheckpointCache",
    "LogDirCheckpoints",
    "PartitionCheckpoints",
    "ReadSmall",
    "read_leader_epochs",
    "read_log_dir_checkpoints",
]
