"""Kafka's read_committed view of a partition's batches, as the Java consumer computes it.

The broker answers a fetch with the aborted transactions whose range reaches the fetch offset
(``.txnindex`` entries with lastOffset >= the fetch offset: UnifiedLog.collectAbortedTransactions),
and the consumer walks the batches with them (clients/src/main/java/org/apache/kafka/clients/
consumer/internals/CompletedFetch.java, Kafka 3.7.0 and later; Fetcher.java before):

* before a batch with a producer id, every aborted transaction whose first offset is at or below
  the batch's last offset makes its producer "aborted" (consumeAbortedTransactionsUpTo);
* an ABORT marker of that producer ends it (the producer's later transactions are read again);
* a transactional data batch of an aborted producer is skipped; control batches are never returned.

The rules need no I/O: the caller gives the aborted ranges of the whole partition (read on the
driver from every segment's ``.txnindex``) and the batches in log order from where it starts.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import NamedTuple

from kdump.format.batch import Batch

READ_UNCOMMITTED = "read_uncommitted"
READ_COMMITTED = "read_committed"
ISOLATION_LEVELS = (READ_UNCOMMITTED, READ_COMMITTED)


class AbortedRange(NamedTuple):
    """One ``.txnindex`` entry: an aborted transaction from its first offset to its ABORT marker."""

    producer_id: int
    first_offset: int
    last_offset: int


class AbortedTransactions:
    """Which batches a read_committed consumer skips, fed the batches of one read in log order."""

    def __init__(self, aborted: Iterable[AbortedRange], *, known: bool = True) -> None:
        self.known = known              # False: the caller was not given the partition's aborts
        self._given = list(aborted)
        self._pending: list[tuple[int, int]] | None = None       # (first offset, producer id), a heap
        self._producers: set[int] = set()

    def _start(self, fetch_offset: int) -> None:
        # The broker sends only the transactions that end at or after where the fetch starts.
        self._pending = [(a.first_offset, a.producer_id) for a in self._given if a.last_offset >= fetch_offset]
        heapq.heapify(self._pending)

    def is_aborted(self, batch: Batch, abort_marker: Callable[[], bool]) -> bool:
        """Whether ``batch`` belongs to an aborted transaction (an ABORT marker counts as its last entry).

        ``abort_marker()`` says whether a control batch's record is an ABORT marker (asked only when it
        matters). Every batch the read meets must be passed, in order, so that markers end what they end.
        """
        if self._pending is None:
            self._start(batch.base_offset)
        pending = self._pending
        assert pending is not None
        if batch.producer_id < 0:
            return False
        while pending and pending[0][0] <= batch.last_offset:
            self._producers.add(heapq.heappop(pending)[1])
        if batch.is_control:
            if batch.producer_id in self._producers and abort_marker():
                self._producers.discard(batch.producer_id)
                return True
            return False
        return batch.is_transactional and batch.producer_id in self._producers
