"""Rules about a whole partition: offsets across segments, checkpoints, leader epochs, producer
snapshots and the transaction index, checked against the facts the segment walks gathered.

Files a broker writes after the log (checkpoints, ``leader-epoch-checkpoint``, snapshots,
``.txnindex``) are read before the segments are walked (``read_state``): whatever they claim then
was already in the log when kdump read it, so a partition being written to raises no false alarm.
The ``.txnindex`` files are read once more afterwards (``reread_txn_indexes``): an abort the log
shows must have its entry by then, as the broker indexes an abort right after appending its marker.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from kdump.broker.epoch_chain import check_epoch_chain
from kdump.broker.log_dir_checkpoints import (
    CheckpointCache,
    PartitionCheckpoints,
    ReadSmall,
    read_leader_epochs,
)
from kdump.broker.producer_state import CompletedTxn, ProducerStateManager
from kdump.broker.unified_log import log_end_offset
from kdump.errors import InputError, KdumpError
from kdump.findings import ERROR, NOTE, Finding
from kdump.format.checkpoint import (
    LEADER_EPOCH_CHECKPOINT_NAME,
    EpochEntry,
)
from kdump.format.snapshot import ProducerSnapshotEntry, parse_producer_snapshot
from kdump.format.txnindex import parse_aborted_txns
from kdump.log.logdir import PartitionDir
from kdump.log.remote_layout import parse_remote_segment_name
from kdump.log.state_files import read_if_exists
from kdump.verify.segment_check import ABORT, BEGIN, SegmentFacts
from kdump.verify.tiered_check import tiered_log_start
from kdump.verify.txn_index import check_txn_index

CHECKPOINT_MEANINGS = (("recovery_point", "recovery point"), ("high_watermark", "high watermark"),
                       ("log_start_offset", "log start offset"))
"""The log dir checkpoints verify checks (PartitionCheckpoints field, what its findings call it)."""


@dataclass
class PartitionState:
    """What the partition's own files claim, read before its segments are walked."""

    path: str
    checkpoints: PartitionCheckpoints = field(default_factory=PartitionCheckpoints)
    epochs: list[EpochEntry] | None = None
    snapshots: list[tuple[str, int]] = field(default_factory=list)     # (path, offset) of readable ones
    # the latest readable snapshot at or below the first segment's base offset: (offset, its producers)
    producer_snapshot: tuple[int, list[ProducerSnapshotEntry]] | None = None
    aborted: dict[tuple[int, int], tuple[str, int, int]] = field(default_factory=dict)  # kdump.verify.txn_index
    findings: list[Finding] = field(default_factory=list)


def partition_checkpoints(partition: PartitionDir, cache: CheckpointCache | None = None) \
        -> tuple[PartitionCheckpoints, list[tuple[str, KdumpError]]]:
    """What the log dir's checkpoints (kdump.broker.log_dir_checkpoints) say of ``partition``, and (path,
    error) for each checkpoint file that could not be read or parsed, told with the first partition of its
    log dir only (``cache`` keeps what each log dir holds)."""
    log_dir = os.path.dirname(partition.path)
    checkpoints, first = (cache or CheckpointCache()).log_dir(log_dir)
    first_base = partition.segments[0].base_offset if partition.segments else None
    problems = [(os.path.join(log_dir, name), err) for name, err in checkpoints.problems.items()] if first else []
    return checkpoints.partition(partition.topic, partition.partition, first_base), problems


def _problem(err: KdumpError, check: str, path: str, why: str = "") -> Finding:
    """A file that could not be read at all is ``unreadable`` (exit 2); one that reads as garbage fails ``check``."""
    if isinstance(err, InputError):
        return Finding(ERROR, "unreadable", path, f"cannot be read: {err.reason}")
    return Finding(ERROR, check, path, err.reason + why, position=err.position)


def read_txn_indexes(partition: PartitionDir, read: ReadSmall, state: PartitionState) -> None:
    state.aborted = {}
    for seg in partition.segments:
        if seg.txn_index is None:
            continue
        try:
            for entry in parse_aborted_txns(read(seg.txn_index) or b"", seg.txn_index):
                state.aborted[(entry.producer_id, entry.last_offset)] = (seg.txn_index, entry.first_offset,
                                                                         entry.last_stable_offset)
        except KdumpError as err:
            state.findings.append(_problem(err, "txn-index-unreadable", seg.txn_index))


def read_state(partition: PartitionDir, read: ReadSmall = read_if_exists,
               cache: CheckpointCache | None = None) -> PartitionState:
    state = PartitionState(partition.path)
    state.checkpoints, problems = partition_checkpoints(partition, CheckpointCache(read) if cache is None else cache)
    state.findings.extend(_problem(err, "checkpoint-unreadable", path) for path, err in problems)
    epoch_path = os.path.join(partition.path, LEADER_EPOCH_CHECKPOINT_NAME)
    if epoch_path in partition.other_files:
        try:
            state.epochs = read_leader_epochs(partition.path, read) or []
        except KdumpError as err:
            state.findings.append(_problem(err, "checkpoint-unreadable", epoch_path))
    first_base = partition.segments[0].base_offset if partition.segments else None
    for path in partition.snapshots:
        try:
            entries = parse_producer_snapshot(read(path) or b"").entries
        except KdumpError as err:
            state.findings.append(_problem(err, "snapshot-unreadable", path, " (the broker discards it and rebuilds "
                                           "producer state by reading the log)"))
            continue
        offset = int(os.path.basename(path).split(".", 1)[0])
        state.snapshots.append((path, offset))
        if first_base is not None and offset <= first_base and \
                (state.producer_snapshot is None or offset > state.producer_snapshot[0]):
            state.producer_snapshot = (offset, list(entries))
    read_txn_indexes(partition, read, state)
    return state


def check_partition(partition: PartitionDir, before: PartitionState, facts: Sequence[SegmentFacts],
                    after: PartitionState | None = None) -> Iterator[Finding]:
    """Every partition rule; ``after``: the ``.txnindex`` entries re-read once the segments were walked."""
    yield from before.findings
    yield from _across_segments(facts)
    if not all(f.complete for f in facts):
        return  # where framing broke the log end is unknown; the framing finding says so
    leo = log_end_offset(facts)
    if leo is None:
        return
    first_base = facts[0].base_offset if facts else leo
    yield from _checkpoints(partition.path, before.checkpoints, leo, first_base)
    yield from _leader_epochs(partition.path, before.epochs, facts, leo)
    for path, offset in before.snapshots:
        if offset > leo:
            yield Finding(NOTE, "snapshot-past-log", path, f"the snapshot is for offset {offset}, past the log end "
                          f"offset {leo} (the broker deletes it at start-up)", offset=offset)
    yield from _transactions(partition, before, after or before, facts)


def _is_remote(seg: SegmentFacts) -> bool:
    return seg.log is not None and parse_remote_segment_name(os.path.basename(seg.log)) is not None


def _across_segments(facts: Sequence[SegmentFacts]) -> Iterator[Finding]:
    prev: SegmentFacts | None = None
    for seg in facts:
        if prev is not None and prev.last_offset is not None and prev.last_offset >= seg.base_offset:
            if _is_remote(prev) and _is_remote(seg):
                # A remote store legitimately holds overlapping segments: a copy cut short and copied again
                # under a new id, or copies made under different leader epochs. Which one the broker reads is
                # in __remote_log_metadata, which a remote partition alone does not have.
                yield Finding(NOTE, "remote-segments-overlap", seg.log or "", f"this remote segment starts at "
                              f"{seg.base_offset}, the previous one holds offsets up to {prev.last_offset}: "
                              "__remote_log_metadata says which one the broker reads (kdump tiered LOG_DIR "
                              "--remote ROOT)", offset=seg.base_offset)
            else:
                yield Finding(ERROR, "segments-overlap", seg.log or "", f"the previous segment holds offsets up to "
                              f"{prev.last_offset}, at or above this segment's base offset {seg.base_offset}",
                              offset=seg.base_offset)
        if seg.last_offset is not None:
            prev = seg


def _checkpoints(path: str, checkpoints: PartitionCheckpoints, leo: int, first_base: int) -> Iterator[Finding]:
    for name, meaning in CHECKPOINT_MEANINGS:
        value = getattr(checkpoints, name)
        if value is not None and value > leo:
            yield Finding(ERROR, "checkpoint-past-log", path, f"the {meaning} checkpoint says {value}, above the log "
                          f"end offset {leo}: data it covers is missing from this replica", offset=value)
    start = checkpoints.log_start_offset
    if start is not None and start < first_base:
        # a tiered partition's log start is remote
        yield tiered_log_start(path, start, first_base, checkpoints.remote_log_start) or Finding(
            NOTE, "log-start-below-segments", path, f"the log start offset checkpoint says {start}, below "
                      f"the first segment's base offset {first_base} (the broker uses the base offset)", offset=start)


def _leader_epochs(path: str, entries: list[EpochEntry] | None, facts: Sequence[SegmentFacts],
                   leo: int) -> Iterator[Finding]:
    runs = [(epoch, first, seg.log or "") for seg in facts for epoch, first in seg.epochs]
    start = facts[0].base_offset if facts else leo
    yield from check_epoch_chain(os.path.join(path, LEADER_EPOCH_CHECKPOINT_NAME), entries, runs, start, leo)


def expected_aborts(before: PartitionState, facts: Sequence[SegmentFacts]) -> list[CompletedTxn]:
    """The transactions the log's markers complete (kdump.broker.producer_state), replayed from the
    segments' transaction events on top of the snapshot at the log's start (the events carry no epochs;
    these rules need none)."""
    state = ProducerStateManager()
    start = 0
    if before.producer_snapshot is not None:
        start, entries = before.producer_snapshot
        state.load_snapshot(entries)
    completed = []
    for seg in facts:
        for kind, pid, offset in seg.txn_events:
            if offset < start:
                continue
            if kind == BEGIN:
                state.append_data_batch(pid, -1, offset, offset, is_transactional=True)
            else:
                txn = state.append_end_txn_marker(pid, -1, offset, is_abort=kind == ABORT)
                if txn is not None:
                    completed.append(txn)
    return completed


def _transactions(partition: PartitionDir, before: PartitionState, after: PartitionState,
                  facts: Sequence[SegmentFacts]) -> Iterator[Finding]:
    """Aborts replayed from the markers (as ProducerStateManager does) against the ``.txnindex`` entries."""
    first_base = facts[0].base_offset if facts else None
    # the .txnindex files are local: what lies below the local log start is in remote storage
    start = before.checkpoints.offsets(first_base, None).local_log_start_offset
    yield from check_txn_index(partition.path, expected_aborts(before, facts), after.aborted,
                               [f.base_offset for f in facts], start, before.aborted)
