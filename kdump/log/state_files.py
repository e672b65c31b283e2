"""Reading the small per-segment state files: producer snapshots and transaction indexes.

A ``.snapshot`` is read whole, as Kafka reads it (``Files.readAllBytes``), but only up to a size no
broker writes, so a stray huge file is refused instead of filling memory. A ``.txnindex`` is read a
window of whole entries at a time.
"""

from __future__ import annotations

from collections.abc import Iterator

from kdump.format.snapshot import ProducerSnapshot, parse_producer_snapshot
from kdump.format.txnindex import ENTRY_SIZE, AbortedTxn, iter_aborted_txns
from kdump.log.segment import ReadOnlyFile, read_small_file

MAX_SNAPSHOT_BYTES = 256 << 20
"""A producer-state entry is under 40 bytes: this is millions of producers, more than any broker keeps."""

_TXN_ENTRIES_PER_READ = 32768


def read_producer_snapshot(path: str) -> tuple[ProducerSnapshot, int]:
    """The parsed snapshot and its size in bytes; raises CorruptSnapshotError with Kafka's message."""
    data = read_small_file(path, MAX_SNAPSHOT_BYTES)
    return parse_producer_snapshot(data), len(data)


def read_aborted_txns(txn_index: ReadOnlyFile, name: str) -> Iterator[AbortedTxn]:
    """Every complete entry of a ``.txnindex``; ``name`` goes into Kafka's version error."""
    step = ENTRY_SIZE * _TXN_ENTRIES_PER_READ
    whole = txn_index.size - txn_index.size % ENTRY_SIZE
    for position in range(0, whole, step):
        yield from iter_aborted_txns(txn_index.read(position, min(step, whole - position)), name)
