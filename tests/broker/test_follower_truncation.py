"""The fetcher's truncation rounds (kdump.broker.follower_truncation) on epoch caches alone.

Each expected value is worked out by hand from Kafka's code, 3.9.0-4.3.0:
core/src/main/scala/kafka/cluster/Partition.scala ``readRecords`` (the leader's diverging-epoch and
out-of-range answers), core/src/main/scala/kafka/server/AbstractFetcherThread.scala
``getOffsetTruncationState`` and ``fetchOffsetAndTruncate``, and LeaderEpochFileCache.endOffsetFor."""

from __future__ import annotations

from kdump.broker.follower_truncation import LogView, leader_view, plan_truncation
from kdump.broker.leader_epoch_cache import LeaderEpochFileCache
from kdump.format.checkpoint import EpochEntry


def view(start: int, end: int, *epochs: tuple[int, int]) -> LogView:
    return LogView(start, end, LeaderEpochFileCache(EpochEntry(e, o) for e, o in epochs))


def test_in_sync_follower_truncates_nothing() -> None:
    leader = leader_view(0, 100, view(0, 100, (0, 0)).cache, 1)     # makeLeader assigns epoch 1 at 100
    plan = plan_truncation(view(0, 100, (0, 0)), leader)
    assert (plan.truncate_to, plan.rounds, plan.truncated_fully) == (100, 0, False)


def test_old_leader_after_unclean_election_truncates_to_the_end_of_its_epoch_on_the_new_leader() -> None:
    # Old leader wrote epoch 0 up to 125; the new leader has epoch 0 up to 100, then epoch 2.
    # Leader: endOffsetFor(0) = (0, 100): 100 < fetch offset 125, a diverging epoch. Follower:
    # endOffsetFor(0) is its latest epoch, (0, 125); same epoch, so min(125, 100, 125) = 100.
    leader = leader_view(0, 150, view(0, 150, (0, 0), (2, 100)).cache, 3)
    plan = plan_truncation(view(0, 125, (0, 0)), leader)
    assert (plan.truncate_to, plan.rounds) == (100, 1)


def test_kip_279_two_rounds() -> None:
    # Follower: e0@0 e2@50 e4@60, LEO 100. Leader: e0@0 e1@50 e3@80, LEO 120, leads at e5.
    # Round 1: leader endOffsetFor(4) = floor e3, next e5@120 -> (3, 120); 3 < 4 diverging. The
    #   follower does not know epoch 3: endOffsetFor(3) = (2, 60) -> truncate to 60, ask again.
    # Round 2: fetch epoch 2 at 60: leader endOffsetFor(2) = (1, 80); 1 < 2. Follower endOffsetFor(1)
    #   = (0, 50) -> truncate to 50. Round 3: epoch 0 at 50: leader (0, 50), agrees.
    leader = leader_view(0, 120, view(0, 120, (0, 0), (1, 50), (3, 80)).cache, 5)
    plan = plan_truncation(view(0, 100, (0, 0), (2, 50), (4, 60)), leader)
    assert [s.truncate_to for s in plan.steps] == [60, 50, None]
    assert (plan.truncate_to, plan.rounds) == (50, 2)


def test_follower_behind_the_leaders_log_start_truncates_fully() -> None:
    # fetchOffset 1000 < leader log start 1540: OFFSET_OUT_OF_RANGE; the leader's log end (3000) is
    # not below the follower's, and its log start is past the follower's log end: truncateFullyAndStartAt.
    leader = leader_view(1540, 3000, view(1540, 3000, (0, 1540)).cache, 0)
    plan = plan_truncation(view(0, 1000, (0, 0)), leader)
    assert (plan.truncate_to, plan.truncated_fully) == (1540, True)


def test_follower_ahead_of_a_leader_with_the_same_epoch_truncates_to_its_log_end() -> None:
    # A lagging replica was elected (unclean, same data): leader e0@0 to 80, leads at e2.
    # endOffsetFor(0) = (0, 80) < 100: diverging; follower endOffsetFor(0) = (0, 100) -> min(100, 80) = 80.
    leader = leader_view(0, 80, view(0, 80, (0, 0)).cache, 2)
    plan = plan_truncation(view(0, 100, (0, 0)), leader)
    assert plan.truncate_to == 80


def test_empty_follower_has_no_epoch_and_truncates_nothing() -> None:
    leader = leader_view(0, 80, view(0, 80, (0, 0)).cache, 1)
    assert plan_truncation(view(0, 0), leader).truncate_to == 0


def test_follower_without_epochs_truncates_to_its_high_watermark() -> None:
    # ReplicaManager.initialFetchOffset: no latest epoch -> the high watermark; Truncating state ->
    # AbstractFetcherThread.truncateToHighWatermark truncates there.
    leader = leader_view(0, 80, view(0, 80, (0, 0)).cache, 1)
    follower = LogView(0, 70, LeaderEpochFileCache(), high_watermark=50)
    assert plan_truncation(follower, leader).truncate_to == 50
