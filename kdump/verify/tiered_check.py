"""A tiered partition's whole history checked: remote segments, their metadata, and the local log.

Per topic-id partition, three sources side by side: the ``__remote_log_metadata`` events replayed as the broker
does (``kdump.broker.remote_log_metadata``), the segments the remote store holds (``kdump.log.remote_layout``)
and the local partition dir (its segments, ``log-start-offset-checkpoint``, ``leader-epoch-checkpoint``).
The rules (the ``kind`` of each ``Problem``) and the Kafka code they follow (4.3.0):

- ``remote-segment-unreferenced`` files with no record at all in the metadata: a segment the metadata never
  knew (RemoteLogManager.copyLogSegment writes COPY_SEGMENT_STARTED and waits for it before it copies a byte);
  the broker never reads it.
- ``remote-copy-unfinished`` (a note) files whose record never got past COPY_SEGMENT_STARTED: a copy in
  progress, or one cut short by a shutdown or a lost leadership, or one whose clean-up failed. A healthy
  broker leaves these (the next leader copies the segment again under a new id); it never reads them, and
  its remote retention deletes them (RemoteLogManager.RLMExpirationTask: "COPY_SEGMENT_STARTED means copy
  didn't complete").
- ``remote-segment-missing`` a COPY_SEGMENT_FINISHED segment whose files are gone: fetches of its offsets fail.
- ``remote-segment-mismatch`` the files disagree with the record: size (segmentSizeInBytes), start/end
  offsets, or a batch whose CRC fails.
- ``remote-segments-overlap`` / ``remote-segments-gap`` between consecutive readable remote segments.
- ``remote-local-gap`` the remote end + 1 below the local log start offset: offsets neither tier holds.
- ``remote-leader-epoch-mismatch`` a segment's segmentLeaderEpochs disagree with the local leader epoch
  checkpoint (RemoteLogManager.isRemoteSegmentWithinLeaderEpochs) or with the epochs of its own batches.
- ``remote-segment-deleted-left`` files of a segment whose DELETE_SEGMENT_FINISHED was recorded.
- ``remote-partition-deleted-left`` segments left of a partition whose deletion finished.
- ``remote-metadata-anomaly`` an event the broker's cache refuses (RemoteLogMetadataCache.checkStateTransition).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise

from kdump.broker.loader import plan_partition
from kdump.broker.log_dir_checkpoints import read_leader_epochs
from kdump.broker.log_manager import LogDirState, read_log_dir_state
from kdump.broker.partition_plan import LoadedLog, PartitionPlan
from kdump.broker.remote_log_metadata import (
    COPY_FINISHED,
    DELETE_FINISHED,
    DELETE_STARTED,
    METADATA_TOPIC,
    PartitionMetadata,
    SegmentMetadata,
    replay,
)
from kdump.errors import KdumpError
from kdump.findings import ERROR as FINDING_ERROR
from kdump.findings import NOTE as FINDING_NOTE
from kdump.findings import Finding
from kdump.format.checkpoint import (
    EpochEntry,
    parse_leader_epoch_checkpoint,
    parse_partition_metadata,
)
from kdump.format.snapshot import parse_producer_snapshot
from kdump.log.batches import LogBatches
from kdump.log.locations import open_any
from kdump.log.logdir import PartitionDir, SegmentFiles, walk_partitions
from kdump.log.remote_layout import RemotePartition, remote_partitions

ERROR, NOTE = "error", "note"


@dataclass(frozen=True, slots=True)
class Problem:
    kind: str
    severity: str
    offset: int | None
    message: str
    file: str | None = None


@dataclass(frozen=True, slots=True)
class LogExtent:
    """What one segment's .log holds: first and last offset, size, epochs, the first CRC failure."""

    first: int | None
    last: int | None
    size: int
    epochs: tuple[tuple[int, int], ...]         # (leader epoch, first offset), each change once
    bad_crc: int | None = None                  # file position of the first batch whose CRC fails
    error: str | None = None


@dataclass(frozen=True, slots=True)
class RemoteRow:
    start_offset: int
    end_offset: int | None
    segment_id: str
    state: str | None              # None: files with no metadata at all
    present: bool
    size: int | None
    files: SegmentFiles | None


@dataclass
class TieredPartition:
    topic: str
    partition: int
    topic_id: str | None
    log_start_offset: int | None
    local_log_start_offset: int | None
    log_end_offset: int | None
    remote: list[RemoteRow] = field(default_factory=list)
    local_segments: list[int] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def has_errors(self) -> bool:
        return any(p.severity == ERROR for p in self.problems)


def read_extent(location: str) -> LogExtent:
    first = last = bad = None
    epochs: list[tuple[int, int]] = []
    try:
        with open_any(location) as file:
            size = file.size
            for batch in LogBatches(file):
                if first is None:
                    first = batch.base_offset
                last = batch.last_offset
                if not epochs or epochs[-1][0] != batch.partition_leader_epoch:
                    epochs.append((batch.partition_leader_epoch, batch.base_offset))
                if batch.is_valid is False and bad is None:
                    bad = batch.position
    except KdumpError as err:
        return LogExtent(first, last, locals().get("size", 0), tuple(epochs), bad, str(err))
    return LogExtent(first, last, size, tuple(epochs), bad)


def _small(location: str) -> bytes:
    with open_any(location) as file:
        return file.read(0, file.size)


def _local_facts(pdir: PartitionDir | None) -> tuple[str | None, list[EpochEntry] | None]:
    if pdir is None:
        return None, None
    topic_id = epochs = None
    try:
        with open(os.path.join(pdir.path, "partition.metadata"), "rb") as f:
            topic_id = parse_partition_metadata(f.read(), "partition.metadata").topic_id
    except (OSError, KdumpError):
        topic_id = None
    try:
        epochs = read_leader_epochs(pdir.path)
    except KdumpError:
        epochs = None
    return topic_id, epochs


def _epoch_disagreement(meta: SegmentMetadata, checkpoint: Sequence[EpochEntry]) -> str | None:
    """RemoteLogManager.isRemoteSegmentWithinLeaderEpochs (4.3.0), the parts a stopped broker's files show:
    every epoch of the segment is in the checkpoint, and each epoch after the segment's first starts where
    the checkpoint says it does."""
    starts = {e.epoch: e.start_offset for e in checkpoint}
    first = min(starts.values(), default=0)   # the cache is truncated from the log start (truncateFromStart)
    for i, (epoch, offset) in enumerate(meta.leader_epochs):
        if epoch not in starts and offset < first:
            continue
        if epoch not in starts:
            return f"epoch {epoch} (from offset {offset}) is not in the leader epoch checkpoint"
        if i > 0 and starts[epoch] != offset:
            return f"epoch {epoch} starts at {offset} in the segment, at {starts[epoch]} in the checkpoint"
        if i == 0 and starts[epoch] > offset and starts[epoch] != first:
            return f"epoch {epoch} starts at {starts[epoch]} in the checkpoint, after the segment's offset {offset}"
    return None


def check_partition(topic: str, partition: int, meta: PartitionMetadata | None, remote: RemotePartition | None,
                    local: PartitionDir | None,
                    states: dict[str, LogDirState] | None = None) -> TieredPartition:
    topic_id = meta.topic_id if meta else remote.topic_id if remote else _local_facts(local)[0]
    _, checkpoint = _local_facts(local)
    out = TieredPartition(topic, partition, topic_id, None, None, None)
    problems = out.problems
    loaded = None
    if local is not None:
        plan = _load_local(local, {} if states is None else states)
        loaded = plan.loaded
        if plan.refused_file is not None:
            problems.append(Problem("local-log-offline", ERROR, None, f"the broker cannot load the local log: "
                                    f"{plan.refused_reason}", plan.refused_file))
    if loaded is not None:
        checkpoint = list(loaded.epochs)   # the leader epoch cache RemoteLogManager compares with, once loaded
    files = {s.remote_id: s for s in (remote.segments if remote else ()) if s.remote_id is not None}
    records = dict(meta.segments) if meta else {}
    for anomaly in meta.anomalies if meta else ():
        problems.append(Problem("remote-metadata-anomaly", NOTE, None, f"{METADATA_TOPIC} offset {anomaly.offset}, "
                                f"segment {anomaly.segment_id}: {anomaly.text}"))
    if meta is not None and meta.delete_state == "DELETE_PARTITION_FINISHED" and files:
        problems.append(Problem("remote-partition-deleted-left", NOTE, None, f"the partition's deletion finished "
                                f"({METADATA_TOPIC}), but {len(files)} remote segments are left"))
    readable: list[tuple[int, int, str]] = []
    for seg_id in sorted(set(files) | set(records), key=lambda i: (
            records[i].start_offset if i in records else files[i].base_offset, i)):
        rec, seg = records.get(seg_id), files.get(seg_id)
        present = seg is not None and seg.log is not None
        extent = read_extent(seg.log) if present and seg and seg.log else None
        start = rec.start_offset if rec else seg.base_offset if seg else 0
        out.remote.append(RemoteRow(start, rec.end_offset if rec else extent.last if extent else None, seg_id,
                                    rec.state if rec else None, present, extent.size if extent else None, seg))
        where = seg.log if seg and seg.log else None
        if rec is None or rec.state not in (COPY_FINISHED, DELETE_STARTED, DELETE_FINISHED):
            if seg is not None and rec is None:
                problems.append(Problem("remote-segment-unreferenced", ERROR, start, f"remote segment {seg_id} "
                                        f"(from offset {start}) has no record in {METADATA_TOPIC}: the broker never "
                                        "reads it", where or seg.paths()[0]))
            elif seg is not None and rec is not None:
                problems.append(Problem("remote-copy-unfinished", NOTE, start, f"remote segment {seg_id} (from "
                                        f"offset {start}) is only {rec.state} in {METADATA_TOPIC}: a copy in progress, "
                                        "or one cut short (a shutdown or a lost leadership mid-copy); the broker "
                                        "never reads it, and its remote retention deletes it", where or seg.paths()[0]))
            continue
        if rec.state == DELETE_FINISHED:
            if seg is not None:
                problems.append(Problem("remote-segment-deleted-left", NOTE, start, f"remote segment {seg_id}: "
                                        "its delete finished, but files are left", seg.paths()[0]))
            continue
        if rec.state == DELETE_STARTED:
            continue   # no longer read; files may or may not be left mid-delete
        if not present or extent is None:
            problems.append(Problem("remote-segment-missing", ERROR, start, f"remote segment {seg_id} (offsets "
                                    f"{rec.start_offset}-{rec.end_offset}) is COPY_SEGMENT_FINISHED but its .log is "
                                    "missing from the remote store", None))
            continue
        problems.extend(_mismatch(rec, extent, where))
        if seg is not None:
            problems.extend(_segment_state_files(rec, seg, checkpoint))
        if checkpoint is not None:
            why = _epoch_disagreement(rec, checkpoint)
            if why:
                problems.append(Problem("remote-leader-epoch-mismatch", ERROR, rec.start_offset,
                                        f"remote segment {seg_id}: {why}", where))
        readable.append((rec.start_offset, rec.end_offset, seg_id))
    problems.extend(_continuity(readable))
    _local_side(out, local, readable, loaded)
    where = remote.location if remote else local.path if local else None
    out.problems = [p if p.file else replace(p, file=where) for p in problems]
    return out


def _mismatch(rec: SegmentMetadata, extent: LogExtent, where: str | None) -> Iterator[Problem]:
    diffs = []
    if extent.size != rec.size:
        diffs.append(f"size {extent.size} bytes, the record says {rec.size}")
    if extent.first is not None and extent.first != rec.start_offset:
        diffs.append(f"first offset {extent.first}, the record says {rec.start_offset}")
    if extent.last is not None and extent.last != rec.end_offset:
        diffs.append(f"last offset {extent.last}, the record says {rec.end_offset}")
    if extent.bad_crc is not None:
        diffs.append(f"the batch at position {extent.bad_crc} fails its CRC check")
    if extent.error:
        diffs.append(f"unreadable: {extent.error}")
    if diffs:
        yield Problem("remote-segment-mismatch", ERROR, rec.start_offset, f"remote segment {rec.segment_id}: "
                      + "; ".join(diffs), where)
    elif extent.epochs and tuple(extent.epochs) != rec.leader_epochs:
        yield Problem("remote-leader-epoch-mismatch", ERROR, rec.start_offset, f"remote segment {rec.segment_id}: "
                      f"its batches carry epochs {list(extent.epochs)}, the record says {list(rec.leader_epochs)}",
                      where)


def _segment_state_files(rec: SegmentMetadata, seg: SegmentFiles,
                         checkpoint: Sequence[EpochEntry] | None) -> Iterator[Problem]:
    """A remote segment's own state files, as RemoteLogManager.copyLogSegment writes them (4.3.0): the producer
    snapshot taken at the segment's end (``.snapshot``: no producer's last offset after it) and the leader
    epoch cache cut at the segment's end (``.leader_epoch_checkpoint``: the partition's epochs up to it, which
    the local checkpoint holds alike unless its start was truncated since)."""
    if seg.snapshot is not None:
        try:
            snapshot = parse_producer_snapshot(_small(seg.snapshot))
        except KdumpError as err:
            yield Problem("remote-snapshot-unreadable", ERROR, rec.start_offset, f"remote segment {rec.segment_id}: "
                          f"its producer snapshot cannot be read: {err.reason}", seg.snapshot)
        else:
            late = [e for e in snapshot.entries if e.last_offset > rec.end_offset]
            if late:
                yield Problem("remote-snapshot-past-segment", ERROR, late[0].last_offset, f"remote segment "
                              f"{rec.segment_id}: its producer snapshot holds producer {late[0].producer_id} at offset "
                              f"{late[0].last_offset}, after the segment's end {rec.end_offset}", seg.snapshot)
    if seg.leader_epoch_checkpoint is None:
        return
    try:
        entries = parse_leader_epoch_checkpoint(_small(seg.leader_epoch_checkpoint),
                                                seg.leader_epoch_checkpoint).entries
    except KdumpError as err:
        yield Problem("remote-leader-epoch-mismatch", ERROR, rec.start_offset, f"remote segment {rec.segment_id}: "
                      f"its leader epoch checkpoint cannot be read: {err.reason}", seg.leader_epoch_checkpoint)
        return
    cut = [e for e in entries if e.start_offset <= rec.end_offset]
    local = {e.epoch: e.start_offset for e in checkpoint or ()}
    first_local = min(local.values(), default=None)
    why = None
    if len(cut) != len(entries):
        why = f"its leader epoch checkpoint goes past the segment's end {rec.end_offset}"
    elif checkpoint is not None:
        differ = [e for e in entries if local.get(e.epoch) != e.start_offset
                  and not (first_local is not None and e.start_offset < first_local)]
        if differ:
            there = local.get(differ[0].epoch)
            why = (f"its leader epoch checkpoint has epoch {differ[0].epoch} from {differ[0].start_offset}, the "
                   f"local checkpoint {'has no such epoch' if there is None else f'from {there}'}")
    if why:
        yield Problem("remote-leader-epoch-mismatch", ERROR, rec.start_offset, f"remote segment {rec.segment_id}: "
                      + why, seg.leader_epoch_checkpoint)


def _continuity(readable: list[tuple[int, int, str]]) -> Iterator[Problem]:
    for (_, prev_end, prev_id), (start, _, seg_id) in pairwise(readable):
        if start <= prev_end:
            yield Problem("remote-segments-overlap", ERROR, start, f"remote segment {seg_id} starts at {start}, at "
                          f"or below the end {prev_end} of remote segment {prev_id}")
        elif start > prev_end + 1:
            yield Problem("remote-segments-gap", ERROR, prev_end + 1, f"offsets {prev_end + 1}-{start - 1} lie in no "
                          f"remote segment (between {prev_id} and {seg_id})")


def _load_local(local: PartitionDir, states: dict[str, LogDirState]) -> PartitionPlan:
    """The loader's plan for the local partition dir (kdump.broker.loader, the one "after loading"), with its
    log dir's state read once per log dir."""
    log_dir = os.path.dirname(local.path)
    state = states.get(log_dir)
    if state is None:
        state = states[log_dir] = read_log_dir_state(log_dir)
    return plan_partition(local.path, state, inspect=False)


def _local_side(out: TieredPartition, local: PartitionDir | None, readable: list[tuple[int, int, str]],
                loaded: LoadedLog | None) -> None:
    """The partition's offsets as its broker's loader leaves them (UnifiedLog.logStartOffset,
    localLogStartOffset, logEndOffset after LogLoader.load, Kafka 4.3.0), and the gaps between the tiers."""
    logs = [s for s in (local.segments if local else ()) if s.log is not None]
    out.local_segments = [s.base_offset for s in logs]
    remote_start = readable[0][0] if readable else None
    remote_end = max((end for _, end, _ in readable), default=None)
    if loaded is not None:
        out.log_start_offset = loaded.log_start_offset
        out.local_log_start_offset = loaded.local_log_start_offset if logs else None
        out.log_end_offset = loaded.log_end_offset
    else:   # no local replica, or one its broker cannot load: the remote tier alone
        out.log_start_offset = remote_start
        out.log_end_offset = remote_end + 1 if remote_end is not None else None
    local_start = out.local_log_start_offset
    if remote_end is not None and local_start is not None and local_start > remote_end + 1:
        out.problems.append(Problem("remote-local-gap", ERROR, remote_end + 1, f"offsets {remote_end + 1}-"
                                    f"{local_start - 1} are in neither tier: the remote segments end at {remote_end}, "
                                    f"the local log starts at {local_start}", local.path if local else None))
    if local is not None and not logs and remote_end is not None:
        out.problems.append(Problem("remote-local-gap", ERROR, remote_end + 1, f"the local log holds no segment: "
                                    f"nothing after the remote end {remote_end} is readable", local.path))


def check_tiered(log_dirs: Iterable[str], remote_root: str) -> Iterator[TieredPartition]:
    """Every partition that has remote metadata or remote segments, sorted by topic and partition."""
    locals_: dict[tuple[str, int], PartitionDir] = {}
    meta_dirs: list[PartitionDir] = []
    for log_dir in log_dirs:
        for pdir in walk_partitions(log_dir):
            if pdir.state is not None:
                continue
            if pdir.topic == METADATA_TOPIC:
                meta_dirs.append(pdir)
            else:
                locals_[(pdir.topic, pdir.partition)] = pdir
    metadata = replay(sorted(meta_dirs, key=lambda p: p.partition)).partitions
    remotes = {(r.topic, r.partition, r.topic_id): r for r in remote_partitions(remote_root)}
    keys = sorted(set(metadata) | set(remotes))
    states: dict[str, LogDirState] = {}
    for topic, partition, topic_id in keys:
        yield check_partition(topic, partition, metadata.get((topic, partition, topic_id)),
                              remotes.get((topic, partition, topic_id)), locals_.get((topic, partition)), states)


def tiered_log_start(partition_path: str, start: int, first_base: int, remote_start: int | None) -> Finding | None:
    """A log start offset checkpoint below the first local segment is a tiered partition's normal state (the
    log start is remote, UnifiedLog.localLogStartOffset the local one): a note saying so, or None when the
    partition is not tiered (``remote_start``: its first remote offset, from the log dir's checkpoints)."""
    if remote_start is None:
        return None
    return Finding(FINDING_NOTE, "log-start-remote", partition_path, f"tiered partition: the log start offset "
                   f"{start} is in remote storage (remote segments from {remote_start} in {METADATA_TOPIC}); "
                   f"the local log starts at {first_base}", offset=start)


def tiered_findings(log_dirs: Iterable[str], remote_root: str) -> list[Finding]:
    """``check_tiered``'s problems as ``kdump verify`` findings (``verify --remote ROOT``)."""
    return [Finding(FINDING_ERROR if p.severity == ERROR else FINDING_NOTE, p.kind,
                    p.file or f"{part.topic}-{part.partition}", p.message, offset=p.offset)
            for part in check_tiered(log_dirs, remote_root) for p in part.problems]
