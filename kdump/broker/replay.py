"""What replaying a partition's batches establishes, in one place for ``verify``, ``txn`` and ``summary``:
the transactions (each producer's open one, how it ended), record counts and the log end offset.

``TxnReplay`` follows the broker's ProducerStateManager (storage/.../ProducerStateManager.java,
ProducerAppendInfo.java at Kafka 3.9/4.x): a transactional data batch opens a transaction for its
producer if none is open; an ABORT or COMMIT marker closes it. A marker with no open transaction
completes an empty one whose first offset is the marker's own (Kafka's CompletedTxn), which is what
the broker writes to ``.txnindex``. The last stable offset recorded with an abort is the first offset
of the earliest transaction still open for another producer, else the marker's offset + 1
(ProducerStateManager.lastStableOffset).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from kdump.format.batch import Batch
from kdump.log.batches import LogBatches

COMMIT = "COMMIT"
ABORT = "ABORT"
OPEN = "OPEN"


@dataclass(slots=True)
class Transaction:
    producer_id: int
    producer_epoch: int
    first_offset: int                 # first data offset, or the marker's offset for an empty one
    last_data_offset: int | None = None
    marker_offset: int | None = None
    outcome: str = OPEN
    coordinator_epoch: int | None = None
    batches: int = 0
    records: int = 0
    size_bytes: int = 0
    first_timestamp: int | None = None
    last_timestamp: int | None = None   # max timestamp of its data batches
    marker_timestamp: int | None = None
    last_stable_offset: int | None = None  # for aborts: what the broker writes to .txnindex

    @property
    def last_offset(self) -> int:
        """The marker's offset once complete (Kafka's CompletedTxn.lastOffset), else the last data offset."""
        if self.marker_offset is not None:
            return self.marker_offset
        return self.last_data_offset if self.last_data_offset is not None else self.first_offset

    @property
    def duration_ms(self) -> int | None:
        end = self.marker_timestamp if self.marker_timestamp is not None else self.last_timestamp
        if self.first_timestamp is None or end is None or self.first_timestamp < 0 or end < 0:
            return None
        return end - self.first_timestamp


class TxnReplay:
    """Every transaction of a partition in order of first offset; ``ongoing`` the open ones by producer."""

    def __init__(self) -> None:
        self.ongoing: dict[int, Transaction] = {}
        self.transactions: list[Transaction] = []

    def begin(self, producer_id: int, producer_epoch: int, offset: int) -> Transaction:
        """A transactional data batch at ``offset``: the producer's open transaction, opened here if none."""
        txn = self.ongoing.get(producer_id)
        if txn is None:
            txn = Transaction(producer_id, producer_epoch, offset)
            self.ongoing[producer_id] = txn
            self.transactions.append(txn)
        return txn

    def end(self, producer_id: int, producer_epoch: int, marker_offset: int, outcome: str) -> Transaction:
        """An ABORT or COMMIT marker: completes the producer's open transaction (an empty one if none)."""
        txn = self.ongoing.pop(producer_id, None)
        if txn is None:
            txn = Transaction(producer_id, producer_epoch, marker_offset)
            self.transactions.append(txn)
        txn.marker_offset = marker_offset
        txn.outcome = outcome
        if outcome == ABORT:
            others = [t.first_offset for t in self.ongoing.values()]
            txn.last_stable_offset = min(others) if others else marker_offset + 1
        return txn

    @property
    def aborted(self) -> list[Transaction]:
        return [t for t in self.transactions if t.outcome == ABORT]


class SegmentOffsets(Protocol):
    @property
    def base_offset(self) -> int: ...

    @property
    def last_offset(self) -> int | None: ...


def record_count(batches: LogBatches, batch: Batch) -> int:
    """The records a batch holds: its header's count (v2), else its inner messages (a compressed v0/v1
    wrapper, decompressed to count them), else 1 (a v0/v1 message)."""
    if batch.records_count is not None:
        return batch.records_count
    return batches.count_records(batch) if batch.codec_id else 1


def log_end_offset(segments: Iterable[SegmentOffsets]) -> int | None:
    """One past the highest offset any segment holds; the last segment's base offset when none holds a
    batch; None without segments."""
    last_base: int | None = None
    highest: int | None = None
    for seg in segments:
        last_base = seg.base_offset
        if seg.last_offset is not None and (highest is None or seg.last_offset > highest):
            highest = seg.last_offset
    return highest + 1 if highest is not None else last_base


__all__ = ["ABORT", "COMMIT", "OPEN", "Transaction", "TxnReplay", "log_end_offset", "record_count"]
