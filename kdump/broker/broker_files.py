"""The files a broker keeps beside the segments (Kafka's ProducerStateManager snapshots, TransactionIndex,
LeaderEpochFileCache and the checkpoint files, updated as LogSegment.append / UnifiedLog do).

``BrokerStateObserver`` plugs into ``PartitionLog`` and follows what a broker derives from the
batches it appends: producer state (kdump.broker.producer_state, written as ``<offset>.snapshot`` at
every roll and at a clean shutdown), aborted transactions (``.txnindex`` entries in the segment
holding the ABORT marker) and leader epochs (``leader-epoch-checkpoint``). ``write_partition_files``
and ``write_log_dir_files`` write the text files into a directory being staged (kdump.log.atomic).
Byte and text layouts come from kdump.format.{snapshot,txnindex,checkpoint}."""

from __future__ import annotations

import datetime
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from kdump.broker.batch_applier import BatchApplier, control_record
from kdump.broker.leader_epoch_cache import LeaderEpochFileCache
from kdump.broker.producer_state import ProducerStateManager
from kdump.format.batch import Batch
from kdump.format.checkpoint import (
    EpochEntry,
    OffsetCheckpointEntry,
    encode_leader_epoch_checkpoint,
    encode_offset_checkpoint,
    encode_partition_metadata,
    encode_properties,
    uuid_to_string,
)
from kdump.format.records import decode_records
from kdump.format.snapshot import encode_producer_snapshot
from kdump.format.txnindex import encode_aborted_txn
from kdump.log.atomic import write_new_file
from kdump.log.files import segment_file_name
from kdump.log.writer import LogObserver


@dataclass
class BrokerStateObserver(LogObserver):
    """Producer state, transactions and leader epochs of one partition, as its leader tracks them."""

    snapshots: bool = True
    producers: ProducerStateManager = field(default_factory=ProducerStateManager)
    epoch_cache: LeaderEpochFileCache = field(default_factory=LeaderEpochFileCache)
    # segment base offset -> encoded aborted-transaction entries whose marker is in that segment
    aborted: dict[int, list[bytes]] = field(default_factory=dict)
    snapshot_offsets: list[int] = field(default_factory=list)
    applier: BatchApplier = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.applier = BatchApplier(self.epoch_cache, self.producers)

    @property
    def epochs(self) -> list[EpochEntry]:
        """What ``leader-epoch-checkpoint`` holds."""
        return self.epoch_cache.entries

    def on_batch(self, batch: Batch, data: bytes | memoryview, segment_base: int) -> None:
        applier = self.applier
        control = control_record(decode_records(data, batch)) if applier.needs_control(batch) else None
        completed = applier.apply(batch, control)
        if completed is not None and completed.is_aborted:
            # UnifiedLog.append -> LogSegment.updateTxnIndex: the segment holding the marker.
            entry = completed.aborted_txn()
            self.aborted.setdefault(segment_base, []).append(
                encode_aborted_txn(entry.producer_id, entry.first_offset, entry.last_offset, entry.last_stable_offset))

    def on_segment_finished(self, directory: str, base_offset: int) -> None:
        entries = self.aborted.get(base_offset)
        if entries:
            # Created lazily: only segments with an aborted transaction have a .txnindex.
            write_new_file(os.path.join(directory, segment_file_name(base_offset, ".txnindex")), b"".join(entries))

    def on_roll(self, directory: str, new_base_offset: int) -> None:
        if self.snapshots:
            self.write_snapshot(directory, new_base_offset)

    def write_snapshot(self, directory: str, offset: int) -> None:
        """``<offset>.snapshot`` with every producer (sorted by id: Kafka's order is HashMap order)."""
        write_new_file(os.path.join(directory, segment_file_name(offset, ".snapshot")),
                       encode_producer_snapshot(self.producers.snapshot_entries()))
        self.snapshot_offsets.append(offset)


def write_partition_files(directory: str, topic_id: bytes, epochs: Sequence[EpochEntry]) -> None:
    """``partition.metadata`` and ``leader-epoch-checkpoint`` of one partition directory."""
    write_new_file(os.path.join(directory, "partition.metadata"), encode_partition_metadata(topic_id))
    write_new_file(os.path.join(directory, "leader-epoch-checkpoint"), encode_leader_epoch_checkpoint(epochs))


@dataclass(frozen=True, slots=True)
class PartitionOffsets:
    topic: str
    partition: int
    log_start_offset: int
    first_segment_base: int
    recovery_point: int
    high_watermark: int | None


def write_offset_checkpoints(root: str, partitions: Sequence[PartitionOffsets]) -> None:
    """The three offset checkpoints at the root of a log dir (a partition with no high watermark
    has no ``replication-offset-checkpoint`` entry)."""
    ordered = sorted(partitions, key=lambda p: (p.topic, p.partition))

    def checkpoint(name: str, entries: list[OffsetCheckpointEntry]) -> None:
        write_new_file(os.path.join(root, name), encode_offset_checkpoint(entries))

    checkpoint("recovery-point-offset-checkpoint",
               [OffsetCheckpointEntry(p.topic, p.partition, p.recovery_point) for p in ordered])
    checkpoint("replication-offset-checkpoint",
               [OffsetCheckpointEntry(p.topic, p.partition, p.high_watermark) for p in ordered
                if p.high_watermark is not None])
    # The broker lists only logs whose start offset is past their first segment's base offset.
    checkpoint("log-start-offset-checkpoint",
               [OffsetCheckpointEntry(p.topic, p.partition, p.log_start_offset) for p in ordered
                if p.log_start_offset > p.first_segment_base])


def write_log_dir_files(root: str, partitions: Sequence[PartitionOffsets], *, cluster_id: bytes, node_id: int,
                        directory_id: bytes, written_at_ms: int) -> None:
    """The checkpoints at the root of a log dir, and a KRaft-style ``meta.properties``.

    ``written_at_ms`` dates the properties file's comment (Java's Properties.store writes the
    time there; kdump uses record time so output stays reproducible).
    """
    write_offset_checkpoints(root, partitions)
    when = datetime.datetime.fromtimestamp(max(written_at_ms, 0) / 1000, datetime.UTC)
    header = f"#\n#{when.strftime('%a %b %d %H:%M:%S UTC %Y')}\n".encode("ascii")
    props = {"node.id": str(node_id), "directory.id": uuid_to_string(directory_id), "version": "1",
             "cluster.id": uuid_to_string(cluster_id)}
    write_new_file(os.path.join(root, "meta.properties"), header + encode_properties(props))
