"""Where a consumer starts on a partition when its group next starts: kafka-clients' rules, applied to the
partition after restart (kdump.broker.restart). A prediction, named as one.

Kafka 4.4.0 clients/src/main/java/org/apache/kafka/clients/consumer/internals/ (3.9.2 alike):
- ``ConsumerCoordinator.refreshCommittedOffsetsIfNeeded`` (``CommitRequestManager`` for the consumer protocol)
  seeks each partition to its committed offset with the commit's leader epoch, ``SubscriptionState.seekUnvalidated``;
  a partition without a commit needs a reset (``SubscriptionState.requestOffsetReset`` with the default policy).
- ``OffsetFetcher`` / ``OffsetsRequestManager``: a reset by ``auto.offset.reset`` asks ListOffsets for
  EARLIEST (the log start) or LATEST (the high watermark, or the last stable offset for read_committed:
  ``ListOffsetsRequest`` isolation level, ``UnifiedLog.fetchOffsetByTimestamp``); ``none`` throws
  ``NoOffsetForPartitionException`` (``SubscriptionState.resetInitialPositionIfNeeded``,
  ``hasDefaultOffsetResetPolicy``).
- ``OffsetFetcher.validatePositionsOnMetadataChange`` / ``SubscriptionState.maybeCompleteValidation`` (KIP-320): a
  position with a leader epoch is checked with OffsetsForLeaderEpoch; when the leader's end offset for that
  epoch is below the position, a consumer with a reset policy moves to that end offset ("Truncation detected
  ... resetting offset to the first offset known to diverge"); with ``none`` it throws
  ``LogTruncationException``. An undefined answer (no such epoch) resets by the policy, or throws with ``none``.
- ``FetchCollector.handleInitializeErrors``: a fetch answered OFFSET_OUT_OF_RANGE (position below the log start or
  above the log end, ``UnifiedLog.read``) resets by the policy, or throws ``OffsetOutOfRangeException`` with none.
- A commit that ``offsets.retention.minutes`` removed is no commit at all: reset by the policy, or
  ``NoOffsetForPartitionException`` with none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kdump.broker.restart import PartitionAfterRestart

POLICIES = ("latest", "earliest", "none")
ISOLATIONS = ("read_uncommitted", "read_committed")
UNDEFINED_EPOCH = -1


@dataclass(frozen=True, slots=True)
class Fate:
    policy: str
    kind: str                  # resume, reset-below-log-start, truncation-detected, out-of-range-reset, expired,
    #                            no-commit, share-start
    next_offset: int | None    # where the consumer fetches next; None when it raises
    error: str | None          # the exception class the consumer raises, else None
    skipped: int = 0
    reread: int = 0
    lost_consumed: int = 0

    @property
    def resumes(self) -> bool:
        return self.kind in ("resume", "share-start") and not (self.skipped or self.reread or self.lost_consumed)


def end_offset(after: PartitionAfterRestart, isolation: str) -> int:
    """The end a consumer sees: ListOffsets LATEST and the fetch limit (HW, or LSO for read_committed)."""
    return after.last_stable_offset if isolation == "read_committed" else after.high_watermark


def _reset(after: PartitionAfterRestart, policy: str, isolation: str) -> int | None:
    if policy == "earliest":
        return after.log_start_offset
    if policy == "latest":
        return end_offset(after, isolation)
    return None


def _counts(committed: int, consumed_end: int, start: int) -> tuple[int, int, int]:
    """(skipped, reread, lostConsumed) for a consumer that read everything below ``committed``, of which what
    lies below ``consumed_end`` still exists, and now starts at ``start``."""
    lost = max(0, committed - consumed_end)
    kept = min(committed, consumed_end)
    return max(0, start - kept), max(0, kept - start), lost


def fate(after: PartitionAfterRestart, committed: int | None, leader_epoch: int | None, policy: str,
         isolation: str = "read_uncommitted", expired: bool = False) -> Fate:
    """The consumer's start on the partition (see the module docstring for each rule's class)."""
    if committed is None or expired:
        kind = "expired" if expired else "no-commit"
        start = _reset(after, policy, isolation)
        if start is None:
            return Fate(policy, kind, None, "NoOffsetForPartitionException")
        if committed is None:
            return Fate(policy, kind, start, None)
        return Fate(policy, kind, start, None, *_counts(committed, after.log_end_offset, start))
    position = committed
    consumed_end = after.log_end_offset
    if leader_epoch is not None:
        epoch, epoch_end = after.end_offset_for(leader_epoch)
        if epoch == UNDEFINED_EPOCH or epoch_end < 0:
            if policy == "none":
                return Fate(policy, "truncation-detected", None, "LogTruncationException",
                            lost_consumed=max(0, committed - after.log_end_offset))
            start = _reset(after, policy, isolation)
            assert start is not None
            return Fate(policy, "truncation-detected", start, None, *_counts(committed, after.log_end_offset, start))
        consumed_end = min(consumed_end, epoch_end)
        if epoch_end < committed:
            if policy == "none":
                return Fate(policy, "truncation-detected", None, "LogTruncationException",
                            lost_consumed=committed - epoch_end)
            position = epoch_end
    kind = "resume" if position == committed else "truncation-detected"
    if position < after.log_start_offset or position > after.log_end_offset:
        if position < after.log_start_offset:
            kind = "reset-below-log-start"
        elif kind != "truncation-detected":
            kind = "out-of-range-reset"
        start = _reset(after, policy, isolation)
        if start is None:
            return Fate(policy, kind, None, "OffsetOutOfRangeException",
                        lost_consumed=max(0, committed - consumed_end))
        return Fate(policy, kind, start, None, *_counts(committed, consumed_end, start))
    return Fate(policy, kind, position, None, *_counts(committed, consumed_end, position))


def share_fate(after: PartitionAfterRestart, start_offset: int, done: Sequence[tuple[int, int]] = ()) -> Fate:
    """Where a share-partition delivers from (Kafka 4.4.0 core/src/main/java/kafka/server/share/SharePartition.java
    ``maybeInitialize``: its start offset and the persisted state batches; records in a terminal state,
    ACKNOWLEDGED or ARCHIVED, are not delivered again): the first offset at or above the start offset (the log
    start if that lies above) that no terminal batch covers. ``done`` are those batches' [first, last] offsets.
    Checked against a real 4.4.0 share consumer (tests/kafka/test_real_groups_cluster.py): with offsets 0..9
    acknowledged and the persisted start offset still 0, a new share consumer is first given offset 10. The
    records between the start offset and the log start are counted as skipped."""
    next_offset = max(start_offset, after.log_start_offset)
    for first, last in sorted(done):
        if first <= next_offset <= last:
            next_offset = last + 1
    skipped = max(0, after.log_start_offset - start_offset)
    return Fate("share", "share-start", next_offset, None, skipped=skipped)


__all__ = ["ISOLATIONS", "POLICIES", "Fate", "end_offset", "fate", "share_fate"]
