"""The ``__remote_log_metadata`` topic replayed as the broker's remote log metadata manager replays it.

Follows Kafka 4.3.0, storage/src/main/java/org/apache/kafka/server/log/remote/metadata/storage/:
``RemotePartitionMetadataStore.java`` (one cache per topic-id partition; a partition whose deletion finished
is dropped) and ``RemoteLogMetadataCache.java`` (``addCopyInProgressSegment`` for a new
``RemoteLogSegmentMetadata``, ``updateRemoteLogSegmentMetadata`` for a ``RemoteLogSegmentMetadataUpdate``,
events whose transition ``RemoteLogSegmentState.isValidTransition`` refuses are dropped, a segment whose
delete finished leaves the cache). Records come from the topic's partitions in the log dir, in offset order
per partition: the manager's producer sends all the events of one user partition to one metadata partition
(``RemoteLogMetadataTopicPartitioner``), so their order is the order the broker applied them in.

Unlike the cache, the replay keeps segments whose delete finished (state DELETE_SEGMENT_FINISHED): kdump
reports files left behind for them. What the broker would have refused (an update for an unknown segment, a
transition it drops) is kept as ``Anomaly`` rather than raised.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from kdump.errors import FormatError, KdumpError
from kdump.format.checkpoint import uuid_to_string
from kdump.format.messages import tables
from kdump.format.messages.framed import PARTITION_DELETE_STATES, SEGMENT_STATES, read_framed
from kdump.format.messages.protocol import MessageData
from kdump.log.batches import LogBatches
from kdump.log.locations import join, list_dir, open_any
from kdump.log.logdir import PartitionDir, read_partition_dir

METADATA_TOPIC = "__remote_log_metadata"
RELEASE = (4, 3)   # the message definitions read (RemoteLogSegmentMetadataRecord etc., 4.3.0)
COPY_STARTED, COPY_FINISHED, DELETE_STARTED, DELETE_FINISHED = SEGMENT_STATES
_UNDECODABLE = (FormatError, ValueError, IndexError, struct.error, UnicodeError)


def valid_transition(source: str | None, target: str) -> bool:
    """RemoteLogSegmentState.isValidTransition (storage-api, 4.3.0)."""
    if source is None:
        return target == COPY_STARTED
    if source == target:
        return True   # self transitions are valid: retries and fail-overs repeat events
    return {COPY_STARTED: (COPY_FINISHED, DELETE_STARTED), COPY_FINISHED: (DELETE_STARTED,),
            DELETE_STARTED: (DELETE_FINISHED,)}.get(source, ()).__contains__(target)


@dataclass(frozen=True, slots=True)
class SegmentMetadata:
    """RemoteLogSegmentMetadata: what the broker recorded about one remote segment."""

    segment_id: str
    start_offset: int
    end_offset: int
    leader_epochs: tuple[tuple[int, int], ...]    # (epoch, start offset), ascending
    size: int                                     # segmentSizeInBytes: the .log's size
    max_timestamp: int
    broker_id: int
    state: str
    txn_index_empty: bool | None
    metadata_offset: int                          # where its last event lies in __remote_log_metadata


@dataclass(frozen=True, slots=True)
class Anomaly:
    """An event the broker's cache would have dropped or refused."""

    offset: int      # in __remote_log_metadata
    segment_id: str
    text: str


@dataclass
class PartitionMetadata:
    """One topic-id partition's remote segments, as replayed (``segments`` by id, insertion order)."""

    topic: str
    partition: int
    topic_id: str
    segments: dict[str, SegmentMetadata] = field(default_factory=dict)
    delete_state: str | None = None           # RemotePartitionDeleteState of the partition, if any
    anomalies: list[Anomaly] = field(default_factory=list)

    def ordered(self) -> list[SegmentMetadata]:
        return sorted(self.segments.values(), key=lambda s: (s.start_offset, s.end_offset, s.segment_id))


def _uuid(raw: object) -> str:
    return uuid_to_string(raw) if isinstance(raw, bytes) else str(raw)


class RemoteLogMetadataReplay:
    """Feed it (offset, value) of __remote_log_metadata records; ``partitions`` is what the broker knows."""

    def __init__(self) -> None:
        self.registry = tables.remote_log(RELEASE)
        self.partitions: dict[tuple[str, int, str], PartitionMetadata] = {}
        self.undecodable: list[tuple[int, str]] = []

    def _partition(self, tip: MessageData) -> PartitionMetadata:
        key = (str(tip["Name"]), int(tip["Partition"]), _uuid(tip["Id"]))
        if key not in self.partitions:
            self.partitions[key] = PartitionMetadata(*key)
        return self.partitions[key]

    def apply(self, offset: int, value: bytes | None) -> None:
        if value is None:
            return   # a tombstone: nothing the cache applies
        try:
            schema, _, data = read_framed(value, self.registry)
        except _UNDECODABLE as exc:
            self.undecodable.append((offset, str(exc)))
            return
        api_key = schema.api_key
        if api_key == 0:
            self._add_copy_in_progress(offset, data)
        elif api_key == 1:
            self._update(offset, data)
        elif api_key == 2:
            part = self._partition(data["TopicIdPartition"])
            part.delete_state = PARTITION_DELETE_STATES[data["RemotePartitionDeleteState"]]
        # api key 3 (RemoteLogSegmentMetadataSnapshot) only lives in the manager's local snapshot files

    def _add_copy_in_progress(self, offset: int, d: MessageData) -> None:
        seg_id = d["RemoteLogSegmentId"]
        part = self._partition(seg_id["TopicIdPartition"])
        segment_id = _uuid(seg_id["Id"])
        state = SEGMENT_STATES[d["RemoteLogSegmentState"]]
        existing = part.segments.get(segment_id)
        if state != COPY_STARTED or not valid_transition(existing.state if existing else None, state):
            part.anomalies.append(Anomaly(offset, segment_id, f"a new segment record in state {state} after "
                                          f"{existing.state if existing else 'none'} (the broker drops it)"))
            return
        epochs = tuple(sorted((e["LeaderEpoch"], e["Offset"]) for e in d["SegmentLeaderEpochs"]))
        part.segments[segment_id] = SegmentMetadata(
            segment_id, d["StartOffset"], d["EndOffset"], epochs, d["SegmentSizeInBytes"], d["MaxTimestampMs"],
            d["BrokerId"], state, d.values.get("TxnIndexEmpty"), offset)

    def _update(self, offset: int, d: MessageData) -> None:
        seg_id = d["RemoteLogSegmentId"]
        part = self._partition(seg_id["TopicIdPartition"])
        segment_id = _uuid(seg_id["Id"])
        state = SEGMENT_STATES[d["RemoteLogSegmentState"]]
        existing = part.segments.get(segment_id)
        if existing is None:
            part.anomalies.append(Anomaly(offset, segment_id, f"an update to {state} for a segment with no "
                                          "metadata (RemoteResourceNotFoundException)"))
            return
        if state == COPY_STARTED or not valid_transition(existing.state, state):
            part.anomalies.append(Anomaly(offset, segment_id, f"{existing.state} can not be transitioned to "
                                          f"{state} (the broker drops the event)"))
            return
        part.segments[segment_id] = replace(existing, state=state, broker_id=d["BrokerId"], metadata_offset=offset)


def metadata_records(partitions: Iterable[PartitionDir]) -> Iterator[tuple[int, bytes | None]]:
    """(offset, value) of every data record of the __remote_log_metadata partition dirs, in offset order."""
    for pdir in partitions:
        for seg in pdir.segments:
            if seg.log is None:
                continue
            with open_any(seg.log) as file:
                batches = LogBatches(file)
                for batch in batches:
                    if batch.is_control:
                        continue
                    for group in batches.iter_records(batch):
                        for record in group:
                            value = record.value
                            yield record.offset, value if value is None or isinstance(value, bytes) else bytes(value)


def replay(partitions: Iterable[PartitionDir]) -> RemoteLogMetadataReplay:
    """Replay the __remote_log_metadata partition dirs given (each in offset order)."""
    result = RemoteLogMetadataReplay()
    for offset, value in metadata_records(partitions):
        result.apply(offset, value)
    return result


def remote_log_starts(log_dir: str) -> dict[tuple[str, int], int]:
    """(topic, partition) -> the first offset in remote storage, for the partitions this log dir's
    ``__remote_log_metadata`` holds finished copies of (one broker's view: its own metadata partitions).
    Such a partition is remote-log-enabled: UnifiedLog keeps its log start offset below the local log.
    ``log_dir`` is a local path or a URI (kdump.log.locations); each call reads it again (callers keep the
    answer for as long as they hold the log dir's other files: kdump.broker.log_dir_checkpoints)."""
    try:
        names = [n for n, is_directory in list_dir(log_dir) if is_directory and n.startswith(METADATA_TOPIC + "-")]
    except KdumpError:
        return {}
    meta_dirs = [p for p in (read_partition_dir(join(log_dir, n)) for n in names) if p.state is None]
    try:
        parts = replay(meta_dirs).partitions if meta_dirs else {}
    except KdumpError:
        return {}
    return {(t, p): min(s.start_offset for s in part.segments.values() if s.state == COPY_FINISHED)
            for (t, p, _), part in parts.items() if any(s.state == COPY_FINISHED for s in part.segments.values())}
