"""Decoders for Kafka's internal topics, as ``kafka-dump-log`` prints them.

Each decoder's ``decode(offset, key, value)`` returns ``(key_text, payload_text)``: the text after
``key: `` and after ``payload: ``, or ``None`` to leave that part out. ``kafka_version`` picks the
Kafka release being imitated: its message definitions (``tables``) and its texts (the ``Dialect``
properties of the internal-topic block, which say where each boundary lies).

A record without a key raises ``InvalidRecordError`` (Kafka's tool dies there); every other problem
becomes a "…, skipping." text, as in Kafka.
"""

from __future__ import annotations

import struct

from kdump.errors import FormatError, InvalidRecordError
from kdump.format.messages import tables
from kdump.format.messages.framed import PARTITION_DELETE_STATES, SEGMENT_STATES, read_framed
from kdump.format.messages.protocol import MessageData, Reader, read_message
from kdump.format.messages.schema import MessageSchema
from kdump.render.dialect import LATEST_RELEASE, Dialect, dialect_of
from kdump.render.kafka_json import Tree, dumps, quote, render, to_tree
from kdump.render.kafka_maps import kafka_map_order

Decoded = tuple[str | None, str | None]
Release = tuple[int, int]

TRANSACTION_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort",
                      "Dead", "PrepareEpochFence")
_UNDECODABLE = (FormatError, ValueError, IndexError, struct.error, UnicodeError)


def _read_short(buf: bytes, name: str) -> tuple[int, Reader]:
    if len(buf) < 2:
        raise FormatError(f"Could not read version from {name}'s buffer.")
    return struct.unpack_from(">h", buf)[0], Reader(buf, 2)


def _read_part(schema: MessageSchema, reader: Reader, version: int, name: str) -> MessageData:
    try:
        return read_message(schema, reader, version)
    except FormatError as exc:
        raise FormatError(f"Could not read record with version {version} from {name}'s buffer "
                          f"due to: {exc.reason}.") from exc


class CoordinatorDecoder:
    """The shared logic of Kafka's coordinator-record parsers (CoordinatorRecordSerde + JSON)."""

    legacy_missing_key = "offset topic decoder"

    def __init__(self, kafka_version: Release = LATEST_RELEASE) -> None:
        self.dialect = dialect_of(kafka_version)
        self.registry = self.registry_for(self.dialect)

    @staticmethod
    def registry_for(dialect: Dialect) -> dict[int, tables.KeyValue]:
        """Record type → key / value schemas as that Kafka release's serde knows them."""
        raise NotImplementedError

    def missing_key(self, offset: int) -> InvalidRecordError:
        how = "the specified decoder" if self.dialect.generic_missing_key_text else self.legacy_missing_key
        return InvalidRecordError(f"Failed to decode message at offset {offset} using {how} "
                                  "(message had a missing key)")

    def decode(self, offset: int, key: bytes | None, value: bytes | None) -> Decoded:
        if key is None:
            raise self.missing_key(offset)
        try:
            record_type, key_reader = _read_short(key, "key")
            if record_type not in self.registry:
                return f"Unknown record type {record_type} at offset {offset}, skipping.", None
            key_schema, value_schema = self.registry[record_type]
            key_data = _read_part(key_schema, key_reader, tables.key_version(key_schema, record_type), "key")
            if value is not None:
                value_version, value_reader = _read_short(value, "value")
                if self.dialect.rejects_unknown_record_version and value_version not in value_schema.valid_versions:
                    # CoordinatorRecordSerde's UnknownRecordVersionException (KAFKA-18672, 4.0+).
                    raise FormatError(f"Found an unknown record version {value_version} for {record_type} type")
                value_data = _read_part(value_schema, value_reader, value_version, "value")
        except _UNDECODABLE as exc:
            return f"Error at offset {offset}, skipping. {_message(exc)}", None
        key_text = dumps({"type": str(record_type), "data": to_tree(key_data)})
        if value is None:
            return key_text, "<DELETE>"
        return key_text, dumps({self.value_envelope(): str(value_version),
                                "data": self.value_tree(record_type, value_data)})

    def value_envelope(self) -> str:
        return "version"

    def value_tree(self, record_type: int, data: MessageData) -> Tree:
        return to_tree(data)


def _message(exc: BaseException) -> str:
    return exc.reason if isinstance(exc, FormatError) else str(exc)


class OffsetsDecoder(CoordinatorDecoder):
    """``--offsets-decoder``: ``__consumer_offsets`` (group coordinator) records."""

    @staticmethod
    def registry_for(dialect: Dialect) -> dict[int, tables.KeyValue]:
        return tables.group_coordinator(dialect.major_minor, dialect.group_record_types)

    def decode(self, offset: int, key: bytes | None, value: bytes | None) -> Decoded:
        if not self.dialect.offsets_json:
            return _legacy_offsets(offset, key, value, self.registry, self.dialect)
        return super().decode(offset, key, value)

    def value_tree(self, record_type: int, data: MessageData) -> Tree:
        tree = to_tree(data)
        if record_type == 2 and tree.get("protocolType") == "consumer" and isinstance(tree.get("members"), list):
            subscription, assignment = tables.consumer_protocol(self.dialect.major_minor)
            for member_node, member in zip(tree["members"], data["members"], strict=True):
                _expand(member_node, "subscription", member["subscription"], subscription)
                _expand(member_node, "assignment", member["assignment"], assignment)
        return tree


def _expand(node: dict[str, Tree], name: str, raw: bytes | None, schema: MessageSchema) -> None:
    """Replace a member's embedded-protocol bytes by their JSON; keep the base64 text on failure."""
    if name not in node or raw is None:
        return
    try:
        version, reader = _read_short(raw, name)
        node[name] = to_tree(read_message(schema, reader, version))
    except _UNDECODABLE:
        pass


def _legacy_offsets(offset: int, key: bytes | None, value: bytes | None,
                    registry: dict[int, tables.KeyValue], dialect: Dialect) -> Decoded:
    """Kafka 2.4-3.7 (GroupMetadataManager.formatRecordKeyAndValue); 2.2-2.3 (DumpLogSegments'
    own OffsetsMessageParser: ``offset::g:t:p``, ``{"metadata":"g"}``, tombstones print nothing).
    ``registry`` holds types 0-2."""
    before_24 = dialect.internal_topics_by_dump_tool
    if before_24 and value is None:
        return None, None
    if key is None:
        raise InvalidRecordError("Failed to decode message using offset topic decoder (message had a missing key)")
    record_type, reader = _read_short(key, "key")
    if record_type in registry:
        key_schema, value_schema = registry[record_type]
        k = read_message(key_schema, reader, tables.key_version(key_schema, record_type))
        if record_type == 2:
            key_text = ('{"metadata":' + quote(k["group"]) + "}" if before_24
                        else f"group_metadata::group={k['group']}")
        elif before_24:
            key_text = f"offset::{k['group']}:{k['topic']}:{k['partition']}"
        else:
            key_text = f"offset_commit::group={k['group']},partition={k['topic']}-{k['partition']}"
        if value is None:
            return key_text, "<DELETE>"
        version, vr = _read_short(value, "value")
        if before_24 and record_type == 2 and version > dialect.dump_tool_group_metadata_max_version:
            raise InvalidRecordError(f"Unknown group metadata version {version}")  # Kafka dies here
        v = read_message(value_schema, vr, version)
        if record_type == 2:
            return key_text, _legacy_group_text(v, tables.consumer_protocol(dialect.major_minor)[1], dialect)
        meta = v["metadata"]
        if before_24:
            return key_text, f"{v['offset']}:{meta}" if meta else str(v["offset"])
        return key_text, f"offset={v['offset']}" + (f",metadata={meta}" if meta else "")
    if before_24:
        raise InvalidRecordError("Failed to decode message using offset topic decoder (message had an invalid key)")
    return f"unknown::version={record_type}", None


def _hex(raw: bytes) -> str:
    return format(int.from_bytes(raw, "big"), "X") if raw else ""


def _legacy_group_text(group: MessageData, assignment_schema: MessageSchema, dialect: Dialect) -> str:
    protocol_type = group["protocolType"] or ""
    parts = []
    # GroupMetadata.allMemberMetadata (core/.../coordinator/group/GroupMetadata.scala, 2.2-3.7) is
    # `members.values.toList` of a mutable.HashMap keyed by member id: the members print in that map's
    # order (Scala 2.12's in the 2.x tools, 2.13's in 3.x), not in the record's.
    by_id = {member["memberId"]: member for member in group["members"]}
    for member_id in kafka_map_order(by_id, dialect.summary_map_order):
        member = by_id[member_id]
        if protocol_type == "consumer":
            version, reader = _read_short(member["assignment"], "assignment")
            a = read_message(assignment_schema, reader, version)
            partitions = ", ".join(f"{tp['topic']}-{p}" for tp in a["assignedPartitions"] for p in tp["partitions"])
            user = _hex(a["userData"] or b"")
            parts.append(f"{member['memberId']}=[{partitions}]" + (f":{user}" if user else ""))
        else:
            parts.append(f"{member['memberId']}={_hex(member['assignment'])}")
    assignment = "{" + ",".join(parts) + "}"
    protocol = group["protocol"]
    return ('{"protocolType":' + quote(protocol_type)
            + ',"protocol":' + ("null" if protocol is None else quote(protocol))
            + ',"generationId":' + str(group["generation"]) + ',"assignment":' + quote(assignment) + "}")


class TransactionLogDecoder(CoordinatorDecoder):
    """``--transaction-log-decoder``: ``__transaction_state`` records."""

    @staticmethod
    def registry_for(dialect: Dialect) -> dict[int, tables.KeyValue]:
        return tables.transaction_log(dialect.major_minor)

    def decode(self, offset: int, key: bytes | None, value: bytes | None) -> Decoded:
        if not self.dialect.transaction_log_json:
            return _legacy_transaction(offset, key, value, self.registry[0], self.dialect)
        return super().decode(offset, key, value)

    def value_tree(self, record_type: int, data: MessageData) -> Tree:
        tree = to_tree(data)
        status = tree.get("transactionStatus")
        if self.dialect.transaction_status_names and isinstance(status, int):
            # KAFKA-20712: the state's name, or the id as a JSON string when it has none.
            tree["transactionStatus"] = TRANSACTION_STATES[status] if 0 <= status < len(TRANSACTION_STATES) \
                else str(status)
        return tree


def _legacy_transaction(offset: int, key: bytes | None, value: bytes | None, schemas: tables.KeyValue,
                        dialect: Dialect) -> Decoded:
    """Kafka ≤ 4.0 (TransactionLog.formatRecordKeyAndValue)."""
    if key is None:
        # Kafka ≤ 4.0 dies with a NullPointerException here; kdump names the cause instead.
        raise InvalidRecordError(f"Failed to decode message at offset {offset} using transaction log decoder "
                                 "(message had a missing key)")
    key_version, reader = _read_short(key, "key")
    if key_version != 0:
        return f"unknown::version={key_version}", None
    key_schema, value_schema = schemas
    txn_id = read_message(key_schema, reader, 0)["transactionalId"]
    if dialect.internal_topics_by_dump_tool:  # DumpLogSegments' own TransactionLogMessageParser
        if value is None:
            raise InvalidRecordError(f"Kafka {dialect.label} dies with a NullPointerException on a tombstone "
                                     f"(offset {offset})")
        key_text = f"transactionalId={txn_id}"
    else:
        key_text = f"transaction_metadata::transactionalId={txn_id}"
    if value is None:
        return key_text, "<DELETE>"
    version, vr = _read_short(value, "value")
    if version not in value_schema.valid_versions:
        raise InvalidRecordError(f"Unknown version {version} from the transaction log message value")
    v = read_message(value_schema, vr, version)
    status = v["TransactionStatus"]
    state = TRANSACTION_STATES[status] if 0 <= status < len(TRANSACTION_STATES) else str(status)
    partitions: list[str] = []
    if status != 0:  # an Empty transaction's partitions are not loaded
        for entry in v["TransactionPartitions"] or []:
            for p in entry["PartitionIds"]:
                tp = f"{entry['Topic']}-{p}"
                if tp not in partitions:
                    partitions.append(tp)
    return key_text, (f"producerId:{v['ProducerId']},producerEpoch:{v['ProducerEpoch']},state={state},"
                      f"partitions={_partition_set(partitions, dialect)},"
                      f"txnLastUpdateTimestamp={v['TransactionLastUpdateTimestampMs']},"
                      f"txnTimeoutMs={v['TransactionTimeoutMs']}")


def _partition_set(partitions: list[str], dialect: Dialect) -> str:
    """Before 2.7 the partitions were a Scala Set (``Set(t-0, t-1)``); then a Java set (``[t-0,t-1]``)."""
    if dialect.transaction_partitions_scala_set:
        return f"Set({', '.join(partitions)})"
    return f"[{','.join(partitions)}]"


class ShareGroupStateDecoder(CoordinatorDecoder):
    """``--share-group-state-decoder``: ``__share_group_state`` records (ShareSnapshot, ShareUpdate)."""

    legacy_missing_key = "share group state topic decoder"

    @staticmethod
    def registry_for(dialect: Dialect) -> dict[int, tables.KeyValue]:
        return tables.share_state(dialect.share_state_release)

    def value_envelope(self) -> str:
        return self.dialect.share_state_envelope


# -- frame-versioned records: KRaft metadata and remote-log metadata ---------------------------------------


class ClusterMetadataDecoder:
    """``--cluster-metadata-decoder``: ``{"type":"TOPIC_RECORD","version":0,"data":{…}}``; no key."""

    def __init__(self, kafka_version: Release = LATEST_RELEASE) -> None:
        self.dialect = dialect_of(kafka_version)
        self.registry = tables.metadata(kafka_version)

    def decode(self, offset: int, key: bytes | None, value: bytes | None) -> Decoded:
        try:
            if value is None:
                raise FormatError("null")
            schema, version, data = read_framed(value, self.registry, self.dialect.metadata_frame_version)
            text = dumps({"type": schema.type_name, "version": version, "data": to_tree(data)})
        except _UNDECODABLE as exc:
            text = f"Error at {offset}, skipping. {_message(exc)}"
        return None, text


class RemoteLogMetadataDecoder:
    """``--remote-log-metadata-decoder``: the Java ``toString()`` of each remote-log metadata object."""

    def __init__(self, kafka_version: Release = LATEST_RELEASE) -> None:
        self.dialect = dialect_of(kafka_version)
        self.registry = tables.remote_log(self.dialect.remote_log_release)

    def decode(self, offset: int, key: bytes | None, value: bytes | None) -> Decoded:
        try:
            if value is None:
                raise FormatError("null")
            schema, _, data = read_framed(value, self.registry)
            text = remote_log_text(schema.api_key or 0, data, self.dialect)
        except _UNDECODABLE as exc:
            text = f"Error at offset {offset}, skipping. {_message(exc)}"
        return None, text


def _tip(entry: MessageData) -> str:
    return f"{entry['Id']}:{entry['Name']}-{entry['Partition']}"


def _segment_id(entry: MessageData) -> str:
    return f"RemoteLogSegmentId{{topicIdPartition={_tip(entry['TopicIdPartition'])}, id={entry['Id']}}}"


def _custom(raw: bytes | None) -> str:
    return "Optional.empty" if raw is None else f"Optional[CustomMetadata{{{len(raw)} bytes}}]"


def _state(names: tuple[str, ...], state_id: int) -> str:
    if not 0 <= state_id < len(names):
        raise FormatError("state can not be null")
    return names[state_id]


def _epochs(entries: list[MessageData]) -> str:
    if not entries:
        raise FormatError("segmentLeaderEpochs can not be null or empty")
    epochs = {e["LeaderEpoch"]: e["Offset"] for e in entries}
    return "{" + ", ".join(f"{k}={epochs[k]}" for k in sorted(epochs)) + "}"


def _txn_idx_empty(d: MessageData, dialect: Dialect) -> str:
    return f", txnIdxEmpty={'true' if d['TxnIndexEmpty'] else 'false'}" if dialect.remote_log_txn_idx_empty else ""


def remote_log_text(api_key: int, d: MessageData, dialect: Dialect) -> str:
    """The ``toString()`` of the object RemoteLogMetadataSerde builds from record ``d``."""
    if api_key == 0:
        return (f"RemoteLogSegmentMetadata{{remoteLogSegmentId={_segment_id(d['RemoteLogSegmentId'])}, "
                f"startOffset={d['StartOffset']}, endOffset={d['EndOffset']}, brokerId={d['BrokerId']}, "
                f"maxTimestampMs={d['MaxTimestampMs']}, eventTimestampMs={d['EventTimestampMs']}, "
                f"segmentLeaderEpochs={_epochs(d['SegmentLeaderEpochs'])}, "
                f"segmentSizeInBytes={d['SegmentSizeInBytes']}, customMetadata={_custom(d['CustomMetadata'])}, "
                f"state={_state(SEGMENT_STATES, d['RemoteLogSegmentState'])}{_txn_idx_empty(d, dialect)}}}")
    if api_key == 1:
        return (f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={_segment_id(d['RemoteLogSegmentId'])}, "
                f"customMetadata={_custom(d['CustomMetadata'])}, "
                f"state={_state(SEGMENT_STATES, d['RemoteLogSegmentState'])}, "
                f"eventTimestampMs={d['EventTimestampMs']}, brokerId={d['BrokerId']}}}")
    if api_key == 2:
        return (f"RemotePartitionDeleteMetadata{{topicPartition={_tip(d['TopicIdPartition'])}, "
                f"state={_state(PARTITION_DELETE_STATES, d['RemotePartitionDeleteState'])}, "
                f"eventTimestampMs={d['EventTimestampMs']}, brokerId={d['BrokerId']}}}")
    return (f"RemoteLogSegmentMetadataSnapshot{{segmentId={d['SegmentId']}, startOffset={d['StartOffset']}, "
            f"endOffset={d['EndOffset']}, maxTimestampMs={d['MaxTimestampMs']}, "
            f"segmentLeaderEpochs={_epochs(d['SegmentLeaderEpochs'])}, "
            f"segmentSizeInBytes={d['SegmentSizeInBytes']}, customMetadata={_custom(d['CustomMetadata'])}, "
            f"state={_state(SEGMENT_STATES, d['RemoteLogSegmentState'])}{_txn_idx_empty(d, dialect)}}}")


# -- KRaft control records ------------------------------------------------------------------------------

_CONTROL_LABELS = {3: " SnapshotHeader ", 4: " SnapshotFooter ", 5: " KRaftVersion ", 6: " KRaftVoters ",
                   2: " LeaderChange: "}


def control_record_text(control_type: int, value: bytes, kafka_version: Release = LATEST_RELEASE) -> str:
    """What follows the record metadata for a control record other than a transaction marker.

    The value of a KRaft control record (types 2-6) is read at version 0 (ControlRecordUtils) and
    printed with the record's own ``Version`` field as the JSON version, as the dump tool does. Before
    a type got its JSON printer (``Dialect.control_record_json``) the release printed
    ``controlType: NAME(id)``, the name its ControlRecordType had for the id.
    """
    dialect = dialect_of(kafka_version)
    if not dialect.control_record_json(control_type):
        return f" controlType: {dialect.control_type_name(control_type)}({control_type})"
    data = read_message(tables.control(kafka_version)[control_type], value, 0)
    data.version = data["Version"]
    return _CONTROL_LABELS[control_type] + render(data)


# The internal topic each decoder reads (``--decode-internal`` and directories pick it by partition).
TOPIC_DECODERS: dict[str, type[CoordinatorDecoder] | type[ClusterMetadataDecoder] | type[RemoteLogMetadataDecoder]] = {
    "__consumer_offsets": OffsetsDecoder,
    "__transaction_state": TransactionLogDecoder,
    "__cluster_metadata": ClusterMetadataDecoder,
    "__remote_log_metadata": RemoteLogMetadataDecoder,
    "__share_group_state": ShareGroupStateDecoder,
}
