"""What a broker does to one partition directory when it loads it: Kafka's LogLoader, as a plan.

Follows storage/src/main/java/org/apache/kafka/storage/internals/log/LogLoader.java and
LogSegment.recover of Kafka 4.3.0 (the same steps as core/src/main/scala/kafka/log/LogLoader.scala
of 3.3.2, 3.6.0 and 3.9.0), read-only: nothing here changes a file; ``plan_partition`` says what the
broker would change and what it would keep.

0. The log dir (kdump.broker.log_manager, LogManager.loadLogs): an unparseable recovery-point or
   log-start checkpoint takes it offline (a refusal). Every partition dir is loaded, ``-future`` and
   ``-stray`` ones too; ``-delete`` ones without recovery, then deleted. The plan's data is
   kdump.broker.partition_plan.

1. Temporary files: ``*.deleted`` (not KRaft ``.checkpoint.deleted``) and ``*.cleaned`` are deleted;
   a ``*.swap`` whose base offset is at or above the smallest ``.cleaned`` one belongs to an
   unfinished split and is deleted; the other swaps replace the segments in their offset range.
2. Loading: an index file with no ``.log`` is deleted; a segment with no ``.index``, or whose
   ``.txnindex`` fails its sanity check, is recovered whatever the shutdown was (an
   InvalidOffsetException there stops the broker).
3. Recovery (no clean-shutdown marker): every segment from the one holding the recovery point is
   recovered; the first one that loses bytes is truncated there and every later one is deleted.
   One whose rebuilt index would go backwards (InvalidOffsetException) is truncated to its base offset.
   The segments not recovered are walked too: damage or missing index entries there stay.
   A recovered segment whose offsets overflow its index is split (kdump.broker.overflow_split) and
   the loading starts again on the pieces.
4. The log end offset, the recovery point (lifted to the local log start), the log start offset
   (kdump.broker.unified_log: a tiered partition keeps its checkpoint's) and the high watermark that
   follow (every segment and snapshot goes when the log start offset is past the log end), the
   leader-epoch entries the broker truncates, the producer snapshots, and the transactions left
   open (kdump.broker.unified_log.replay_transactions).

Recovering a segment (LogSegment.recover) keeps the batches before the first one that fails
``ensureValid`` (framing, size, CRC) and rebuilds the segment's indexes.
"""

from __future__ import annotations

import os
from dataclasses import replace

from kdump.broker.leader_epoch_cache import LeaderEpochFileCache
from kdump.broker.log_dir_checkpoints import read_leader_epochs
from kdump.broker.log_manager import LogDirState
from kdump.broker.overflow_split import SplitFailure, split_pieces
from kdump.broker.partition_plan import FileChange, PartitionPlan
from kdump.broker.recovery import (
    SegmentOverflow,
    SegmentRecovery,
    UncheckedSegment,
    deleted_segment,
    end_offset_on_disk,
    inspect_unrecovered,
    next_offset,
    recover_segment,
)
from kdump.broker.unified_log import (
    high_watermark,
    load_from_snapshot,
    local_log_start_offset,
    log_start_offset,
    replay_transactions,
)
from kdump.errors import CorruptRecordError, KdumpError
from kdump.format.checkpoint import LEADER_EPOCH_CHECKPOINT_NAME, EpochEntry
from kdump.log.files import segment_base_offset, segment_file_name
from kdump.log.index_builder import DEFAULT_INDEX_INTERVAL_BYTES
from kdump.log.indexes import open_offset_index
from kdump.log.locations import absolute, base_name, is_uri, join, list_dir, open_any
from kdump.log.logdir import SegmentFiles, parse_partition_dir_name
from kdump.log.state_files import read_aborted_txns

_INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex")


def _temporary_files(plan: PartitionPlan, files: dict[str, str]) -> None:
    """LogLoader.removeTempFilesAndCollectSwapFiles and the swap passes, on the file list."""
    cleaned = [n for n in files if n.endswith(".cleaned")]
    min_cleaned = min((o for o in map(segment_base_offset, cleaned) if o is not None), default=None)
    swaps = []
    for name in sorted(files):
        if name.endswith(".deleted") and not name.endswith(".checkpoint.deleted"):
            plan.file_changes.append(FileChange(files.pop(name), "delete", "a stray file marked for deletion"))
        elif name.endswith(".swap"):
            offset = segment_base_offset(name)
            if min_cleaned is not None and offset is not None and offset >= min_cleaned:
                plan.file_changes.append(FileChange(files.pop(name), "delete", "a swap file of an unfinished "
                                                    "segment split (at or above the smallest .cleaned offset)"))
            else:
                swaps.append(name)
    for name in cleaned:
        plan.file_changes.append(FileChange(files.pop(name), "delete", "a stray .cleaned file"))
    ranges = [(base, next_offset(SegmentFiles(base, files[name]))) for name in swaps
              if name.endswith(".log.swap") and (base := segment_base_offset(name)) is not None]
    if ranges:
        low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
        for name in sorted(files):
            offset = segment_base_offset(name)
            if not name.endswith(".swap") and offset is not None and low <= offset < high:
                plan.file_changes.append(FileChange(files.pop(name), "delete", f"replaced by the swapped-in "
                                                    f"segments covering offsets {low}..{high - 1}"))
    for name in swaps:
        path = files.pop(name)
        final = name[:-len(".swap")]
        plan.file_changes.append(FileChange(path, "rename", "finish an interrupted swap",
                                            to=join(plan.path, final)))
        files[final] = path  # read from the swap file: after the rename its content is the segment


def _txn_index_problem(path: str, base_offset: int) -> str | None:
    """TransactionIndex.sanityCheck: every entry's last offset at or above the segment's base offset."""
    try:
        with open_any(path) as f:
            for entry in read_aborted_txns(f, path):
                if entry.last_offset < base_offset:
                    return (f"its entry for producer {entry.producer_id} ends at offset {entry.last_offset}, below "
                            f"the segment's base offset {base_offset}")
    except KdumpError as err:
        return err.reason
    return None


def _read_epochs(plan: PartitionPlan) -> list[EpochEntry]:
    try:
        return read_leader_epochs(plan.path) or []
    except KdumpError as err:
        plan.refuse(join(plan.path, LEADER_EPOCH_CHECKPOINT_NAME),
                    f"{err.reason} (the broker fails to load the partition's leader-epoch cache)")
        return []


def plan_partition(path: str, state: LogDirState,
                   index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES, *, inspect: bool = True) -> PartitionPlan:
    """What loading ``path`` (a partition dir of the log dir ``state``, a local path or a URI) does, for a
    topic whose ``index.interval.bytes`` is ``index_interval_bytes`` (recovery's index appends depend on it).
    ``plan.loaded`` is the state the loader leaves. ``inspect`` also walks the segments the broker does not
    recover for damage it keeps (``plan.unchecked``, what ``kdump recover`` reports; the loaded state does
    not depend on it)."""
    parsed = parse_partition_dir_name(base_name(path))
    if parsed is None:
        raise KdumpError("not a partition directory (expected <topic>-<partition>)", path=path)
    topic, partition, dir_state = parsed
    # A -future or -stray dir is the same partition: the log dir's checkpoints key it by topic and partition.
    checkpoints = state.partition(topic, partition)
    plan = PartitionPlan(topic, partition, absolute(path), state.clean_shutdown,
                         checkpoints.recovery_point or 0, checkpoints.log_start_offset or 0,
                         checkpoints.high_watermark, dir_state=dir_state)
    if state.refusal is not None:
        plan.refuse(*state.refusal)
        return plan
    if dir_state == "delete":
        # LogLoader.load skips recoverLog for a -delete dir; LogManager.loadLog hands it to the deleter.
        plan.file_changes.append(FileChange(plan.path, "delete", "the dir of a deleted partition: loaded without "
                                            "recovery and deleted after file.delete.delay.ms"))
        return plan
    files: dict[str, str] = {}
    for name, is_directory in list_dir(plan.path):
        full = join(plan.path, name)
        if is_directory or (not is_uri(full) and not os.path.isfile(full)):
            continue
        if not is_uri(full) and not os.access(full, os.R_OK):
            plan.refuse(full, "not readable (the broker fails with \"Could not read file\" and takes the log dir "
                              "offline)")
            return plan
        files[name] = full
    _temporary_files(plan, files)
    original_epochs = _read_epochs(plan)
    epochs = LeaderEpochFileCache(original_epochs)   # the cache's constructor assigns each checkpoint entry

    segments: list[SegmentFiles] = []
    snapshots = sorted((o, p) for n, p in files.items()
                       if n.endswith(".snapshot") and (o := segment_base_offset(n)) is not None)
    for name in sorted(files):
        offset = segment_base_offset(name)
        if offset is None:
            continue
        if name.endswith(_INDEX_SUFFIXES) and segment_file_name(offset, ".log") not in files:
            plan.file_changes.append(FileChange(files[name], "delete", "an index file with no .log beside it"))
        elif name.endswith(".log"):
            segments.append(SegmentFiles(offset, files[name]))
    while True:
        try:
            kept, recoveries = _load_segments(plan, state, segments, files, epochs, index_interval_bytes)
            break
        except SegmentOverflow as overflow:
            if not _split(plan, segments, overflow):
                return plan
            epochs = LeaderEpochFileCache(original_epochs)
    if plan.refused_file is not None and plan.refused_file in {seg.log for seg in segments}:
        return plan
    if kept:
        last = kept[-1]
        try:
            plan.log_end_offset = recoveries[last.base_offset].next_offset if last.base_offset in recoveries else \
                next_offset(last)
        except CorruptRecordError as err:
            plan.refuse(err.path or last.log or plan.path, f"{err.reason} (position {err.position}): LogLoader.load "
                                                           f"throws CorruptRecordException and the broker cannot "
                                                           f"load the partition")
            return plan
    else:
        plan.log_end_offset = plan.log_start_checkpoint
    emptied = bool(kept) and plan.log_end_offset < plan.log_start_checkpoint
    if emptied:
        for seg in kept:
            plan.deleted_segments.append(deleted_segment(
                seg, f"the log end offset {plan.log_end_offset} is below the log start offset "
                     f"{plan.log_start_checkpoint}"))
        kept = []
        plan.log_end_offset = plan.log_start_checkpoint
        epochs = LeaderEpochFileCache()
        # ProducerStateManager.truncateFullyAndStartAt deletes every snapshot; the broker then writes
        # one at the new log end.
        snapshots = [(-1, p) for _, p in snapshots]
    first_base = kept[0].base_offset if kept else plan.log_start_checkpoint
    remote = state.partition(topic, partition, first_base).remote_log_enabled
    plan.log_start_offset = log_start_offset(plan.log_start_checkpoint, first_base, remote)
    local_start = plan.local_log_start_offset = local_log_start_offset(plan.log_start_offset, first_base)
    if state.clean_shutdown and not emptied:
        plan.new_recovery_point = plan.log_end_offset
    else:
        plan.new_recovery_point = min(plan.recovery_point, plan.log_end_offset)
    # UnifiedLog's constructor (updateLogStartOffset, updateLocalLogStartOffset) lifts it and the high
    # watermark to the local log start.
    plan.new_recovery_point = max(plan.new_recovery_point, local_start)
    plan.high_watermark = high_watermark(plan.high_watermark_checkpoint, local_start, plan.log_end_offset)
    # LogLoader.load: leaderEpochCache.truncateFromEnd(log end), then truncateFromStart(log start checkpoint).
    epochs.truncate_from_end(plan.log_end_offset)
    epochs.truncate_from_start(plan.log_start_checkpoint)
    plan.kept_segments = kept
    if inspect:
        plan.unchecked = _unchecked(plan, kept, recoveries, files, index_interval_bytes)
    plan.epochs = epochs.entries
    plan.epochs_removed = [e for e in original_epochs if e not in plan.epochs]
    plan.epochs_added = [e for e in plan.epochs if e not in original_epochs]
    plan.snapshots_deleted = [p for o, p in snapshots if o > plan.log_end_offset or o < 0]
    # UnifiedLog.rebuildProducerState ends with a snapshot at the log end offset.
    if plan.log_end_offset not in {o for o, p in snapshots if p not in plan.snapshots_deleted}:
        plan.snapshot_written = plan.log_end_offset
    plan.kept_parts, plan.lost_parts = _kept_and_lost(plan, recoveries)
    # UnifiedLog.rebuildProducerState: from the latest snapshot in (log start, log end], the log after it.
    # LogLoader.recoverSegment re-snapshots every segment it recovers (takeSnapshot), from the batches in file
    # order: snapshots from the first recovered segment on are the broker's anew, so the replay starts below it.
    up_to = min([plan.log_end_offset, *(r.base_offset for r in plan.recovered)])
    snapshot = load_from_snapshot(plan.path, plan.log_start_offset, up_to) if kept else None
    try:
        plan.transactions = replay_transactions(plan.kept_parts, plan.lost_parts, snapshot, plan.log_end_offset)
    except KdumpError as err:
        plan.refuse(err.path or plan.path, f"{err.reason} (position {err.position}): rebuilding the producer state "
                                           f"(UnifiedLog.rebuildProducerState) throws and the broker cannot load the "
                                           f"partition")
    return plan


def _unchecked(plan: PartitionPlan, kept: list[SegmentFiles], recoveries: dict[int, SegmentRecovery],
               files: dict[str, str], interval: int) -> list[UncheckedSegment]:
    """The kept segments the broker does not recover that hold damage or lack index entries.

    LogLoader.recoverLog re-checks nothing after a clean shutdown and, after an unclean one, nothing
    below the segment holding the recovery point; LogLoader.loadSegmentFiles only checks that the
    .index exists and the .txnindex is sane. Damage there stays, and is served as it is.
    """
    bases = [seg.base_offset for seg in kept]
    floor = max((b for b in bases if b <= plan.recovery_point), default=None)
    found = []
    for seg in kept:
        base, log = seg.base_offset, seg.log
        assert log is not None
        if base in recoveries or seg.end is not None:    # recovered, or a piece the split wrote
            continue
        if plan.clean_shutdown:
            why = "after a clean shutdown the broker re-checks no segment"
        else:
            why = f"below the recovery point {plan.recovery_point}, where recovery starts, nothing is re-checked"
        segment = UncheckedSegment(base, log, why, plan.clean_shutdown and (floor is None or base >= floor))
        index = files.get(segment_file_name(base, ".index"))
        if index is not None:
            with open_offset_index(index, base) as entries:
                segment.index_entries = entries.entries
        inspect_unrecovered(segment, interval)
        if segment.damage is not None or segment.missing_index_entries:
            found.append(segment)
    return found


def _kept_and_lost(plan: PartitionPlan, recoveries: dict[int, SegmentRecovery]) \
        -> tuple[list[SegmentFiles], list[SegmentFiles]]:
    """The bytes the broker keeps and those it drops, segment by segment in log order."""
    kept: list[SegmentFiles] = []
    lost: list[SegmentFiles] = []
    for seg in plan.kept_segments:
        recovery = recoveries.get(seg.base_offset)
        if recovery is not None and recovery.truncated_bytes:
            cut = seg.start + recovery.valid_bytes
            kept.append(replace(seg, end=cut))
            lost.append(replace(seg, start=cut))
        else:
            kept.append(seg)
    lost.extend(d.segment for d in plan.deleted_segments)
    return kept, lost


def _load_segments(plan: PartitionPlan, state: LogDirState, segments: list[SegmentFiles], files: dict[str, str],
                   epochs: LeaderEpochFileCache, interval: int) \
        -> tuple[list[SegmentFiles], dict[int, SegmentRecovery]]:
    """LogLoader.loadSegmentFiles then recoverLog: the segments kept and those recovered (by base)."""
    plan.recovered, plan.rebuilt_indexes, plan.deleted_segments = [], [], []
    recoveries: dict[int, SegmentRecovery] = {}
    for seg in segments:
        base, log = seg.base_offset, seg.log
        assert log is not None
        why = None
        if seg.end is not None:
            pass    # a piece the split wrote with its indexes (LogSegment.append)
        elif segment_file_name(base, ".index") not in files:
            why = "its offset index is missing"
        elif segment_file_name(base, ".txnindex") in files:
            problem = _txn_index_problem(files[segment_file_name(base, ".txnindex")], base)
            if problem is not None:
                why = f"its transaction index fails the sanity check ({problem})"
        if why is not None:
            recoveries[base] = recover_segment(seg, why, epochs, interval)
            if recoveries[base].invalid_offset is not None:
                # LogLoader.loadSegmentFiles does not catch it: UnifiedLog.create fails, and
                # LogManager.loadLogs rethrows it from its loading thread (the broker does not start).
                plan.refuse(log, f"{why}, and its recovery fails: {recoveries[base].invalid_offset} (the loading "
                                 f"thread dies and the broker does not start)")
            plan.recovered.append(recoveries[base])
            plan.rebuilt_indexes.append((log, why))
    plan.log_end_offset_before = end_offset_on_disk(segments[-1]) if segments else 0

    kept = list(segments)
    if not state.clean_shutdown and segments:
        bases = [seg.base_offset for seg in segments]
        floor = max((b for b in bases if b <= plan.recovery_point), default=None)
        start = 0 if floor is None else bases.index(floor)
        for i in range(start, len(segments)):
            seg = segments[i]
            base, log = seg.base_offset, seg.log
            assert log is not None
            if base in recoveries:
                # Already recovered (and truncated) while loading: a second recovery truncates nothing.
                continue
            # LogLoader.recoverLog (4.3.0) recovers logSegments(recoveryPoint, Long.MaxValue): from the segment
            # that holds the recovery point on.
            where = "holds" if base < plan.recovery_point else "at or above"
            recovery = recoveries[base] = recover_segment(seg, f"unflushed: {where} the recovery point "
                                                               f"{plan.recovery_point} and no clean shutdown", epochs,
                                                          interval)
            plan.recovered.append(recovery)
            plan.rebuilt_indexes.append((log, "recovered"))
            if recovery.truncated_bytes:
                for later in segments[i + 1:]:
                    plan.deleted_segments.append(deleted_segment(
                        later, f"after the segment truncated at {segment_file_name(base, '.log')}"))
                return segments[:i + 1], recoveries
    return kept, recoveries


def _split(plan: PartitionPlan, segments: list[SegmentFiles], overflow: SegmentOverflow) -> bool:
    """LogLoader.retryOnOffsetOverflow: split the segment in ``segments`` (False: the broker cannot); each piece
    is a span of the old file, read from there (the split writes them with their indexes: LogSegment.append)."""
    seg = overflow.segment
    assert seg.log is not None
    try:
        pieces = split_pieces(seg.log, seg.base_offset, seg.start, seg.end)
    except SplitFailure as failure:
        plan.refuse(seg.log, f"{overflow.reason}; {failure.reason}" +
                    (f" (position {failure.position - seg.start})" if failure.position is not None else ""))
        return False
    i = segments.index(seg)
    segments[i:i + 1] = [SegmentFiles(piece.base_offset, seg.log, start=piece.start, end=piece.end)
                         for piece in pieces]
    names = ", ".join(segment_file_name(piece.base_offset, ".log") for piece in pieces)
    plan.file_changes.append(FileChange(seg.log, "split", f"{overflow.reason}: the broker splits it into {names} "
                                        f"(LocalLog.splitOverflowedSegment) and loads the partition again"))
    return True


__all__ = ["plan_partition"]
