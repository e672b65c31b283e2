"""A replica's leader epoch cache: Kafka's LeaderEpochFileCache, without the file and the locks.

Follows storage/src/main/java/org/apache/kafka/storage/internals/epoch/LeaderEpochFileCache.java
(Kafka 3.9.0 to 4.3.0): ``assign`` (and maybeTruncateNonMonotonicEntries), ``truncateFromEnd``,
``truncateFromStart`` and ``endOffsetFor``, the answer a leader gives a follower's
OffsetsForLeaderEpoch request or a fetch's last fetched epoch. Entries are ``(epoch, startOffset)``
with both increasing, as the checkpoint file holds them (kdump.format.checkpoint).
"""

from __future__ import annotations

from collections.abc import Iterable

from kdump.format.checkpoint import EpochEntry

UNDEFINED_EPOCH = -1          # RecordBatch.NO_PARTITION_LEADER_EPOCH / EpochEntry's UNDEFINED_EPOCH
UNDEFINED_EPOCH_OFFSET = -1   # UNDEFINED_EPOCH_OFFSET


class LeaderEpochFileCache:
    """The epochs of one replica; a plain list (a few entries per leader change)."""

    def __init__(self, entries: Iterable[EpochEntry] = ()) -> None:
        self._entries: list[EpochEntry] = []
        for entry in entries:
            self.assign(entry.epoch, entry.start_offset)

    def copy(self) -> LeaderEpochFileCache:
        clone = LeaderEpochFileCache()
        clone._entries = list(self._entries)
        return clone

    @property
    def entries(self) -> list[EpochEntry]:
        return list(self._entries)

    @property
    def latest_epoch(self) -> int | None:
        return self._entries[-1].epoch if self._entries else None

    def assign(self, epoch: int, start_offset: int) -> bool:
        """LeaderEpochFileCache.assign: append unless the latest entry has this epoch at a lower or
        equal start offset; first drop entries whose epoch or start offset is not below the new one's
        (maybeTruncateNonMonotonicEntries). Negative values are ignored (Kafka throws)."""
        if epoch < 0 or start_offset < 0:
            return False
        latest = self._entries[-1] if self._entries else None
        if latest is not None and not (epoch != latest.epoch or start_offset < latest.start_offset):
            return False   # isUpdateNeeded
        while self._entries and (self._entries[-1].epoch >= epoch or self._entries[-1].start_offset >= start_offset):
            self._entries.pop()
        self._entries.append(EpochEntry(epoch, start_offset))
        return True

    def truncate_from_end(self, end_offset: int) -> list[EpochEntry]:
        """Remove the entries starting at or after ``end_offset`` (truncateFromEnd); returns them."""
        removed: list[EpochEntry] = []
        if end_offset >= 0:
            while self._entries and self._entries[-1].start_offset >= end_offset:
                removed.insert(0, self._entries.pop())
        return removed

    def truncate_from_start(self, start_offset: int) -> list[EpochEntry]:
        """Remove the entries starting at or before ``start_offset``, keeping the last of them moved to
        ``start_offset`` (truncateFromStart is exclusive: an entry at ``start_offset`` stays)."""
        removed = [e for e in self._entries if e.start_offset <= start_offset]
        if removed:
            kept = [e for e in self._entries if e.start_offset > start_offset]
            self._entries = [EpochEntry(removed[-1].epoch, start_offset), *kept]
        return removed

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """endOffsetFor: (epoch, end offset) of the largest epoch at or below ``requested_epoch``; the
        end offset is the start of the next higher epoch, or the log end for the latest epoch.
        (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET) where the cache cannot answer."""
        if requested_epoch == UNDEFINED_EPOCH:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if self._entries and self._entries[-1].epoch == requested_epoch:
            return requested_epoch, log_end_offset
        higher = next((e for e in self._entries if e.epoch > requested_epoch), None)
        if higher is None:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        floor = None
        for entry in self._entries:
            if entry.epoch <= requested_epoch:
                floor = entry
        if floor is None:
            # Older than every epoch kept (retention removed them): the first kept epoch's start.
            return requested_epoch, higher.start_offset
        return floor.epoch, higher.start_offset
