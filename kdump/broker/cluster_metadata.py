"""The partitions a KRaft cluster's metadata describes, replayed from a copy of ``__cluster_metadata``.

The newest ``<offset>-<epoch>.checkpoint`` snapshot is loaded, then the log's records from the
snapshot's end offset on, as a broker's metadata loader does (MetadataLoader, then
metadata/src/main/java/org/apache/kafka/image/TopicsDelta.java). A PartitionChangeRecord merges into
the partition as PartitionRegistration.merge does (Kafka 3.9.0 to 4.3.0): a field left null keeps its
value, a leader other than -2 (NO_LEADER_CHANGE) bumps the leader epoch, every record bumps the
partition epoch. ClearElrRecord empties the ELR and last known ELR (ReplicationControlManager.replay).
Topic configs (ConfigRecord, resource type 2) say which topics are compacted.

What the controller does with a partition once its brokers return is kdump.broker.election.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kdump.errors import FormatError, KdumpError
from kdump.format.messages import definitions, tables
from kdump.format.messages.protocol import Reader, read_message
from kdump.format.messages.schema import MessageSchema
from kdump.log.batches import LogBatches
from kdump.log.locations import join, list_dir, open_any
from kdump.log.logdir import PartitionDir

NO_LEADER = -1
NO_LEADER_CHANGE = -2
TOPIC_RESOURCE = 2
_SNAPSHOT = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")


@dataclass
class PartitionRegistration:
    replicas: list[int]
    isr: list[int]
    leader: int
    leader_epoch: int
    partition_epoch: int
    elr: list[int] | None = None
    last_known_elr: list[int] | None = None
    directories: list[str] = field(default_factory=list)


@dataclass
class ClusterMetadata:
    """What the replayed metadata says: topics by id and name, partitions, topic configs."""

    source: str
    end_offset: int = 0
    topic_names: dict[str, str] = field(default_factory=dict)            # topic id -> name
    partitions: dict[tuple[str, int], PartitionRegistration] = field(default_factory=dict)  # (topic id, p)
    configs: dict[str, dict[str, str]] = field(default_factory=dict)     # topic name -> config
    problems: list[str] = field(default_factory=list)

    def topic_id(self, name: str) -> str | None:
        for topic_id, topic in self.topic_names.items():
            if topic == name:
                return topic_id
        return None

    def partition(self, name: str, number: int) -> tuple[str, PartitionRegistration] | None:
        topic_id = self.topic_id(name)
        if topic_id is None:
            return None
        registration = self.partitions.get((topic_id, number))
        return None if registration is None else (topic_id, registration)

    def compacted(self, name: str) -> bool:
        return "compact" in self.configs.get(name, {}).get("cleanup.policy", "")


def _ints(value: Any) -> list[int] | None:
    return None if value is None else [int(v) for v in value]


class _Replay:
    def __init__(self, metadata: ClusterMetadata, registry: dict[int, MessageSchema]) -> None:
        self.metadata = metadata
        self.registry = registry

    def record(self, value: bytes | None) -> None:
        if value is None:
            return
        reader = Reader(value)
        reader.uvarint()  # frame version
        api_key, version = reader.uvarint(), reader.uvarint()
        schema = self.registry.get(api_key)
        if schema is None:
            return
        handler = getattr(self, "_" + schema.name, None)
        if handler is not None:
            handler(read_message(schema, reader, version))

    def _TopicRecord(self, data: Any) -> None:
        self.metadata.topic_names[str(data["TopicId"])] = data["Name"]

    def _RemoveTopicRecord(self, data: Any) -> None:
        topic_id = str(data["TopicId"])
        name = self.metadata.topic_names.pop(topic_id, None)
        for key in [k for k in self.metadata.partitions if k[0] == topic_id]:
            del self.metadata.partitions[key]
        if name is not None:
            self.metadata.configs.pop(name, None)

    def _PartitionRecord(self, data: Any) -> None:
        self.metadata.partitions[(str(data["TopicId"]), data["PartitionId"])] = PartitionRegistration(
            _ints(data["Replicas"]) or [], _ints(data["Isr"]) or [], data["Leader"], data["LeaderEpoch"],
            data["PartitionEpoch"], _ints(data["EligibleLeaderReplicas"]), _ints(data["LastKnownElr"]),
            [str(d) for d in data["Directories"] or ()])

    def _PartitionChangeRecord(self, data: Any) -> None:
        """PartitionRegistration.merge."""
        part = self.metadata.partitions.get((str(data["TopicId"]), data["PartitionId"]))
        if part is None:
            return
        if data["Replicas"] is not None:
            part.replicas = _ints(data["Replicas"]) or []
        if data["Isr"] is not None:
            part.isr = _ints(data["Isr"]) or []
        if data["Leader"] != NO_LEADER_CHANGE:
            part.leader = data["Leader"]
            part.leader_epoch += 1
        if data["EligibleLeaderReplicas"] is not None:
            part.elr = _ints(data["EligibleLeaderReplicas"])
        if data["LastKnownElr"] is not None:
            part.last_known_elr = _ints(data["LastKnownElr"])
        if data["Directories"] is not None:
            part.directories = [str(d) for d in data["Directories"]]
        part.partition_epoch += 1

    def _ClearElrRecord(self, data: Any) -> None:
        name = data["TopicName"]
        topic_id = self.metadata.topic_id(name) if name else None
        for (tid, _), part in self.metadata.partitions.items():
            if topic_id is None or tid == topic_id:
                part.elr, part.last_known_elr = [], []

    def _ConfigRecord(self, data: Any) -> None:
        if data["ResourceType"] != TOPIC_RESOURCE:
            return
        config = self.metadata.configs.setdefault(data["ResourceName"], {})
        if data["Value"] is None:
            config.pop(data["Name"], None)
        else:
            config[data["Name"]] = data["Value"]


def _replay_file(replay: _Replay, path: str, from_offset: int) -> int:
    """Apply the data records at or after ``from_offset``; returns one past the last offset read."""
    end = from_offset
    with open_any(path) as file:
        batches = LogBatches(file, check_crc=False)
        for batch in batches:
            end = max(end, batch.last_offset + 1)
            if batch.is_control or batch.last_offset < from_offset:
                continue
            for record in batches.records(batch):
                if record.offset >= from_offset:
                    value = record.value
                    replay.record(value if isinstance(value, bytes | None) else bytes(value))
    return end


def replay_metadata(pdir: PartitionDir, release: tuple[int, int] | None = None) -> ClusterMetadata:
    """Replay one copy of ``__cluster_metadata-0``: its newest snapshot, then its log."""
    metadata = ClusterMetadata(pdir.path)
    registry = tables.metadata(release or definitions.releases()[-1])
    replay = _Replay(metadata, registry)
    snapshots = sorted((int(m.group(1)), join(pdir.path, name)) for name, _ in list_dir(pdir.path)
                       if (m := _SNAPSHOT.match(name)))
    start = 0
    try:
        if snapshots:
            start, snapshot = snapshots[-1]
            _replay_file(replay, snapshot, 0)
        end = start
        for seg in pdir.segments:
            if seg.log is not None:
                end = max(end, _replay_file(replay, seg.log, start))
        metadata.end_offset = end
    except (KdumpError, FormatError, ValueError, IndexError) as err:
        metadata.problems.append(f"{pdir.path}: the metadata log could not be replayed to its end: {err}")
    return metadata


def replay_all(dirs: Iterable[PartitionDir], release: tuple[int, int] | None = None) -> list[ClusterMetadata]:
    """Every copy replayed, the one that reaches furthest first (controllers' and brokers' copies lag
    each other; copies of several clusters may be given together)."""
    return sorted((replay_metadata(pdir, release) for pdir in dirs), key=lambda m: -m.end_offset)


def metadata_for(copies: list[ClusterMetadata], topic: str) -> ClusterMetadata | None:
    """The furthest copy that knows ``topic``, else the furthest copy (which then lacks the topic)."""
    return next((m for m in copies if m.topic_id(topic) is not None), copies[0] if copies else None)


