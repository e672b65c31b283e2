"""``kdump recover --out``: write the copy of a log dir that a broker leaves after loading it.

Given the plans of ``kdump.broker.loader``, each partition is written as the broker leaves it after
its load and a clean stop: the kept segments (recovered ones truncated at their first invalid
batch), their offset and time indexes (rebuilt for recovered segments with the rule
LogSegment.recover shares with LogSegment.append, copied and trimmed to their entries otherwise),
transaction indexes (rebuilt from the replayed producer state for recovered segments), the kept
producer snapshots plus one at the new log end offset, the truncated leader-epoch checkpoint, and
the log dir's checkpoints with the clean-shutdown marker.

The source is only read; the copy is built in a staging area and renamed into place when complete
(kdump.log.atomic), so an interrupted run leaves nothing.
"""

from __future__ import annotations

import os

from kdump.broker.broker_files import BrokerStateObserver, PartitionOffsets, write_offset_checkpoints
from kdump.broker.log_manager import CLEAN_SHUTDOWN_FILE, LogDirState
from kdump.broker.partition_plan import PartitionPlan
from kdump.broker.unified_log import load_from_snapshot
from kdump.format.batch import Batch
from kdump.format.checkpoint import encode_leader_epoch_checkpoint
from kdump.log.atomic import staged_directory, write_new_file
from kdump.log.batches import LogBatches
from kdump.log.files import segment_file_name
from kdump.log.index_builder import BatchInfo, SegmentIndexBuilder
from kdump.log.indexes import open_offset_index, open_time_index
from kdump.log.segment import ReadOnlyFile

RECOVER_MARKER = (".kdump-recover", b"a recovered copy written by kdump recover --out\n")
_COPY_BYTES = 1 << 20


def write_recovered_copy(state: LogDirState, plans: list[PartitionPlan], out_dir: str, *, force: bool,
                         index_interval_bytes: int, max_index_bytes: int, split_indexed_per_batch: bool = True) -> None:
    """Write every plan's partition (refused ones are skipped by the caller) under ``out_dir``."""
    with staged_directory(out_dir, force=force, marker=RECOVER_MARKER) as stage:
        meta = os.path.join(state.path, "meta.properties")
        if os.path.isfile(meta):
            _copy(meta, os.path.join(stage, "meta.properties"))
        plans = [p for p in plans if p.dir_state != "delete"]   # the broker deletes those dirs
        for plan in plans:
            _write_partition(plan, os.path.join(stage, os.path.basename(plan.path)), index_interval_bytes,
                             max_index_bytes, split_indexed_per_batch)
        # After a clean stop everything is flushed: the recovery point is the log end offset.
        write_offset_checkpoints(stage, [
            PartitionOffsets(p.topic, p.partition, p.log_start_offset,
                             p.kept_segments[0].base_offset if p.kept_segments else p.log_start_offset,
                             p.log_end_offset, p.high_watermark) for p in plans])
        write_new_file(os.path.join(stage, CLEAN_SHUTDOWN_FILE), b"")


def _copy(source: str, target: str, length: int | None = None, start: int = 0) -> None:
    """``length`` bytes (all by default) of ``source`` from ``start`` into a new file ``target``."""
    with ReadOnlyFile(source) as f, open(target, "xb") as out:
        end = f.size if length is None else min(start + length, f.size)
        for position in range(start, end, _COPY_BYTES):
            out.write(f.read(position, min(_COPY_BYTES, end - position)))


def _write_partition(plan: PartitionPlan, directory: str, interval: int, max_index_bytes: int,
                     split_indexed_per_batch: bool) -> None:
    os.mkdir(directory)
    recovered = {r.base_offset: r for r in plan.recovered}
    observer = BrokerStateObserver(snapshots=False)
    # LogLoader.recoverSegment rebuilds producer state from the latest snapshot before the segment.
    replay_from = 0
    if recovered:
        replay_from, entries = load_from_snapshot(plan.path, plan.log_start_checkpoint, min(recovered))
        observer.producers.load_snapshot(entries)
    for seg in plan.kept_segments:
        base, source = seg.base_offset, seg.log
        assert source is not None
        recovery = recovered.get(base)
        log_name = segment_file_name(base, ".log")
        split = seg.end is not None      # a piece of a split segment: its bytes of the old file
        length = recovery.valid_bytes if recovery else (seg.end - seg.start if seg.end is not None else None)
        _copy(source, os.path.join(directory, log_name), length, seg.start)
        # LogSegment.recover and the split's appends (LogSegment.append, per batch since Kafka 4.1) index alike.
        builder = SegmentIndexBuilder(base, interval, max_index_bytes) if recovery or split else None
        chunks = _AppendChunks(builder) if builder is not None and not recovery and not split_indexed_per_batch \
            else None
        with ReadOnlyFile(os.path.join(directory, log_name)) as log:
            batches = LogBatches(log, check_crc=False)
            for batch in batches:
                if batch.last_offset >= replay_from:
                    observer.on_batch(batch._replace(position=0), batches.view(batch), base)
                if chunks is not None:
                    chunks.add(batch)
                elif builder is not None:
                    builder.add_scanned(batch)
        if chunks is not None:
            chunks.flush()
        source_dir = os.path.dirname(source)
        if builder is not None:
            builder.close()
            write_new_file(os.path.join(directory, segment_file_name(base, ".index")), builder.offset_index_bytes())
            write_new_file(os.path.join(directory, segment_file_name(base, ".timeindex")), builder.time_index_bytes())
            aborted = observer.aborted.get(base) if recovery else None   # appends write no .txnindex
            if aborted:
                write_new_file(os.path.join(directory, segment_file_name(base, ".txnindex")), b"".join(aborted))
        else:
            _copy_trimmed_indexes(source_dir, directory, base)
    if not plan.kept_segments:
        # LogLoader.recoverLog: no segment left, a new empty one at the log start offset.
        for suffix in (".log", ".index", ".timeindex"):
            write_new_file(os.path.join(directory, segment_file_name(plan.log_end_offset, suffix)), b"")
    for name in sorted(os.listdir(plan.path)):
        path = os.path.join(plan.path, name)
        if name.endswith(".snapshot") and path not in plan.snapshots_deleted and os.path.isfile(path):
            _copy(path, os.path.join(directory, name))
    if not os.path.exists(os.path.join(directory, segment_file_name(plan.log_end_offset, ".snapshot"))):
        observer.write_snapshot(directory, plan.log_end_offset)
    metadata = os.path.join(plan.path, "partition.metadata")
    if os.path.isfile(metadata):
        _copy(metadata, os.path.join(directory, "partition.metadata"))
    write_new_file(os.path.join(directory, "leader-epoch-checkpoint"), encode_leader_epoch_checkpoint(plan.epochs))


class _AppendChunks:
    """The appends of LogSegment.appendFromFile before Kafka 4.1: batches in chunks of under 1 MiB
    (at least one batch), the index interval tested once per chunk."""

    CHUNK_BYTES = 1024 * 1024

    def __init__(self, builder: SegmentIndexBuilder) -> None:
        self.builder = builder
        self.pending: list[BatchInfo] = []
        self.bytes = 0

    def add(self, batch: Batch) -> None:
        if self.pending and self.bytes + batch.size >= self.CHUNK_BYTES:
            self.flush()
        self.pending.append((batch.last_offset, batch.position, batch.size, batch.max_timestamp))
        self.bytes += batch.size

    def flush(self) -> None:
        self.builder.add_append(self.pending)
        self.pending, self.bytes = [], 0


def _copy_trimmed_indexes(source_dir: str, directory: str, base: int) -> None:
    """A kept segment's own indexes, without preallocated padding (a clean close trims them)."""
    for suffix, opener in ((".index", open_offset_index), (".timeindex", open_time_index)):
        source = _own_or_swapped(os.path.join(source_dir, segment_file_name(base, suffix)))
        if source is not None:
            with opener(source, base) as index:
                _copy(source, os.path.join(directory, segment_file_name(base, suffix)),
                      index.entries * index.entry_size)
    txn = _own_or_swapped(os.path.join(source_dir, segment_file_name(base, ".txnindex")))
    if txn is not None:
        _copy(txn, os.path.join(directory, segment_file_name(base, ".txnindex")))


def _own_or_swapped(path: str) -> str | None:
    """The file, or the ``.swap`` the broker renames to it while loading (swapped segments)."""
    for candidate in (path + ".swap", path):
        if os.path.isfile(candidate):
            return candidate
    return None
