"""What a follower truncates when it starts fetching from a leader: Kafka's fetcher, as a plan.

Follows core/src/main/scala/kafka/server/AbstractFetcherThread.scala and the leader's side in
core/src/main/scala/kafka/cluster/Partition.scala (``readRecords``) of Kafka 3.9.0 to 4.3.0, where
truncation happens on the fetch response (KIP-595's ``lastFetchedEpoch``, used since IBP 2.7):

1. The follower fetches from its log end offset with ``lastFetchedEpoch`` = its cache's latest epoch
   (``partitionFetchState``); a follower whose cache has no epoch starts from its high watermark
   (ReplicaManager.initialFetchOffset) and truncates there (``truncateToHighWatermark``).
2. The leader answers ``endOffsetFor(lastFetchedEpoch)`` from its cache (kdump.broker.leader_epoch_cache)
   with its current leader epoch assigned at its log end (Partition.makeLeader). An undefined answer,
   or a fetch offset below the leader's log start, is OFFSET_OUT_OF_RANGE; an answer whose epoch is
   below the fetched one, or whose end offset is below the fetch offset, is a diverging epoch.
3. On a diverging epoch the follower runs ``getOffsetTruncationState``: when its own cache knows the
   leader's epoch it truncates to min(its end offset for that epoch, the leader's end offset, its log
   end); when it does not, to the end of its largest epoch below it, and fetches again from there with
   its new latest epoch: the KIP-279 rounds, one per leader change the follower missed. When its cache
   has no epoch at or below the leader's, it truncates to the leader's end offset.
4. On OFFSET_OUT_OF_RANGE (``fetchOffsetAndTruncate``): a leader whose log end is below the follower's
   truncates it there; a leader whose log start is past the follower's log end truncates the follower
   fully and starts it at the leader's log start; otherwise the follower keeps its log.

Truncating (UnifiedLog.truncateTo) drops the follower's records from the offset on and its cache's
entries starting there (truncateFromEnd); below the first segment it truncates fully.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kdump.broker.leader_epoch_cache import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochFileCache

MAX_ROUNDS = 1000   # each round removes at least one epoch entry; a bound against looping on bad input


@dataclass
class LogView:
    """What the fetcher sees of one replica's log."""

    log_start_offset: int
    log_end_offset: int
    cache: LeaderEpochFileCache
    high_watermark: int | None = None     # as loaded: within [log start, log end]


@dataclass(frozen=True, slots=True)
class TruncationStep:
    """One fetch round: what the follower asked, what the leader answered, what it did."""

    fetch_offset: int
    fetch_epoch: int | None
    leader_epoch: int | None        # the epoch of the leader's answer (None: out of range)
    leader_end_offset: int | None
    truncate_to: int | None         # None: this round truncated nothing
    reason: str


@dataclass
class TruncationPlan:
    truncate_to: int                # the follower's log end after truncation (its first fetch offset)
    fetch_offset: int               # where it starts fetching from the leader
    truncated_fully: bool = False
    steps: list[TruncationStep] = field(default_factory=list)

    @property
    def rounds(self) -> int:
        return sum(1 for s in self.steps if s.truncate_to is not None)


def leader_view(log_start_offset: int, log_end_offset: int, cache: LeaderEpochFileCache,
                leader_epoch: int | None) -> LogView:
    """The leader's log once it leads at ``leader_epoch``: Partition.makeLeader assigns the epoch at its
    log end offset (``maybeAssignEpochStartOffset``)."""
    led = cache.copy()
    if leader_epoch is not None and leader_epoch >= 0:
        led.assign(leader_epoch, log_end_offset)
    return LogView(log_start_offset, log_end_offset, led)


def plan_truncation(follower: LogView, leader: LogView) -> TruncationPlan:
    """The truncation the follower's fetcher performs against ``leader`` (see the module docstring)."""
    cache = follower.cache.copy()
    log_start, leo = follower.log_start_offset, follower.log_end_offset
    plan = TruncationPlan(leo, leo)
    fetch_offset = leo

    def truncate(offset: int, fully: bool = False) -> None:
        nonlocal leo, log_start
        if fully or offset < log_start:
            # UnifiedLog.truncateFullyAndStartAt: every segment and epoch entry goes.
            log_start = leo = offset
            cache.truncate_from_end(0)
            plan.truncated_fully = True
            return
        if offset >= leo:
            return   # UnifiedLog.truncateTo: no effect at or past the log end
        leo = offset
        cache.truncate_from_end(offset)

    for _ in range(MAX_ROUNDS):
        fetch_epoch = cache.latest_epoch
        if fetch_epoch is None:
            # No epoch (an empty cache): ReplicaManager.initialFetchOffset is the high watermark and the
            # Truncating state truncates there (truncateToHighWatermark), then fetches without epochs.
            hw = follower.high_watermark if follower.high_watermark is not None else leo
            target = min(hw, leo) if not plan.steps else leo
            plan.steps.append(TruncationStep(fetch_offset, None, None, None, target if target < leo else None,
                                             "no leader epoch: truncates to its high watermark"))
            truncate(target)
            fetch_offset = leo
            break
        epoch, end = leader.cache.end_offset_for(fetch_epoch, leader.log_end_offset)
        if end == UNDEFINED_EPOCH_OFFSET or epoch == UNDEFINED_EPOCH or fetch_offset < leader.log_start_offset:
            _out_of_range(plan, fetch_offset, fetch_epoch, leader, leo, truncate)
            fetch_offset = plan.fetch_offset
            if plan.steps[-1].truncate_to is None or plan.truncated_fully:
                break
            continue
        if not (epoch < fetch_epoch or end < fetch_offset):
            plan.steps.append(TruncationStep(fetch_offset, fetch_epoch, epoch, end, None,
                                             "epochs agree: fetching"))
            break
        # Diverging epoch: AbstractFetcherThread.getOffsetTruncationState.
        follower_epoch, follower_end = cache.end_offset_for(epoch, leo)
        if follower_epoch == UNDEFINED_EPOCH:
            target = min(end, leo)
            why = f"no epoch at or below the leader's {epoch}: truncate to the leader's end offset"
        elif follower_epoch != epoch:
            target = min(follower_end, leo)
            why = (f"leader answered epoch {epoch}, unknown here: truncate to the end of epoch {follower_epoch} "
                   f"and ask again")
        else:
            target = min(follower_end, end, leo)
            why = f"epoch {epoch} ends at {end} on the leader, at {follower_end} here"
        plan.steps.append(TruncationStep(fetch_offset, fetch_epoch, epoch, end, target, why))
        if target >= leo and cache.latest_epoch == fetch_epoch:
            break   # nothing changed: the leader's answer is satisfied
        truncate(target)
        fetch_offset = leo
    plan.truncate_to = leo
    plan.fetch_offset = fetch_offset
    return plan


def _out_of_range(plan: TruncationPlan, fetch_offset: int, fetch_epoch: int, leader: LogView, leo: int,
                  truncate: Callable[..., None]) -> None:
    """AbstractFetcherThread.fetchOffsetAndTruncate after OFFSET_OUT_OF_RANGE."""
    if leader.log_end_offset < leo:
        target = leader.log_end_offset
        plan.steps.append(TruncationStep(fetch_offset, fetch_epoch, None, None, target,
                                         "offset out of range: truncate to the leader's log end offset"))
        truncate(target)
        plan.fetch_offset = target
    elif leader.log_start_offset > leo:
        target = leader.log_start_offset
        plan.steps.append(TruncationStep(fetch_offset, fetch_epoch, None, None, target,
                                         "offset out of range: truncate fully and start at the leader's "
                                         "log start offset"))
        truncate(target, True)   # truncateFullyAndStartAt
        plan.fetch_offset = target
    else:
        plan.steps.append(TruncationStep(fetch_offset, fetch_epoch, None, None, None,
                                         "offset out of range: keeps its log and fetches again"))
        plan.fetch_offset = leo
