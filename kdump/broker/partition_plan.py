"""The plan of what a broker does to one partition dir when it loads it (kdump.broker.loader makes it,
``kdump recover`` renders and writes it): the files it deletes or renames, the segments it recovers,
truncates or deletes, and the offsets, leader epochs, snapshots and transactions that follow.
Field names follow Kafka 4.3.0's LogLoader and UnifiedLog.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kdump.broker.recovery import DeletedSegment, SegmentRecovery, UncheckedSegment
from kdump.broker.unified_log import TransactionEffect, last_stable_offset
from kdump.format.checkpoint import EpochEntry
from kdump.log.logdir import SegmentFiles


@dataclass(frozen=True, slots=True)
class LoadedLog:
    """The state a partition is in once LogLoader has loaded it: the one "after loading" of every command.

    LogLoader.load returns LoadedLogOffsets (log start offset, recovery point, next offset); the UnifiedLog
    built on them holds the high watermark (the checkpoint within [local log start, log end],
    updateHighWatermark), the leader-epoch cache (truncateFromEnd then truncateFromStart) and the producer
    state whose first unstable offset holds back the last stable offset (Kafka 4.3.0,
    storage/.../internals/log/LogLoader.java and UnifiedLog.java). ``log_end_offset_on_disk`` is the end the
    files show before loading, ``high_watermark_checkpoint`` the value the log dir recorded.
    """

    log_start_offset: int
    local_log_start_offset: int
    log_end_offset: int
    log_end_offset_on_disk: int
    recovery_point: int
    high_watermark: int | None
    high_watermark_checkpoint: int | None
    epochs: tuple[EpochEntry, ...]
    first_unstable_offset: int | None
    last_stable_offset: int | None


@dataclass
class FileChange:
    """One file the broker deletes or renames while loading (``to`` is set for a rename)."""

    path: str
    action: str            # "delete" or "rename"
    why: str
    to: str | None = None


@dataclass
class PartitionPlan:
    topic: str
    partition: int
    path: str
    clean_shutdown: bool
    recovery_point: int
    log_start_checkpoint: int
    high_watermark_checkpoint: int | None
    file_changes: list[FileChange] = field(default_factory=list)
    recovered: list[SegmentRecovery] = field(default_factory=list)
    deleted_segments: list[DeletedSegment] = field(default_factory=list)
    rebuilt_indexes: list[tuple[str, str]] = field(default_factory=list)        # (segment log, why)
    unchecked: list[UncheckedSegment] = field(default_factory=list)          # kept, not recovered, and damaged
    kept_segments: list[SegmentFiles] = field(default_factory=list)   # a split's pieces: spans of the old file
    kept_parts: list[SegmentFiles] = field(default_factory=list)    # the bytes of the loaded log, in log order
    lost_parts: list[SegmentFiles] = field(default_factory=list)    # the bytes loading drops
    epochs: list[EpochEntry] = field(default_factory=list)                      # leader-epoch cache after loading
    epochs_removed: list[EpochEntry] = field(default_factory=list)
    epochs_added: list[EpochEntry] = field(default_factory=list)
    snapshots_deleted: list[str] = field(default_factory=list)
    snapshot_written: int | None = None       # the offset of the snapshot rebuildProducerState adds, if new
    log_end_offset_before: int = 0
    log_end_offset: int = 0
    log_start_offset: int = 0
    local_log_start_offset: int = 0
    new_recovery_point: int = 0
    high_watermark: int | None = None
    transactions: TransactionEffect = field(default_factory=TransactionEffect)
    dir_state: str | None = None              # None, or "future", "stray", "delete" (the dir name's suffix)
    refused_file: str | None = None           # the broker cannot load this partition because of this file
    refused_reason: str | None = None         # (it takes the log dir offline, or fails to start)

    def refuse(self, path: str, reason: str) -> None:
        self.refused_file, self.refused_reason = path, reason

    @property
    def refused(self) -> str | None:
        return None if self.refused_file is None else f"{self.refused_file}: {self.refused_reason}"

    @property
    def loaded(self) -> LoadedLog:
        """What the broker holds once this plan is carried out (meaningless for a refused plan)."""
        open_after = self.transactions.open_after
        first_unstable = min((t.first_offset for t in open_after), default=None)
        return LoadedLog(self.log_start_offset, self.local_log_start_offset, self.log_end_offset,
                         self.log_end_offset_before, self.new_recovery_point, self.high_watermark,
                         self.high_watermark_checkpoint, tuple(self.epochs), first_unstable,
                         last_stable_offset(first_unstable, self.high_watermark, self.log_end_offset))

    @property
    def loses_data(self) -> bool:
        return any(r.lost_batches or (r.truncated_bytes and not r.zero_padding) for r in self.recovered) or \
            bool(self.deleted_segments) or self.committed_lost is not None

    @property
    def committed_lost(self) -> tuple[int, int] | None:
        """The offsets the high watermark checkpoint proves were committed (below it) that the log no
        longer holds after loading: from the new log end offset to the checkpoint's high watermark."""
        hw = self.high_watermark_checkpoint
        if hw is None or self.refused_file is not None or self.dir_state == "delete" or hw <= self.log_end_offset:
            return None
        return self.log_end_offset, hw - 1


__all__ = ["FileChange", "LoadedLog", "PartitionPlan"]
