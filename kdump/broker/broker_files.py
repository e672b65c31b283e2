"""The files a broker keeps beside the segments (Kafka's ProducerStateManager, TransactionIndex,
LeaderEpochFileCache and the checkpoint files, updated as LogSegment.append / UnifiedLog do).

``BrokerStateObserver`` plugs into ``PartitionLog`` and follows what a broker derives from the
batches it appends: producer state (written as ``<offset>.snapshot`` at every roll and at a clean
shutdown), ongoing and aborted transactions (``.txnindex`` entries in the segment holding the
ABORT marker) and leader epochs (``leader-epoch-checkpoint``). ``write_partition_files`` and
``write_log_dir_files`` write the text files into a directory being staged (kdump.log.atomic).
Byte and text layouts come from kdump.format.{snapshot,txnindex,checkpoint}.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

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
from kdump.format.control import ControlType, parse_control_record
from kdump.format.records import decode_records
from kdump.format.snapshot import ProducerSnapshotEntry, encode_producer_snapshot
from kdump.format.txnindex import encode_aborted_txn
from kdump.log.atomic import write_new_file
from kdump.log.files import segment_file_name
from kdump.log.writer import LogObserver


@dataclass
class _Producer:
    epoch: int
    last_sequence: int = -1
    last_offset: int = -1
    offset_delta: int = 0
    timestamp: int = -1
    coordinator_epoch: int = -1
    txn_first_offset: int = -1


@dataclass
class BrokerStateObserver(LogObserver):
    """Producer state, transactions and leader epochs of one partition, as its leader tracks them."""

    snapshots: bool = True
    producers: dict[int, _Producer] = field(default_factory=dict)
    epochs: list[EpochEntry] = field(default_factory=list)
    # segment base offset -> encoded aborted-transaction entries whose marker is in that segment
    aborted: dict[int, list[bytes]] = field(default_factory=dict)
    snapshot_offsets: list[int] = field(default_factory=list)

    def on_batch(self, batch: Batch, data: bytes | memoryview, segment_base: int) -> None:
        if batch.is_legacy:
            return  # no producer ids or leader epochs before magic 2
        if batch.partition_leader_epoch >= 0 and (not self.epochs
                                                  or batch.partition_leader_epoch > self.epochs[-1].epoch):
            self.epochs.append(EpochEntry(batch.partition_leader_epoch, batch.base_offset))
        if batch.producer_id < 0:
            return
        state = self.producers.get(batch.producer_id)
        if state is None:
            state = self.producers[batch.producer_id] = _Producer(batch.producer_epoch)
        if state.epoch != batch.producer_epoch:
            # ProducerStateEntry.maybeUpdateProducerEpoch: a new epoch forgets the batch metadata (with
            # transaction version 2 every marker bumps the epoch, so a marker leaves none behind).
            state.last_sequence, state.last_offset, state.offset_delta = -1, -1, 0
        state.epoch = batch.producer_epoch
        if batch.is_control:
            for record in decode_records(data, batch):
                info = parse_control_record(record.key, record.value)
                if not info.is_end_txn_marker:
                    continue
                if info.type_id == ControlType.ABORT and state.txn_first_offset >= 0:
                    lso = self._last_stable_offset(batch.producer_id, batch.last_offset)
                    self.aborted.setdefault(segment_base, []).append(
                        encode_aborted_txn(batch.producer_id, state.txn_first_offset, batch.last_offset, lso))
                state.coordinator_epoch = info.coordinator_epoch if info.coordinator_epoch is not None else -1
                state.txn_first_offset = -1
                state.timestamp = batch.max_timestamp
            return
        state.last_sequence = batch.last_sequence
        state.last_offset = batch.last_offset
        state.offset_delta = batch.last_offset_delta
        state.timestamp = batch.max_timestamp
        if batch.is_transactional and state.txn_first_offset < 0:
            state.txn_first_offset = batch.base_offset

    def _last_stable_offset(self, completing_pid: int, marker_offset: int) -> int:
        # ProducerStateManager.lastStableOffset: the first offset of the earliest other ongoing
        # transaction, or just past the completed one.
        others = [p.txn_first_offset for pid, p in self.producers.items()
                  if pid != completing_pid and p.txn_first_offset >= 0]
        return min(others) if others else marker_offset + 1

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
        entries = [ProducerSnapshotEntry(pid, p.epoch, p.last_sequence, p.last_offset, p.offset_delta,
                                         p.timestamp, p.coordinator_epoch, p.txn_first_offset)
                   for pid, p in sorted(self.producers.items())]
        write_new_file(os.path.join(directory, segment_file_name(offset, ".snapshot")),
                     encode_producer_snapshot(entries))
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
