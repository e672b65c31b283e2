"""What a broker derives from each batch it appends, recovers or loads: the one batch applier of kdump.

Kafka applies a batch's effects with the same two rules wherever a batch enters a log (4.3.0,
storage/src/main/java/org/apache/kafka/storage/internals/log/):

- the leader epoch cache: a v2 batch whose partition leader epoch is above the cache's latest starts
  that epoch at its base offset (LogSegment.recover; UnifiedLog.append's maybeAssignEpochStartOffset,
  which LeaderEpochFileCache.assign ignores unless the epoch is new);
- the producer state: a v2 batch with a producer id updates its producer, a transactional one starts a
  transaction, a COMMIT or ABORT marker completes it (ProducerAppendInfo, ProducerStateManager.update;
  UnifiedLog.loadProducersFromRecords while loading, LogSegment.recover's updateProducerState).

``BatchApplier`` is fed by LogSegment.recover (kdump.broker.recovery), the load's producer replay
(kdump.broker.unified_log.feed), the writer of ``kdump gen`` (kdump.broker.broker_files) and the replica
walk of ``kdump replicas`` (kdump.broker.replica_state). A control batch's effect needs its first record
(the marker's type): the caller reads it when ``needs_control`` says so, and only then.
"""

from __future__ import annotations

from collections.abc import Iterable

from kdump.broker.leader_epoch_cache import LeaderEpochFileCache
from kdump.broker.producer_state import CompletedTxn, ProducerStateManager
from kdump.format.batch import Batch
from kdump.format.control import ControlRecordInfo, parse_control_record
from kdump.format.records import Record


class BatchApplier:
    """Feeds each batch to a leader epoch cache and a producer state manager (either may be left out)."""

    __slots__ = ("epochs", "producers")

    def __init__(self, epochs: LeaderEpochFileCache | None = None,
                 producers: ProducerStateManager | None = None) -> None:
        self.epochs = epochs
        self.producers = producers

    def needs_control(self, batch: Batch) -> bool:
        """Whether ``apply`` needs ``batch``'s first record: a v2 control batch of a producer, with producer state."""
        return self.producers is not None and batch.is_control and batch.magic >= 2 and batch.producer_id >= 0

    def apply(self, batch: Batch, control: ControlRecordInfo | None = None) -> CompletedTxn | None:
        """The batch's effect on the epochs and producers; the transaction a marker completes, if any."""
        if batch.magic < 2:
            return None    # no partition leader epoch or producer id before magic 2
        epochs = self.epochs
        if epochs is not None and batch.partition_leader_epoch >= 0:
            latest = epochs.latest_epoch
            if latest is None or batch.partition_leader_epoch > latest:
                epochs.assign(batch.partition_leader_epoch, batch.base_offset)
        if self.producers is None or batch.producer_id < 0:
            return None
        return self.producers.append(batch, control)


def control_record(records: Iterable[Record]) -> ControlRecordInfo | None:
    """A control batch's marker, parsed from its first record (None for an empty batch: the cleaner removed it)."""
    first = next(iter(records), None)
    return None if first is None else parse_control_record(first.key, first.value)


__all__ = ["BatchApplier", "control_record"]
