"""A ``__share_group_state`` partition replayed as its share coordinator loads it: each share-partition's start
offset (SPSO) and its in-flight state batches (KIP-932).

Kafka 4.4.0 share-coordinator/src/main/java/org/apache/kafka/coordinator/share/ShareCoordinatorShard.java:
``replay`` of a ShareSnapshot (type 0) replaces the share-partition's state; a ShareUpdate (type 1) is merged
into it (``merge``: its start offset when it sets one, i.e. not -1, and its state batches combined with the
current ones, those below the start offset dropped: ``combineStateBatches``). A tombstone deletes the state.
The share-partition is keyed by topic id, which kdump names through the topic's ``partition.metadata``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kdump.broker.coordinator_loader import CoordinatorRecord, CoordinatorShard
from kdump.format.messages import tables
from kdump.format.messages.protocol import MessageData, Uuid

ShareKey = tuple[str, str, int]     # group, topic id, partition
# RecordState ids persisted in a state batch (Kafka 4.4.0 server-common/.../share/persister/... and
# core/src/main/java/kafka/server/share/SharePartition.java RecordState): AVAILABLE 0, ACKNOWLEDGED 2, ARCHIVED 4.
AVAILABLE, ACKNOWLEDGED, ARCHIVED = 0, 2, 4


@dataclass(frozen=True, slots=True)
class StateBatch:
    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


@dataclass
class SharePartitionState:
    start_offset: int
    leader_epoch: int
    batches: tuple[StateBatch, ...] = ()
    record_offset: int = 0

    def delivered(self) -> list[tuple[int, int]]:
        """The [first, last] offsets of the batches in a terminal state (ACKNOWLEDGED, ARCHIVED): never delivered
        again."""
        return [(b.first_offset, b.last_offset) for b in self.batches if b.delivery_state in (ACKNOWLEDGED, ARCHIVED)]

    def available_in_flight(self) -> int:
        """Records at or above the start offset that the share-partition will deliver again (AVAILABLE)."""
        return sum(b.last_offset - max(b.first_offset, self.start_offset) + 1 for b in self.batches
                   if b.delivery_state == AVAILABLE and b.last_offset >= self.start_offset)


def _batches(entries: Iterable[object]) -> tuple[StateBatch, ...]:
    return tuple(StateBatch(e["FirstOffset"], e["LastOffset"], e["DeliveryState"], e["DeliveryCount"])  # type: ignore[index]
                 for e in entries)


def _combine(current: tuple[StateBatch, ...], new: tuple[StateBatch, ...], start: int) -> tuple[StateBatch, ...]:
    """The new batches win where they overlap the current ones; nothing below ``start`` is kept."""
    kept: list[StateBatch] = []
    for batch in current:
        for piece in _minus(batch, new):
            kept.append(piece)
    merged = sorted(kept + list(new), key=lambda b: b.first_offset)
    return tuple(b for b in merged if b.last_offset >= start)


def _minus(batch: StateBatch, others: tuple[StateBatch, ...]) -> list[StateBatch]:
    pieces = [batch]
    for other in others:
        out = []
        for p in pieces:
            if other.last_offset < p.first_offset or other.first_offset > p.last_offset:
                out.append(p)
                continue
            if p.first_offset < other.first_offset:
                out.append(StateBatch(p.first_offset, other.first_offset - 1, p.delivery_state, p.delivery_count))
            if p.last_offset > other.last_offset:
                out.append(StateBatch(other.last_offset + 1, p.last_offset, p.delivery_state, p.delivery_count))
        pieces = out
    return pieces


@dataclass
class ShareCoordinatorShard(CoordinatorShard):
    release: tuple[int, int]
    states: dict[ShareKey, SharePartitionState] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.registry = tables.share_state(self.release)

    def apply(self, record: CoordinatorRecord, record_type: int, key: MessageData, value: MessageData | None) -> None:
        topic_id = key["TopicId"]
        where_key: ShareKey = (key["GroupId"], str(topic_id) if isinstance(topic_id, Uuid) else topic_id,
                               key["Partition"])
        if value is None:
            self.states.pop(where_key, None)
            return
        batches = _batches(value["StateBatches"] or ())
        current = self.states.get(where_key)
        if record_type == 0 or current is None:
            self.states[where_key] = SharePartitionState(value["StartOffset"], value["LeaderEpoch"], batches,
                                                         record.offset)
            return
        start = current.start_offset if value["StartOffset"] == -1 else value["StartOffset"]
        self.states[where_key] = SharePartitionState(start, value["LeaderEpoch"],
                                                     _combine(current.batches, batches, start), record.offset)


__all__ = ["ShareCoordinatorShard", "SharePartitionState", "StateBatch"]
