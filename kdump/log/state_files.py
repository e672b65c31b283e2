"""Reading the small state files: producer snapshots, transaction indexes, a log dir's ``meta.properties``,
and any small file that may be missing (checkpoints), at a local path or a URI (kdump.log.locations).

A ``.snapshot`` is read whole, as Kafka reads it (``Files.readAllBytes``), but only up to a size no
broker writes, so a stray huge file is refused instead of filling memory. A ``.txnindex`` is read a
window of whole entries at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kdump.errors import KdumpError
from kdump.format.checkpoint import parse_properties
from kdump.format.snapshot import ProducerSnapshot, parse_producer_snapshot
from kdump.format.txnindex import ENTRY_SIZE, AbortedTxn, iter_aborted_txns
from kdump.log.locations import join, lexists
from kdump.log.segment import ReadOnlyFile, read_small_file

MAX_SNAPSHOT_BYTES = 256 << 20
"""A producer-state entry is under 40 bytes: this is millions of producers, more than any broker keeps."""

_TXN_ENTRIES_PER_READ = 32768
META_PROPERTIES = "meta.properties"


def read_if_exists(path: str) -> bytes | None:
    """A small file (a checkpoint, a snapshot, an index, a ``.txnindex``) whole, local or a URI; None when there
    is no such file. Refused past MAX_SNAPSHOT_BYTES, the most any such file of a broker's holds."""
    if not lexists(path):
        return None
    return read_small_file(path, MAX_SNAPSHOT_BYTES)


@dataclass(frozen=True, slots=True)
class LogDirIdentity:
    """What a log dir's ``meta.properties`` says of it: the broker (``node.id`` in KRaft, else ``broker.id``),
    the dir's ``directory.id`` (JBOD, KIP-858), or why it could not be read."""

    broker: int | None = None
    directory_id: str | None = None
    problem: str | None = None


def read_log_dir_identity(log_dir: str) -> LogDirIdentity:
    """The one reader of ``meta.properties`` (MetaProperties, Kafka 4.3.0 metadata/.../properties): ``replicas``
    and the data source's discovery name brokers by it alike."""
    path = join(log_dir, META_PROPERTIES)
    try:
        data = read_if_exists(path)
    except KdumpError as err:
        return LogDirIdentity(problem=f"{path}: {err.reason}")
    if data is None:
        return LogDirIdentity()
    props = parse_properties(data, path)
    raw = props.get("node.id", props.get("broker.id"))
    broker = int(raw) if raw is not None and raw.strip().lstrip("-").isdigit() else None
    return LogDirIdentity(broker, props.get("directory.id"))


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
