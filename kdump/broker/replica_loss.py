"""Which records a restart removes from each replica, and which of them the partition's history loses.

A restart removes records twice. Loading: LogLoader truncates an unflushed segment at its first invalid
batch and deletes the segments after it (kdump.broker.loader): a ``LoadTruncation``, from the replica's log
end on disk to its loaded log end. Fetching: a follower's fetcher truncates its loaded log to where its
epochs agree with the new leader's (kdump.broker.follower_truncation): a ``Truncation``.

A removed record is lost when the leader, once loaded, does not hold the same batch at its offset: on a
follower, from the pair's first divergence in their loaded logs (where they agree: from the leader's
loaded log end) to the follower's log end on disk; on the leader, whatever its own loading removes (its
followers then truncate to it). A lost record was committed when a replica that held the batch had
checkpointed a high watermark above it (``replication-offset-checkpoint``: an ``acks=all`` producer was
told it was written). ``PartitionLoss`` counts each lost offset once, whichever replicas held it; the
per-replica figures stay with each truncation.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from kdump.broker.follower_truncation import TruncationPlan
from kdump.broker.replica_discovery import Replica
from kdump.broker.replica_divergence import PairResult, common_end, pair_of
from kdump.errors import KdumpError
from kdump.format.batch import Batch
from kdump.log.headers import ReadCounter, partition_headers, segment_headers

MAX_LISTED_PRODUCERS = 100


@dataclass
class Truncation:
    """What one follower's fetcher truncates of its loaded log, and what of it is lost."""

    follower: Replica
    leader: Replica
    plan: TruncationPlan
    records_truncated: int = 0
    records_lost: int = 0
    committed_records_lost: int = 0
    lost_from: int | None = None
    lost_to: int | None = None              # exclusive: the follower's log end on disk
    committed_below: int = 0
    producers: list[int] = field(default_factory=list)
    transactional_producers: list[int] = field(default_factory=list)
    control_batches_lost: int = 0


@dataclass
class LoadTruncation:
    """What a replica's own loading removes: its log end on disk down to its loaded log end."""

    replica: Replica
    from_offset: int           # the log end offset on disk
    to_offset: int             # the loaded log end offset
    records: int = 0
    committed_records: int = 0
    lost: bool = False         # the partition's history loses them (the leader's own load truncation)


@dataclass
class PartitionLoss:
    """The records the partition's history loses, each offset counted once."""

    offsets: list[tuple[int, int]] = field(default_factory=list)    # [from, to) ranges, ascending
    records: int = 0
    committed_records: int = 0


@dataclass
class _Range:
    """One replica's records lost from the history: offsets [low, high) of what it holds on disk."""

    replica: Replica
    low: int
    high: int
    committed_below: int
    pieces: dict[int, tuple[int, int]] = field(default_factory=dict)   # piece index -> (records, committed)


def load_truncation(replica: Replica, committed_below: int, counter: ReadCounter | None) -> LoadTruncation | None:
    """The records loading removes from ``replica`` (None when it removes none)."""
    loaded = replica.loaded
    if loaded is None or loaded.log_end_offset >= loaded.log_end_offset_on_disk:
        return None
    out = LoadTruncation(replica, loaded.log_end_offset_on_disk, loaded.log_end_offset)
    for batch in _lost_batches(replica):
        count = _count(batch)
        out.records += count
        out.committed_records += _records_in(batch.base_offset, batch.last_offset, count, batch.base_offset,
                                             committed_below - 1)
    return out


def _lost_batches(replica: Replica) -> Iterator[Batch]:
    """The batches loading drops (the loader's dropped byte ranges, headers only)."""
    for part in replica.lost_parts:
        if part.log is None:
            continue
        try:
            yield from segment_headers(part.log, start=part.start, end=part.end)
        except KdumpError:
            pass    # the bytes after the last complete batch are no batch


def committed_below(live: Sequence[Replica], index: int, pairs: Sequence[PairResult]) -> int:
    """Below which offset a record replica ``index`` held was committed: the highest checkpointed high
    watermark of a replica holding the same batches up to there (itself: up to its log end on disk)."""
    own = live[index]
    best = min(own.high_watermark_checkpoint or 0, own.disk.log_end_offset)
    for k, other in enumerate(live):
        if k != index:
            best = max(best, min(other.high_watermark_checkpoint or 0, common_end(pairs, index, k)))
    return best


def follower_loss(t: Truncation, live: Sequence[Replica], index: int, lead: int, pairs: Sequence[PairResult],
                  counter: ReadCounter | None) -> _Range | None:
    """Fill in what follower ``index`` truncates and loses against the leader ``lead``; its lost range."""
    follower = t.follower
    cut = follower.log_start_offset if t.plan.truncated_fully else t.plan.truncate_to
    pair = pair_of(pairs, index, lead)
    agreed = live[lead].log_end_offset if pair.diverged_at is None else pair.common_end
    lost_from = max(cut, agreed)
    end_on_disk = max(follower.disk.log_end_offset, follower.log_end_offset)
    t.committed_below = committed_below(live, index, pairs)
    if lost_from < end_on_disk:
        t.lost_from, t.lost_to = lost_from, end_on_disk
    producers: set[int] = set()
    transactional: set[int] = set()
    low = min(cut, lost_from)
    for b in _batches_from(follower, low, counter):
        count = _count(b)
        t.records_truncated += _records_in(b.base_offset, b.last_offset, count, cut, follower.log_end_offset - 1)
        if b.last_offset < lost_from:
            continue
        t.records_lost += _records_in(b.base_offset, b.last_offset, count, lost_from, end_on_disk - 1)
        t.committed_records_lost += _records_in(b.base_offset, b.last_offset, count, lost_from,
                                                min(t.committed_below, end_on_disk) - 1)
        if b.producer_id >= 0:
            producers.add(b.producer_id)
            if b.is_transactional:
                transactional.add(b.producer_id)
        t.control_batches_lost += b.is_control
        if len(producers) > MAX_LISTED_PRODUCERS:      # memory stays flat: the lowest ids are listed
            producers = set(sorted(producers)[:MAX_LISTED_PRODUCERS])
            transactional &= producers
    t.producers, t.transactional_producers = sorted(producers), sorted(transactional)
    if t.lost_from is None:
        return None
    return _Range(follower, lost_from, end_on_disk, t.committed_below)


def leader_loss(load: LoadTruncation | None, committed: int) -> _Range | None:
    """The leader's own load truncation: lost from the history (its followers truncate to it)."""
    if load is None or not load.records:
        return None
    load.lost = True
    return _Range(load.replica, load.to_offset, load.from_offset, committed)


def partition_loss(ranges: Sequence[_Range], counter: ReadCounter | None) -> PartitionLoss:
    """Each lost offset once: the union of the ranges, each piece counted from the replica holding most there."""
    ranges = [r for r in ranges if r.low < r.high]
    loss = PartitionLoss()
    if not ranges:
        return loss
    bounds = sorted({b for r in ranges for b in (r.low, r.high)})
    pieces = [(lo, hi) for lo, hi in pairwise(bounds)
              if any(r.low <= lo and hi <= r.high for r in ranges)]
    for lo, hi in pieces:
        if loss.offsets and loss.offsets[-1][1] == lo:
            loss.offsets[-1] = (loss.offsets[-1][0], hi)
        else:
            loss.offsets.append((lo, hi))
    for r in ranges:
        mine = [(i, lo, hi) for i, (lo, hi) in enumerate(pieces) if r.low <= lo and hi <= r.high]
        for b in _batches_from(r.replica, r.low, counter):
            if b.base_offset >= r.high:
                break
            count = _count(b)
            for i, lo, hi in mine:
                records = _records_in(b.base_offset, b.last_offset, count, lo, hi - 1)
                if records:
                    committed = _records_in(b.base_offset, b.last_offset, count, lo, min(hi, r.committed_below) - 1)
                    had = r.pieces.get(i, (0, 0))
                    r.pieces[i] = (had[0] + records, had[1] + committed)
    for i in range(len(pieces)):
        loss.records += max((r.pieces.get(i, (0, 0))[0] for r in ranges), default=0)
        loss.committed_records += max((r.pieces.get(i, (0, 0))[1] for r in ranges), default=0)
    return loss


def _batches_from(replica: Replica, low: int, counter: ReadCounter | None) -> Iterator[Batch]:
    """The replica's batch headers on disk whose offsets reach ``low`` (a read error ends them: the
    replica's walk reported it)."""
    try:
        for head in partition_headers(replica.partition.segments, from_offset=low, counter=counter):
            if head.batch.last_offset >= low:
                yield head.batch
    except KdumpError:
        pass


def _count(batch: Batch) -> int:
    return batch.records_count if batch.records_count is not None else 1


def _records_in(base: int, last: int, count: int, low: int, high: int) -> int:
    """Records of a batch [base, last] holding ``count`` within offsets [low, high]: exact for a batch
    wholly inside or outside; for one that straddles a bound, its offsets inside, at most ``count``."""
    if last < low or base > high:
        return 0
    if base >= low and last <= high:
        return count
    return min(count, min(last, high) - max(base, low) + 1)


__all__ = ["LoadTruncation", "PartitionLoss", "Truncation", "committed_below", "follower_loss", "leader_loss",
           "load_truncation", "partition_loss"]
