"""The offsets of one partition's log, and its producer state rebuilt from the segments: Kafka's UnifiedLog.

Every number kdump prints about a partition's state (log start offset, log end offset, high
watermark, last stable offset, recovery point) comes from the functions here, so ``summary``,
``find``, ``txn``, ``verify`` and ``recover`` cannot print two values for one partition. They follow
Kafka 4.3.0:

- ``log_start_offset``: storage/.../internals/log/LogLoader.java ``load``: the log start offset
  checkpoint, raised to the first segment's base offset (``newLogStartOffset``), except for a
  remote-log-enabled (tiered) partition, whose log start stays the checkpoint's, in remote storage.
- ``local_log_start_offset``: the UnifiedLog constructor's ``updateLocalLogStartOffset``: the log
  start offset raised to the first local segment's base offset (the same for a local-only log).
- ``high_watermark``: UnifiedLog.updateHighWatermark: the checkpointed value held between the log
  start offset and the log end offset, then lifted to the local log start
  (UnifiedLog.updateLocalLogStartOffset lifts the high watermark and the recovery point).
- ``last_stable_offset``: UnifiedLog.lastStableOffset: the first unstable offset (the earliest
  transaction not yet decided) when it is below the high watermark, else the high watermark; without
  a high watermark, the log end offset.
- ``rebuild_producer_state`` (UnifiedLog.rebuildProducerState and loadProducersFromRecords) replays
  batches of segment files into a ``ProducerStateManager``, from the state a ``.snapshot`` holds;
  ``replay_transactions`` tells what truncating a log does to its open transactions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kdump.broker.batch_applier import BatchApplier, control_record
from kdump.broker.producer_state import CompletedTxn, ProducerStateManager
from kdump.errors import KdumpError
from kdump.format.snapshot import ProducerSnapshotEntry
from kdump.log.batches import iter_records_at
from kdump.log.files import segment_base_offset
from kdump.log.headers import file_headers
from kdump.log.locations import join, list_dir, open_any
from kdump.log.logdir import SegmentFiles
from kdump.log.lookup import index_position, segment_of
from kdump.log.state_files import read_producer_snapshot


class SegmentOffsets(Protocol):
    @property
    def base_offset(self) -> int: ...

    @property
    def last_offset(self) -> int | None: ...


def log_end_offset(segments: Iterable[SegmentOffsets]) -> int | None:
    """LocalLog's log end offset: one past the highest offset any segment holds; the last segment's base
    offset when none holds a batch; None without segments."""
    last_base: int | None = None
    highest: int | None = None
    for seg in segments:
        last_base = seg.base_offset
        if seg.last_offset is not None and (highest is None or seg.last_offset > highest):
            highest = seg.last_offset
    return highest + 1 if highest is not None else last_base


def log_start_offset(checkpoint: int | None, first_segment_base: int | None, remote_log_enabled: bool = False) -> int:
    """LogLoader.load's ``newLogStartOffset``: max(checkpoint, first segment's base offset); the checkpoint
    alone for a remote-log-enabled partition (Kafka 4.3.0; a missing entry is 0, LogManager.loadLog)."""
    if remote_log_enabled:
        return checkpoint or 0
    return max(checkpoint or 0, first_segment_base if first_segment_base is not None else 0)


def local_log_start_offset(log_start: int, first_segment_base: int | None) -> int:
    """UnifiedLog's constructor: updateLocalLogStartOffset(max(logStartOffset, first segment's base offset))."""
    return max(log_start, first_segment_base if first_segment_base is not None else 0)


def high_watermark(checkpoint: int | None, start: int, log_end: int) -> int | None:
    """UnifiedLog.updateHighWatermark: the checkpoint held in [log start offset, log end offset]."""
    return None if checkpoint is None else min(max(checkpoint, start), log_end)


def last_stable_offset(first_unstable: int | None, high_watermark: int | None, log_end: int | None) -> int | None:
    """UnifiedLog.lastStableOffset (the log end offset stands in for an unknown high watermark)."""
    bound = high_watermark if high_watermark is not None else log_end
    if first_unstable is not None and (bound is None or first_unstable < bound):
        return first_unstable
    return bound


@dataclass(frozen=True, slots=True)
class LogOffsetsSnapshot:
    """LogOffsetsSnapshot.java, with the recovery point: what a partition's files say of its offsets."""

    log_start_offset: int
    local_log_start_offset: int
    log_end_offset: int
    high_watermark: int | None
    last_stable_offset: int | None
    recovery_point: int | None

    @classmethod
    def of(cls, *, log_start_checkpoint: int | None, first_segment_base: int | None, log_end: int | None,
           high_watermark_checkpoint: int | None = None, recovery_point: int | None = None,
           first_unstable: int | None = None, remote_log_enabled: bool = False) -> LogOffsetsSnapshot:
        start = log_start_offset(log_start_checkpoint, first_segment_base, remote_log_enabled)
        local = local_log_start_offset(start, first_segment_base)
        end = local if log_end is None else max(log_end, local)
        hw = high_watermark(high_watermark_checkpoint, local, end)
        return cls(start, local, end, hw, last_stable_offset(first_unstable, hw, end), recovery_point)


def snapshot_offsets(partition_path: str) -> list[tuple[int, str]]:
    """(offset, path) of every ``<offset>.snapshot`` of a partition directory, by offset."""
    found = []
    for name, _ in list_dir(partition_path):
        offset = segment_base_offset(name) if name.endswith(".snapshot") else None
        if offset is not None:
            found.append((offset, join(partition_path, name)))
    return sorted(found)


def load_from_snapshot(partition_path: str, log_start: int, up_to: int) -> tuple[int, list[ProducerSnapshotEntry]]:
    """ProducerStateManager.truncateAndReload(logStart, upTo) then loadFromSnapshot: the latest readable
    snapshot in (log start, up_to], as (its offset, entries); (log start, []) when there is none.
    (Producers idle past producer.id.expiration.ms are not dropped: kdump does not know the time.)"""
    for offset, path in reversed(snapshot_offsets(partition_path)):
        if log_start < offset <= up_to:
            try:
                return offset, list(read_producer_snapshot(path)[0].entries)
            except KdumpError:
                continue    # CorruptSnapshotException: the broker deletes it and tries the one before
    return log_start, []


def feed(state: ProducerStateManager, part: SegmentFiles, from_offset: int = 0,
         seen: set[int] | None = None, strict: bool = False) -> Iterable[tuple[int, CompletedTxn]]:
    """loadProducersFromRecords over one segment's bytes: (segment base, completed txn) as markers complete
    them, in file order; batches below ``from_offset`` are skipped, the bytes after the last complete batch
    ignored. ``strict``: a batch that does not frame, or a marker whose record
    cannot be read, raises (the broker's replay throws there: CorruptRecordException, InvalidRecordException);
    else the replay ends there quietly. Batch headers only: a control batch's first record is the one record
    read (its marker type)."""
    base, path, start, end = part.base_offset, part.log, part.start, part.end
    assert path is not None
    applier = BatchApplier(producers=state)
    with open_any(path) as log:
        if start == 0 and end is None:   # a whole segment: from where its offset index puts ``from_offset``
            start = index_position(log, segment_of(path, base), from_offset)
        try:
            for batch in file_headers(log, start=start, end=end):
                if batch.is_legacy or batch.producer_id < 0 or batch.last_offset < from_offset:
                    continue
                if seen is not None:
                    seen.add(batch.producer_id)
                control = None
                if applier.needs_control(batch):
                    control = control_record(next(iter_records_at(log, batch), []))
                completed = applier.apply(batch, control)
                if completed is not None:
                    yield base, completed
        except KdumpError as err:
            if strict:
                raise err.with_file(path) from None
            # else what follows the last complete batch is not data (cut, garbage, padding)


def rebuild_producer_state(state: ProducerStateManager, parts: Sequence[SegmentFiles], from_offset: int = 0,
                           up_to: int | None = None, strict: bool = False) -> None:
    """UnifiedLog.rebuildProducerState: replay ``parts`` from ``from_offset`` into ``state``, the segments below
    ``up_to`` (the log end offset) only: loadProducersFromRecords reads segments.values(mapEndOffset, lastOffset),
    every batch of each from the start position on, in file order."""
    for part in parts:
        if up_to is None or part.base_offset < up_to:
            for _ in feed(state, part, from_offset, strict=strict):
                pass


@dataclass
class OpenTransaction:
    producer_id: int
    first_offset: int
    marker_lost: bool        # closed in the log before truncation: its marker is among the lost batches


@dataclass
class TransactionEffect:
    open_after: list[OpenTransaction] = field(default_factory=list)
    lost_open: list[tuple[int, int]] = field(default_factory=list)   # (producer id, first offset): all lost
    lost_producers: set[int] = field(default_factory=set)            # producers with a lost batch


def replay_transactions(kept: Sequence[SegmentFiles], lost: Sequence[SegmentFiles],
                        snapshot: tuple[int, list[ProducerSnapshotEntry]] | None = None,
                        log_end: int | None = None) -> TransactionEffect:
    """The open transactions after loading ``kept``, and what losing ``lost`` (in log order) changed: a
    transaction whose first batch is kept but whose marker was truncated away is open again, and holds
    back the last stable offset until the coordinator ends it. ``snapshot`` (its offset and entries, from
    ``load_from_snapshot``) is where UnifiedLog.rebuildProducerState starts: the log is replayed from there up to
    ``log_end``."""
    state = ProducerStateManager()
    from_offset = 0
    if snapshot is not None:
        from_offset, entries = snapshot
        state.load_snapshot(entries)
    # The broker's own replay: what it cannot read stops the loading (KdumpError raised to the loader).
    rebuild_producer_state(state, [p for i, p in enumerate(kept) if _reaches(kept, i, from_offset)], from_offset,
                           log_end, strict=True)
    after = {pid: first for pid, first in state.ongoing()}
    effect = TransactionEffect()
    for part in lost:
        for _ in feed(state, part, seen=effect.lost_producers):
            pass
    before = {pid: first for pid, first in state.ongoing()}
    effect.open_after = [OpenTransaction(pid, first, before.get(pid) != first) for pid, first in sorted(after.items())]
    effect.lost_open = sorted((pid, first) for pid, first in before.items() if after.get(pid) != first)
    return effect


def _reaches(parts: Sequence[SegmentFiles], index: int, offset: int) -> bool:
    """Whether part ``index`` may hold offsets at or above ``offset`` (the next part starts above it)."""
    return index + 1 >= len(parts) or parts[index + 1].base_offset > offset


__all__ = [
    "LogOffsetsSnapshot",
    "OpenTransaction",
    "TransactionEffect",
    "high_watermark",
    "last_stable_offset",
    "load_from_snapshot",
    "local_log_start_offset",
    "log_end_offset",
    "log_start_offset",
    "rebuild_producer_state",
    "replay_transactions",
]
