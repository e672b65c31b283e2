"""A group coordinator's committed offsets, replayed from ``__consumer_offsets`` as the coordinator loads them.

Kafka 4.4.0 group-coordinator/src/main/java/org/apache/kafka/coordinator/group/OffsetMetadataManager.java:
``replay`` of an OffsetCommit record puts the offset of (group, topic, partition) (the latest record wins), a
tombstone removes it and the pending transactional offsets of that key; a record written in a transaction
(producer id >= 0) is pending for its producer until ``replayEndTransactionMarker``: COMMIT moves each pending
offset in unless the committed one was written later (``recordOffset``), ABORT drops them. Kafka 3.9.2
core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala ``doLoadGroupsAndOffsets`` does the
same with ``pendingOffsets`` and ``CommitRecordMetadataAndOffset.olderThan``.

Memory: one entry per live key, one per key still pending or aborted; never per record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kdump.format.messages.protocol import MessageData


def field_or(data: MessageData, name: str, default: Any) -> Any:
    """A field an older release's definition may lack (``default`` then)."""
    try:
        return data[name]
    except KeyError:
        return default

OffsetKey = tuple[str, str, int]      # group, topic, partition


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    """One committed offset as the coordinator holds it (OffsetAndMetadata.fromRecord)."""

    offset: int
    leader_epoch: int | None          # None: the commit carried none (-1 on disk, or a v0-v2 value)
    metadata: str | None
    commit_timestamp: int
    expire_timestamp: int | None      # only a v1 value sets it (OffsetCommit v2-v4's retention time)
    record_offset: int                # where in __consumer_offsets the commit lies
    producer_id: int = -1             # the transaction that wrote it; -1 for a plain commit


def offset_from_record(record_offset: int, producer_id: int, value: MessageData) -> OffsetAndMetadata:
    epoch, expire = field_or(value, "leaderEpoch", -1), field_or(value, "expireTimestamp", -1)
    return OffsetAndMetadata(value["offset"], None if epoch is None or epoch < 0 else epoch, value["metadata"],
                             value["commitTimestamp"], None if expire is None or expire < 0 else expire,
                             record_offset, producer_id)


@dataclass
class OffsetMetadataManager:
    offsets: dict[OffsetKey, OffsetAndMetadata] = field(default_factory=dict)
    pending: dict[int, dict[OffsetKey, OffsetAndMetadata]] = field(default_factory=dict)   # by producer id
    aborted: dict[OffsetKey, OffsetAndMetadata] = field(default_factory=dict)              # the latest per key

    def replay(self, record_offset: int, producer_id: int, key: MessageData, value: MessageData | None) -> None:
        where: OffsetKey = (key["group"], key["topic"], key["partition"])
        if value is not None:
            commit = offset_from_record(record_offset, producer_id, value)
            if producer_id < 0:
                self.offsets[where] = commit
            else:
                self.pending.setdefault(producer_id, {})[where] = commit
            return
        self.offsets.pop(where, None)
        for pending in self.pending.values():
            pending.pop(where, None)

    def replay_end_transaction_marker(self, producer_id: int, committed: bool) -> None:
        pending = self.pending.pop(producer_id, None)
        if not pending:
            return
        for where, commit in pending.items():
            if committed:
                current = self.offsets.get(where)
                if current is None or current.record_offset < commit.record_offset:
                    self.offsets[where] = commit
            else:
                self.aborted[where] = commit

    def open_offsets(self) -> dict[OffsetKey, OffsetAndMetadata]:
        """The transactional offsets whose transaction has no marker in the log yet (the latest per key)."""
        out: dict[OffsetKey, OffsetAndMetadata] = {}
        for pending in self.pending.values():
            for where, commit in pending.items():
                if where not in out or out[where].record_offset < commit.record_offset:
                    out[where] = commit
        return out


__all__ = ["OffsetAndMetadata", "OffsetKey", "OffsetMetadataManager", "field_or", "offset_from_record"]
