"""A partition once its cluster is back: the state after restart, the one kdump predicts from the disks.

Built from a ``PartitionReport`` (kdump.broker.replica_report): the leader the cluster then has (recorded or
elected, kdump.broker.election), its log as its broker's loader leaves it (kdump.broker.replica_state), each
follower's fetcher truncation (kdump.broker.follower_truncation), and the high watermark once every live
follower has caught up: the leader's log end offset, as Partition.maybeIncrementLeaderHW moves it to the
smallest log end of the in-sync replicas (Kafka 4.3.0 core/src/main/scala/kafka/cluster/Partition.scala).
The last stable offset follows from the leader's producer state after loading (UnifiedLog.lastStableOffset);
transactions the coordinator has yet to end hold it back. Consumers (``kdump groups``) and the cluster's
history (``kdump export --cluster``) read this, and build no state of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from kdump.broker.election import Election
from kdump.broker.follower_truncation import leader_view
from kdump.broker.leader_epoch_cache import LeaderEpochFileCache
from kdump.broker.replica_discovery import Replica
from kdump.broker.replica_loss import PartitionLoss, Truncation
from kdump.broker.replica_report import PartitionReport
from kdump.broker.unified_log import last_stable_offset
from kdump.format.checkpoint import EpochEntry


@dataclass(frozen=True, slots=True)
class PartitionAfterRestart:
    """What a partition holds once its cluster is back and its followers have caught up (a prediction)."""

    topic: str
    partition: int
    election: Election
    leader: Replica
    log_start_offset: int
    local_log_start_offset: int
    log_end_offset: int
    high_watermark: int
    last_stable_offset: int
    epochs: tuple[EpochEntry, ...]          # the leader's cache, its leadership epoch at its log end (makeLeader)
    truncations: tuple[Truncation, ...]
    loss: PartitionLoss

    def end_offset_for(self, epoch: int) -> tuple[int, int]:
        """The leader's answer to OffsetsForLeaderEpoch (LeaderEpochFileCache.endOffsetFor): (epoch, end offset)."""
        return LeaderEpochFileCache(self.epochs).end_offset_for(epoch, self.log_end_offset)


def after_restart(report: PartitionReport) -> PartitionAfterRestart | None:
    """The partition after restart; None when no replica among the PATHs leads it (the leader's dirs are
    missing, or no replica can be elected): ``report.findings`` says why. The leader leads at the election's
    epoch from its log end offset on (Partition.makeLeader, the same view its followers fetch from)."""
    leader, election = report.leader, report.election
    if leader is None or election is None or leader.loaded is None:
        return None
    loaded = leader.loaded
    view = leader_view(leader.log_start_offset, loaded.log_end_offset, leader.cache, election.leader_epoch)
    hw = loaded.log_end_offset
    lso = last_stable_offset(loaded.first_unstable_offset, hw, loaded.log_end_offset)
    assert lso is not None
    return PartitionAfterRestart(report.topic, report.partition, election, leader, loaded.log_start_offset,
                                 loaded.local_log_start_offset, loaded.log_end_offset, hw, lso,
                                 tuple(view.cache.entries), tuple(report.truncations), report.loss)


__all__ = ["PartitionAfterRestart", "after_restart"]
