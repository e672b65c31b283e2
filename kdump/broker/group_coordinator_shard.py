"""A ``__consumer_offsets`` partition replayed as its group coordinator loads it: the groups and their offsets.

Kafka 4.4.0 group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupCoordinatorShard.java
``replay`` dispatches each record by type: offset commits (0, 1) to the OffsetMetadataManager
(kdump.broker.offset_metadata_manager), the rest to GroupMetadataManager.replay: a classic group's
GroupMetadata (2), a consumer-protocol group's records (3-8, 16; KIP-848), a share group's (10-15; KIP-932),
a streams group's (17-23; KIP-1071). A tombstone of a group's metadata record deletes the group. Kafka 3.9.2
(core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala) loads the types of its release the
same way. kdump keeps of each group what decides its offsets' fate: its protocol, whether it has members,
the topics they subscribe to (OffsetMetadataManager.cleanupExpiredOffsets keeps the offsets of subscribed
topics) and when a classic group became empty (ClassicGroup.currentStateTimestamp, KIP-211).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kdump.broker.coordinator_loader import CoordinatorRecord, CoordinatorShard
from kdump.broker.offset_metadata_manager import OffsetMetadataManager, field_or
from kdump.errors import FormatError
from kdump.format.messages import tables
from kdump.format.messages.protocol import MessageData, Reader, read_message

# The record types of each group type's own metadata record (its presence makes the group, its tombstone
# deletes it), and the member records whose subscriptions keep offsets alive.
GROUP_METADATA_TYPES = {2: "classic", 3: "consumer", 11: "share", 17: "streams"}
CONSUMER_MEMBER, CONSUMER_REGEX = 5, 16
SHARE_MEMBER, STREAMS_MEMBER = 10, 19


@dataclass
class GroupState:
    """What kdump keeps of one group."""

    group: str
    protocol: str                          # classic, consumer, share, streams
    protocol_type: str | None = None       # a classic group's ("consumer", "connect", ...; None: a simple consumer)
    members: dict[str, frozenset[str]] = field(default_factory=dict)   # member id -> subscribed topic names
    regex_topics: dict[str, frozenset[str]] = field(default_factory=dict)
    current_state_timestamp: int | None = None
    generation: int | None = None

    @property
    def empty(self) -> bool:
        return not self.members

    def subscribed(self, topic: str) -> bool:
        return any(topic in topics for topics in self.members.values()) or \
            any(topic in topics for topics in self.regex_topics.values())


@dataclass
class GroupCoordinatorShard(CoordinatorShard):
    release: tuple[int, int]
    offsets: OffsetMetadataManager = field(default_factory=OffsetMetadataManager)
    groups: dict[str, GroupState] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.registry = tables.group_coordinator(self.release)

    def end_transaction(self, producer_id: int, committed: bool) -> None:
        self.offsets.replay_end_transaction_marker(producer_id, committed)

    def apply(self, record: CoordinatorRecord, record_type: int, key: MessageData, value: MessageData | None) -> None:
        if record_type in (0, 1):
            self.offsets.replay(record.offset, record.producer_id, key, value)
        elif record_type in GROUP_METADATA_TYPES:
            self._group_metadata(record_type, key, value)
        elif record_type in (CONSUMER_MEMBER, SHARE_MEMBER, STREAMS_MEMBER):
            self._member(record_type, key, value)
        elif record_type == CONSUMER_REGEX:
            group = self._group(key["GroupId"], "consumer")
            topics = frozenset(value["Topics"] or ()) if value is not None else None
            if topics is None:
                group.regex_topics.pop(key["RegularExpression"], None)
            else:
                group.regex_topics[key["RegularExpression"]] = topics

    def _group(self, name: str, protocol: str) -> GroupState:
        group = self.groups.get(name)
        if group is None or group.protocol != protocol:
            group = self.groups[name] = GroupState(name, protocol)
        return group

    def _group_metadata(self, record_type: int, key: MessageData, value: MessageData | None) -> None:
        name = key["group"] if record_type == 2 else key["GroupId"]
        protocol = GROUP_METADATA_TYPES[record_type]
        if value is None:
            if name in self.groups and self.groups[name].protocol == protocol:
                del self.groups[name]
            return
        group = self._group(name, protocol)
        if record_type != 2:
            return
        # ClassicGroup.fromRecord: the members of the record, the group Empty without any.
        group.protocol_type = value["protocolType"] or None
        group.generation = value["generation"]
        stamp = field_or(value, "currentStateTimestamp", -1)
        group.current_state_timestamp = None if stamp is None or stamp < 0 else stamp
        group.members = {m["memberId"]: self._classic_topics(group.protocol_type, m["subscription"])
                         for m in value["members"] or ()}

    def _classic_topics(self, protocol_type: str | None, subscription: bytes | None) -> frozenset[str]:
        """A classic consumer member's subscribed topics (ConsumerProtocol's Subscription), else none."""
        if protocol_type != "consumer" or not subscription or len(subscription) < 2:
            return frozenset()
        schema = tables.consumer_protocol(self.release)[0]
        try:
            data = read_message(schema, Reader(subscription, 2), int.from_bytes(subscription[:2], "big"))
        except (FormatError, ValueError, IndexError):
            return frozenset()
        return frozenset(data["Topics"] or ())

    def _member(self, record_type: int, key: MessageData, value: MessageData | None) -> None:
        protocol = {CONSUMER_MEMBER: "consumer", SHARE_MEMBER: "share", STREAMS_MEMBER: "streams"}[record_type]
        group = self._group(key["GroupId"], protocol)
        if value is None:
            group.members.pop(key["MemberId"], None)
            return
        topics = field_or(value, "SubscribedTopicNames", None)
        group.members[key["MemberId"]] = frozenset(topics or ())


__all__ = ["GROUP_METADATA_TYPES", "GroupCoordinatorShard", "GroupState"]
