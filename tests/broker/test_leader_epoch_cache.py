"""LeaderEpochFileCache's rules: each case and its expected values are those of Kafka's own
core/src/test/scala/unit/kafka/server/epoch/LeaderEpochFileCacheTest.scala (3.9/4.x); test names follow it."""

from __future__ import annotations

from kdump.broker.leader_epoch_cache import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochFileCache
from kdump.format.checkpoint import EpochEntry

UNDEFINED = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


def cache_of(*pairs: tuple[int, int]) -> LeaderEpochFileCache:
    cache = LeaderEpochFileCache()
    for epoch, offset in pairs:
        cache.assign(epoch, offset)
    return cache


def test_should_return_log_end_offset_if_latest_epoch_requested() -> None:
    assert cache_of((2, 10), (3, 11)).end_offset_for(3, 12) == (3, 12)
    assert cache_of((2, 10)).end_offset_for(2, 11) == (2, 11)


def test_undefined_epoch_and_empty_cache() -> None:
    assert cache_of((2, 11), (3, 12)).end_offset_for(UNDEFINED_EPOCH, 0) == UNDEFINED
    assert cache_of().end_offset_for(0, 0) == UNDEFINED


def test_should_return_first_epoch_if_requested_epoch_less_than_first_epoch() -> None:
    assert cache_of((5, 11), (6, 12), (7, 13)).end_offset_for(4, 0) == (4, 11)


def test_should_truncate_if_matching_epoch_but_earlier_starting_offset() -> None:
    cache = cache_of((5, 11), (6, 12), (7, 13), (7, 12))
    assert cache.end_offset_for(5, 0) == (5, 12)
    assert cache.end_offset_for(6, 0) == (5, 12)


def test_should_get_first_offset_of_subsequent_epoch_when_offset_requested_for_previous_epoch() -> None:
    cache = cache_of((1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16))
    assert cache.end_offset_for(2, 17) == (2, 15)


def test_should_return_next_available_epoch_if_there_is_no_exact_epoch_for_the_one_requested() -> None:
    cache = cache_of((0, 10), (2, 13), (4, 17))
    assert cache.end_offset_for(1, 0) == (0, 13)
    assert cache.end_offset_for(2, 0) == (2, 17)
    assert cache.end_offset_for(3, 0) == (2, 17)


def test_should_not_update_epoch_and_start_offset_if_it_did_not_change() -> None:
    assert cache_of((2, 6), (2, 7)).entries == [EpochEntry(2, 6)]


def test_should_return_invalid_offset_if_epoch_is_requested_which_is_not_currently_tracked() -> None:
    assert cache_of((2, 100)).end_offset_for(3, 100) == UNDEFINED


def test_should_update_saved_offset_when_offset_to_clear_to_is_between_epochs() -> None:
    cache = cache_of((2, 6), (3, 8), (4, 11))
    cache.truncate_from_start(9)
    assert cache.entries == [EpochEntry(3, 9), EpochEntry(4, 11)]


def test_should_drop_entries_between_epoch_boundary_when_removing_newest() -> None:
    cache = cache_of((2, 6), (3, 8), (4, 11))
    cache.truncate_from_end(9)
    assert cache.latest_epoch == 3
    assert cache.entries == [EpochEntry(2, 6), EpochEntry(3, 8)]
