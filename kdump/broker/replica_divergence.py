"""Where replicas of one partition stop holding the same batches, from batch headers alone.

The logs compared are those the brokers' loaders leave (kdump.broker.replica_state): a batch that
loading drops (an unflushed tail cut at a corrupt batch) is not part of its replica's log.

A follower copies the leader's batches byte for byte (ReplicaFetcherThread appends them with
``appendAsFollower``), so two replicas that agree hold batches with the same base offset, last offset,
partition leader epoch and CRC at the same offsets. All replicas' headers are walked together in
offset order, holding one header per replica (memory stays flat whatever the log size); a pair's
first divergence is the first offset where one holds a batch the other holds differently or not at
all. A replica that is simply shorter (a lagging follower) or starts later (retention) does not
diverge: those offsets are lag, and ``common_end`` is where their shared prefix stops.

Compacted topics: the cleaner rewrites each replica independently below its cleaner checkpoint
(LogCleaner, ``cleaner-offset-checkpoint``), keeping v2 batches' base and last offsets
(MemoryRecords.filterTo keeps ``baseOffset`` and ``lastOffsetDelta``) but dropping records and whole
batches. Below either replica's first dirty offset a missing batch is therefore not divergence, and
two batches at the same offsets with different CRCs are compared by their surviving records: a
record both kept must have the same key and value.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from kdump.broker.replica_discovery import Replica
from kdump.broker.replica_state import DiskWalk
from kdump.errors import KdumpError
from kdump.format.batch import Batch
from kdump.log.batches import iter_records_at
from kdump.log.headers import ReadCounter, SegmentHeader, partition_headers
from kdump.log.locations import open_any


@dataclass
class PairResult:
    first: int                  # indexes into the replicas list
    second: int
    diverged_at: int | None = None
    common_end: int = 0         # the pair holds the same batches below this offset (where both hold any)
    first_side: SegmentHeader | None = None    # the batches at the divergence (None: absent there)
    second_side: SegmentHeader | None = None
    done: bool = False


def _cleaned_records(path: str, batch: Batch) -> dict[int, tuple[bytes | None, bytes | None]]:
    out: dict[int, tuple[bytes | None, bytes | None]] = {}
    with open_any(path) as file:
        for group in iter_records_at(file, batch):
            for record in group:
                value = record.value
                out[record.offset] = (record.key, value if isinstance(value, bytes | None) else bytes(value))
    return out


def surviving_records_differ(a: SegmentHeader, b: SegmentHeader) -> int | None:
    """The first offset both cleaned batches kept with a different key or value, or None."""
    left, right = _cleaned_records(a.path, a.batch), _cleaned_records(b.path, b.batch)
    for offset in sorted(set(left) & set(right)):
        if left[offset] != right[offset]:
            return offset
    return None


def _same(a: Batch, b: Batch) -> bool:
    return (a.last_offset, a.partition_leader_epoch, a.crc, a.size) == \
        (b.last_offset, b.partition_leader_epoch, b.crc, b.size)


def _fed(replica: Replica, walk: DiskWalk | None, counter: ReadCounter | None) -> Iterator[SegmentHeader]:
    """The headers of the replica's loaded log; every header on disk is also given to ``walk``, and a read
    error ends the walk (told to ``walk``)."""
    where = replica.partition.path
    try:
        for header in partition_headers(replica.partition.segments, counter=counter):
            where = header.path
            if walk is None or walk.add(header):
                yield header
    except KdumpError as err:
        if walk is not None:
            walk.fail(where, err)


def compare_replicas(replicas: Sequence[Replica], *, compacted: bool, counter: ReadCounter | None = None,
                     walks: Sequence[DiskWalk] | None = None) -> list[PairResult]:
    """Every pair's first divergence in the logs the broker's loader leaves (see the module docstring).
    With ``walks`` (one per replica) the same walk also establishes what each holds on disk: every header is
    read to the end, once."""
    n = len(replicas)
    pairs = [PairResult(i, j) for i in range(n) for j in range(i + 1, n)]
    feeds: list[Iterator[SegmentHeader]] = [_fed(r, walks[i] if walks else None, counter)
                                            for i, r in enumerate(replicas)]
    current: list[SegmentHeader | None] = [_next(w) for w in feeds] if pairs or walks else [None] * n
    previous_last = [-1] * n
    started = [False] * n
    cleaned = [(r.cleaner_offset or 0) if compacted else 0 for r in replicas]

    def diverge(pair: PairResult, offset: int, a: SegmentHeader | None, b: SegmentHeader | None) -> None:
        pair.diverged_at = pair.common_end = offset
        pair.first_side, pair.second_side = a, b
        pair.done = True

    while True:
        open_pairs = [p for p in pairs if not p.done]
        live = [i for i in range(n) if current[i] is not None]
        if not open_pairs or not live:
            break
        key = min(current[i].batch.base_offset for i in live)  # type: ignore[union-attr]
        at = {i for i in live if current[i].batch.base_offset == key}  # type: ignore[union-attr]
        for pair in open_pairs:
            i, j = pair.first, pair.second
            if i not in at and j not in at:
                continue
            zone = key < max(cleaned[i], cleaned[j])
            if i in at and j in at:
                a, b = current[i], current[j]
                assert a is not None and b is not None
                if _same(a.batch, b.batch):
                    continue
                if zone and (a.batch.last_offset, a.batch.partition_leader_epoch) == \
                        (b.batch.last_offset, b.batch.partition_leader_epoch):
                    differs = surviving_records_differ(a, b)
                    if differs is None:
                        continue
                    diverge(pair, differs, a, b)
                    continue
                diverge(pair, key, a, b)
                continue
            holder, other = (i, j) if i in at else (j, i)
            side = current[holder]
            if current[other] is None:
                if previous_last[other] >= key:
                    diverge(pair, key, *((side, None) if holder == i else (None, side)))
                else:
                    pair.done = True   # the other replica ends here: lag, not divergence
                continue
            if not started[other] or zone:
                continue   # before the other's first batch (retention), or removed by its cleaner
            diverge(pair, key, *((side, None) if holder == i else (None, side)))
        for i in at:
            head = current[i]
            assert head is not None
            previous_last[i] = head.batch.last_offset
            started[i] = True
            current[i] = _next(feeds[i])
    if walks:
        for i, walk in enumerate(walks):
            for _ in feeds[i]:
                pass       # the rest of the replica, for what it holds on disk only
            walk.finish()
    ends = [r.log_end_offset for r in replicas]
    for pair in pairs:
        if pair.diverged_at is None:
            pair.common_end = min(ends[pair.first], ends[pair.second])
    return pairs


def _next(walk: Iterator[SegmentHeader]) -> SegmentHeader | None:
    return next(walk, None)


def pair_of(pairs: Sequence[PairResult], a: int, b: int) -> PairResult:
    """The result of replicas ``a`` and ``b`` (a != b)."""
    return next(p for p in pairs if {p.first, p.second} == {a, b})


def common_end(pairs: Sequence[PairResult], a: int, b: int) -> int:
    """Where replicas ``a`` and ``b`` (a != b) stop holding the same batches in their loaded logs."""
    return pair_of(pairs, a, b).common_end
