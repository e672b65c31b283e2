"""What a broker reads from a log dir before it loads its partitions, and which partition dirs it loads:
Kafka's LogManager.loadLogs (core/src/main/scala/kafka/log/LogManager.scala, 3.9.0 and 4.3.0), read-only.

The clean-shutdown marker, the offset checkpoints (kdump.broker.log_dir_checkpoints: the one reader of
them) and what an unreadable one does to the log dir; every partition dir is loaded, ``-future`` and
``-stray`` ones too, ``-delete`` ones without recovery. Each partition dir is then planned by
kdump.broker.loader (LogLoader).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from kdump.broker.log_dir_checkpoints import (
    CLEANER_CHECKPOINT,
    HIGH_WATERMARK_CHECKPOINT,
    LogDirCheckpoints,
    PartitionCheckpoints,
    read_log_dir_checkpoints,
)
from kdump.log.locations import exists, join
from kdump.log.logdir import is_partition_dir, parse_partition_dir_name

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
"""The marker a broker writes into each log dir at a clean shutdown (CleanShutdownFileHandler)."""

METADATA_TOPIC = "__cluster_metadata"


@dataclass
class LogDirState:
    """What the broker reads from a log dir's own files before it loads the partitions."""

    path: str
    clean_shutdown: bool
    checkpoints: LogDirCheckpoints
    notes: list[str] = field(default_factory=list)
    refusal: tuple[str, str] | None = None        # (file, why): the broker loads no partition of this dir

    def partition(self, topic: str, partition: int, first_segment_base: int | None = None) -> PartitionCheckpoints:
        """What the checkpoints say of one partition (a -future or -stray dir: the same topic and partition)."""
        return self.checkpoints.partition(topic, partition, first_segment_base)


def read_log_dir_state(log_dir: str) -> LogDirState:
    """The clean-shutdown marker and the offset checkpoints of a log dir."""
    checkpoints = read_log_dir_checkpoints(log_dir)
    state = LogDirState(log_dir, exists(join(log_dir, CLEAN_SHUTDOWN_FILE)), checkpoints)
    for name, err in checkpoints.problems.items():
        path = join(log_dir, name)
        if name == CLEANER_CHECKPOINT:
            continue    # read by the log cleaner once it runs, not while logs load
        if name == HIGH_WATERMARK_CHECKPOINT:
            # Read by ReplicaManager when a partition becomes leader, not while logs load.
            state.notes.append(f"{path}: {err.reason}; the broker fails to read it when the partitions "
                               f"become leaders")
        else:
            # LogManager.loadLogs warns and resets the offsets, but CheckpointFileWithFailureHandler.read
            # has already marked the log dir offline: no partition of it loads, and a broker whose only
            # log dir is offline stops.
            state.refusal = (path, f"{err.reason} (reading it takes the log dir offline: the broker does not "
                                   f"load it and stops when it has no other log dir)")
    return state


def partition_dirs(log_dir: str, state: LogDirState) -> list[str]:
    """The partition dirs a broker loads from ``log_dir``, in topic and partition order (notes in ``state``
    say what is left out).

    LogManager.loadLogs loads every directory but the tiered-storage index cache and the KRaft metadata
    log: ``-future`` (a replica being moved here) and ``-stray`` dirs are loaded and recovered like any
    log, ``-delete`` dirs are loaded without recovery and deleted.
    """
    partitions = []
    for name in os.listdir(log_dir):
        parsed = parse_partition_dir_name(name)
        full = os.path.join(log_dir, name)
        if parsed is None or not os.path.isdir(full):
            continue
        if parsed[0] == METADATA_TOPIC:
            # KafkaMetadataLog loads the KRaft log with its own rules (snapshots, the quorum's epoch).
            state.notes.append(f"{full}: the KRaft metadata log is loaded by the raft layer; not planned here")
            continue
        partitions.append((parsed[0], parsed[1], parsed[2] or "", full))
    return [full for *_, full in sorted(partitions)]


def recover_targets(path: str) -> tuple[LogDirState, list[str]]:
    """The log dir state and the partition dirs ``kdump recover PATH`` plans: PATH itself when it is a
    partition dir (with its parent's checkpoints), else every partition dir of the log dir PATH."""
    if is_partition_dir(path):
        return read_log_dir_state(os.path.dirname(os.path.abspath(path))), [path]
    state = read_log_dir_state(path)
    return state, partition_dirs(path, state)


__all__ = ["CLEAN_SHUTDOWN_FILE", "METADATA_TOPIC", "LogDirState", "partition_dirs", "read_log_dir_state",
           "recover_targets"]
