"""Producers and transactions of one partition, as its broker tracks them: the one replay of kdump.

Follows storage/src/main/java/org/apache/kafka/storage/internals/log/ of Kafka 4.3.0:

- ``ProducerStateEntry`` (ProducerStateEntry.java): a producer's epoch, its last batch (sequence,
  offset, offset delta, timestamp), the coordinator epoch of its last marker and the first offset of
  its ongoing transaction. kdump keeps the last batch only (what a ``.snapshot`` stores).
- ``ProducerStateManager.append_data_batch`` / ``append_end_txn_marker`` (ProducerAppendInfo.java
  appendDataBatch, appendEndTxnMarker, then ProducerStateManager.update and completeTxn): a
  transactional data batch starts a transaction when its producer has none; an ABORT or COMMIT marker
  completes the ongoing one. A marker from a producer with no ongoing transaction completes nothing:
  it changes neither the last stable offset nor the transaction index.
- ``last_stable_offset`` (ProducerStateManager.lastStableOffset): the first offset of the earliest
  transaction still ongoing for another producer, else the marker's offset + 1; it is what the
  broker writes with an abort into the ``.txnindex`` of the segment holding the marker
  (UnifiedLog.append -> LogSegment.updateTxnIndex).
- ``first_undecided_offset`` (ProducerStateManager.firstUndecidedOffset): the earliest ongoing
  transaction's first offset; the last stable offset of a log holds there.
- ``load_snapshot`` (ProducerStateManager.loadProducerEntry): the state a ``.snapshot`` file holds,
  loaded before the log after it is replayed (UnifiedLog.rebuildProducerState), so a transaction
  whose data retention deleted still completes when its marker is read.

Validation that refuses a client's append (sequence numbers, fencing) is not modelled: a broker
loading its log (AppendOrigin.REPLICATION) logs those and keeps going.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kdump.format.batch import Batch
from kdump.format.control import ControlRecordInfo, ControlType
from kdump.format.snapshot import ProducerSnapshotEntry
from kdump.format.txnindex import AbortedTxn

TXN_INDEX_VERSION = 0
"""AbortedTxn.CURRENT_VERSION: the version of every entry a broker writes."""


@dataclass(slots=True)
class ProducerStateEntry:
    """One producer's state (ProducerStateEntry.java, the last batch of its metadata queue)."""

    producer_id: int
    producer_epoch: int = -1
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    current_txn_first_offset: int | None = None
    last_seq: int = -1
    last_data_offset: int = -1
    last_offset_delta: int = 0

    def maybe_update_producer_epoch(self, producer_epoch: int) -> None:
        """A new epoch forgets the batch metadata (with transaction version 2 every marker bumps it)."""
        if producer_epoch != self.producer_epoch:
            self.last_seq, self.last_data_offset, self.last_offset_delta = -1, -1, 0
            self.producer_epoch = producer_epoch

    def snapshot_entry(self) -> ProducerSnapshotEntry:
        """What ProducerStateManager.writeSnapshot stores for this producer."""
        return ProducerSnapshotEntry(self.producer_id, self.producer_epoch, self.last_seq, self.last_data_offset,
                                     self.last_offset_delta, self.last_timestamp, self.coordinator_epoch,
                                     -1 if self.current_txn_first_offset is None else self.current_txn_first_offset)


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """CompletedTxn.java: a transaction a marker completed (``last_offset`` is the marker's offset)."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool
    last_stable_offset: int    # ProducerStateManager.lastStableOffset, computed before completeTxn

    def aborted_txn(self) -> AbortedTxn:
        """The ``.txnindex`` entry the broker writes for it (aborted transactions only)."""
        return AbortedTxn(TXN_INDEX_VERSION, self.producer_id, self.first_offset, self.last_offset,
                          self.last_stable_offset)


@dataclass(slots=True)
class ProducerStateManager:
    """Every producer of one partition and its ongoing transactions (by first offset)."""

    producers: dict[int, ProducerStateEntry] = field(default_factory=dict)
    ongoing_txns: dict[int, int] = field(default_factory=dict)      # first offset -> producer id

    def entry(self, producer_id: int) -> ProducerStateEntry:
        state = self.producers.get(producer_id)
        if state is None:
            state = self.producers[producer_id] = ProducerStateEntry(producer_id)
        return state

    def load_snapshot(self, entries: Iterable[ProducerSnapshotEntry]) -> None:
        """ProducerStateManager.loadProducerEntry for every entry of a ``.snapshot``."""
        for e in entries:
            self.producers[e.producer_id] = ProducerStateEntry(
                e.producer_id, e.producer_epoch, e.coordinator_epoch, e.timestamp, e.ongoing_txn_first_offset,
                e.last_sequence, e.last_offset, e.offset_delta)
            if e.ongoing_txn_first_offset is not None:
                self.ongoing_txns[e.ongoing_txn_first_offset] = e.producer_id

    def append_data_batch(self, producer_id: int, producer_epoch: int, first_offset: int, last_offset: int, *,
                          last_seq: int = -1, last_timestamp: int = -1, is_transactional: bool) -> bool:
        """ProducerAppendInfo.appendDataBatch; True when the batch starts a transaction."""
        state = self.entry(producer_id)
        state.maybe_update_producer_epoch(producer_epoch)
        state.last_seq, state.last_data_offset = last_seq, last_offset
        state.last_offset_delta, state.last_timestamp = last_offset - first_offset, last_timestamp
        if is_transactional and state.current_txn_first_offset is None:
            state.current_txn_first_offset = first_offset
            self.ongoing_txns[first_offset] = producer_id
            return True
        return False

    def append_end_txn_marker(self, producer_id: int, producer_epoch: int, offset: int, *, is_abort: bool,
                              coordinator_epoch: int = -1, timestamp: int = -1) -> CompletedTxn | None:
        """ProducerAppendInfo.appendEndTxnMarker, then completeTxn: the transaction it completes, if any."""
        state = self.entry(producer_id)
        first = state.current_txn_first_offset
        completed = None
        if first is not None:
            lso = self._last_stable_offset(producer_id, offset)
            completed = CompletedTxn(producer_id, first, offset, is_abort, lso)
            self.ongoing_txns.pop(first, None)
        state.maybe_update_producer_epoch(producer_epoch)
        state.coordinator_epoch, state.last_timestamp = coordinator_epoch, timestamp
        state.current_txn_first_offset = None
        return completed

    def append(self, batch: Batch, control: ControlRecordInfo | None = None) -> CompletedTxn | None:
        """One v2 batch with a producer id (``control``: its first record parsed, for a control batch)."""
        if batch.is_control:
            if control is None or control.type_id not in (ControlType.ABORT, ControlType.COMMIT):
                return None   # an empty control batch: the cleaner removed the whole transaction
            return self.append_end_txn_marker(
                batch.producer_id, batch.producer_epoch, batch.base_offset,
                is_abort=control.type_id == ControlType.ABORT,
                coordinator_epoch=-1 if control.coordinator_epoch is None else control.coordinator_epoch,
                timestamp=batch.max_timestamp)
        self.append_data_batch(batch.producer_id, batch.producer_epoch, batch.base_offset, batch.last_offset,
                               last_seq=batch.last_sequence, last_timestamp=batch.max_timestamp,
                               is_transactional=batch.is_transactional)
        return None

    def _last_stable_offset(self, producer_id: int, marker_offset: int) -> int:
        """ProducerStateManager.lastStableOffset (findNextIncompleteTxn walks ongoing txns by first offset)."""
        others = [first for first, pid in self.ongoing_txns.items() if pid != producer_id]
        return min(others) if others else marker_offset + 1

    @property
    def first_undecided_offset(self) -> int | None:
        return min(self.ongoing_txns) if self.ongoing_txns else None

    def ongoing(self) -> Iterator[tuple[int, int]]:
        """(producer id, first offset) of every ongoing transaction, by first offset."""
        for first in sorted(self.ongoing_txns):
            yield self.ongoing_txns[first], first

    def snapshot_entries(self) -> list[ProducerSnapshotEntry]:
        """The ``.snapshot`` entries, sorted by producer id (Kafka's order is HashMap order)."""
        return [p.snapshot_entry() for _, p in sorted(self.producers.items())]


__all__ = ["CompletedTxn", "ProducerStateEntry", "ProducerStateManager"]
