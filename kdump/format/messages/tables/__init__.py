"""Registries over the schema tables: which schema belongs to which record type / api key, per Kafka release.

The tables hold the newest shapes (Kafka 4.3.0, plus the few 4.4 fields noted there). A Kafka
release decodes only the record types its serde knows ("Unknown record type N" otherwise) and skips
tagged fields it does not know, so it never prints them; ``group_coordinator(release)`` and
``share_state(release)`` rebuild exactly what that release reads. The module constants
(``GROUP_COORDINATOR``, ``SHARE_STATE`` …) are the registries of ``LATEST``.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from kdump.format.messages.schema import MessageSchema, Versions, without
from kdump.format.messages.tables import (
    control,
    group_coordinator as gc,
    metadata_a,
    metadata_b,
    remote_log,
    share_group as sg,
    share_state as ss,
    streams_group as st,
    transaction_log,
)

KeyValue = tuple[MessageSchema, MessageSchema]
Release = tuple[int, int]

LATEST: Release = (4, 3)

# Fields a coordinator value gained after its record type first shipped: schema name →
# ((first release that reads them, field names), …). All are tagged except the two share-group
# ones of 4.1, which came with the incompatible 4.0 → 4.1 change of the share-group records.
_ADDED_IN: dict[str, tuple[tuple[Release, tuple[str, ...]], ...]] = {
    "OffsetCommitValue": (((4, 1), ("topicId",)),),
    "ConsumerGroupMetadataValue": (((4, 1), ("MetadataHash",)),),
    "ConsumerGroupTargetAssignmentMetadataValue": (((4, 3), ("AssignmentTimestamp",)),),
    "ConsumerGroupCurrentMemberAssignmentValue": (((4, 3), ("AssignmentEpochs",)),),
    "ShareGroupMetadataValue": (((4, 1), ("MetadataHash",)),),
    "ShareGroupStatePartitionMetadataValue": (((4, 1), ("InitializingTopics",)),),
    "ShareGroupTargetAssignmentMetadataValue": (((4, 3), ("AssignmentTimestamp",)),),
    "StreamsGroupMetadataValue": (((4, 2), ("ValidatedTopologyEpoch", "LastAssignmentConfigs")),
                                  ((4, 4), ("StoredDescriptionTopologyEpoch", "FailedDescriptionTopologyEpoch"))),
    "StreamsGroupCurrentMemberAssignmentValue": (((4, 2), ("AssignmentEpochs",)),),
    "StreamsGroupTargetAssignmentMetadataValue": (((4, 3), ("AssignmentTimestamp",)),),
    "ShareSnapshotValue": (((4, 2), ("DeliveryCompleteCount",)),),
    "ShareUpdateValue": (((4, 2), ("DeliveryCompleteCount",)),),
}


def as_of(schema: MessageSchema, release: Release) -> MessageSchema:
    """``schema`` as ``release`` knows it: without the fields added in later releases."""
    later = [name for since, names in _ADDED_IN.get(schema.name, ()) if release < since for name in names]
    return without(schema, *later) if later else schema


def _pairs(release: Release, *pairs: KeyValue) -> dict[int, KeyValue]:
    out: dict[int, KeyValue] = {}
    for key, value in pairs:
        assert key.api_key is not None
        out[key.api_key] = (key, as_of(value, release))
    return out


@lru_cache(maxsize=None)
def group_coordinator(release: Release = LATEST) -> dict[int, KeyValue]:
    """GroupCoordinatorRecordSerde of ``release``: record type (the key's leading int16) → key / value.

    3.8-3.9: types 0-8 (0 and 1 both OffsetCommit). 4.0: adds 9-15 (share groups, preview) and 16
    (regular expressions). 4.1+ (generated CoordinatorRecordType): 0 is LegacyOffsetCommit, 9 is
    gone, 17 and 19-23 are the streams group records (18 was never released).
    """
    consumer = [
        (gc.GROUP_METADATA_KEY, gc.GROUP_METADATA_VALUE),
        (gc.CONSUMER_GROUP_METADATA_KEY, gc.CONSUMER_GROUP_METADATA_VALUE),
        (gc.CONSUMER_GROUP_PARTITION_METADATA_KEY, gc.CONSUMER_GROUP_PARTITION_METADATA_VALUE),
        (gc.CONSUMER_GROUP_MEMBER_METADATA_KEY, gc.CONSUMER_GROUP_MEMBER_METADATA_VALUE),
        (gc.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY, gc.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
        (gc.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY, gc.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
        (gc.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY, gc.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    ]
    share = [
        (sg.SHARE_GROUP_MEMBER_METADATA_KEY, sg.SHARE_GROUP_MEMBER_METADATA_VALUE),
        (sg.SHARE_GROUP_METADATA_KEY, sg.SHARE_GROUP_METADATA_VALUE),
        (sg.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY, sg.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
        (sg.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY, sg.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
        (sg.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY, sg.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
        (sg.SHARE_GROUP_STATE_PARTITION_METADATA_KEY, sg.SHARE_GROUP_STATE_PARTITION_METADATA_VALUE),
    ]
    regex = (gc.CONSUMER_GROUP_REGULAR_EXPRESSION_KEY, gc.CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE)
    streams = [
        (st.STREAMS_GROUP_METADATA_KEY, st.STREAMS_GROUP_METADATA_VALUE),
        (st.STREAMS_GROUP_MEMBER_METADATA_KEY, st.STREAMS_GROUP_MEMBER_METADATA_VALUE),
        (st.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_KEY, st.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
        (st.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY, st.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
        (st.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY, st.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
        (st.STREAMS_GROUP_TOPOLOGY_KEY, st.STREAMS_GROUP_TOPOLOGY_VALUE),
    ]
    if release >= (4, 1):
        registry = _pairs(release, (gc.LEGACY_OFFSET_COMMIT_KEY, gc.LEGACY_OFFSET_COMMIT_VALUE),
                          (gc.OFFSET_COMMIT_KEY, gc.OFFSET_COMMIT_VALUE), *consumer, *share, regex, *streams)
    else:
        registry = _pairs(release, (gc.OFFSET_COMMIT_KEY, gc.OFFSET_COMMIT_VALUE), *consumer)
        registry[0] = registry[1]
        if release >= (4, 0):
            registry.update(_pairs(release, (sg.SHARE_GROUP_PARTITION_METADATA_KEY,
                                             sg.SHARE_GROUP_PARTITION_METADATA_VALUE), *share, regex))
    return dict(sorted(registry.items()))


@lru_cache(maxsize=None)
def share_state(release: Release = LATEST) -> dict[int, KeyValue]:
    """ShareCoordinatorRecordSerde of ``release`` (4.0 had the preview layout of both values)."""
    if release < (4, 1):
        return {0: (ss.SHARE_SNAPSHOT_KEY, ss.SHARE_SNAPSHOT_VALUE_V40),
                1: (ss.SHARE_UPDATE_KEY, ss.SHARE_UPDATE_VALUE_V40)}
    return _pairs(release, (ss.SHARE_SNAPSHOT_KEY, ss.SHARE_SNAPSHOT_VALUE),
                  (ss.SHARE_UPDATE_KEY, ss.SHARE_UPDATE_VALUE))


# TransactionCoordinatorRecordSerde (4.0+); before 4.0 the key's int16 was the key version.
TRANSACTION_LOG: dict[int, KeyValue] = {
    0: (transaction_log.TRANSACTION_LOG_KEY, transaction_log.TRANSACTION_LOG_VALUE),
}

GROUP_COORDINATOR: dict[int, KeyValue] = group_coordinator(LATEST)
SHARE_STATE: dict[int, KeyValue] = share_state(LATEST)

CONSUMER_PROTOCOL_SUBSCRIPTION = gc.CONSUMER_PROTOCOL_SUBSCRIPTION
CONSUMER_PROTOCOL_ASSIGNMENT = gc.CONSUMER_PROTOCOL_ASSIGNMENT


def _by_api_key(*modules: object) -> dict[int, MessageSchema]:
    found: dict[int, MessageSchema] = {}
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, MessageSchema) and value.api_key is not None:
                found[value.api_key] = value
    return dict(sorted(found.items()))


# MetadataRecordType: api key → schema (the frame's second uvarint), every type kdump knows.
METADATA: dict[int, MessageSchema] = _by_api_key(metadata_a, metadata_b)

# First release whose MetadataRecordType has the api key (older ones answer "Unknown metadata id").
_METADATA_SINCE: dict[int, Release] = {28: (4, 0), 29: (4, 4)}


# Versions a metadata record gained after it first shipped: api key → (release, highest version before it).
# Only the 4.x additions (CordonedLogDirs); versions added in 3.x releases are not capped (see the note
# in docs/internal-topic-schemas.md).
_METADATA_NEWER_VERSIONS: dict[int, tuple[Release, int]] = {0: ((4, 3), 3), 17: ((4, 3), 2)}


@lru_cache(maxsize=None)
def metadata(release: Release = LATEST) -> dict[int, MessageSchema]:
    """MetadataRecordType of ``release``: the api keys it knows, at the versions it can read."""
    known: dict[int, MessageSchema] = {}
    for key, schema in METADATA.items():
        if release < _METADATA_SINCE.get(key, (0, 0)):
            continue
        since, highest = _METADATA_NEWER_VERSIONS.get(key, ((0, 0), 0))
        if release < since:
            schema = replace(schema, valid_versions=Versions(schema.valid_versions.lo, highest))
        known[key] = schema
    return known


# RemoteLogMetadataSerde: api key → schema.
REMOTE_LOG: dict[int, MessageSchema] = _by_api_key(remote_log)

# ControlRecordType id → value schema for the KRaft control records.
CONTROL: dict[int, MessageSchema] = _by_api_key(control)


def key_version(schema: MessageSchema, record_type: int) -> int:
    """The version a coordinator key struct is read at.

    Up to Kafka 4.0 the key schemas were versioned by record type (``ConsumerGroupMetadataKey`` was
    "version 3"); from 4.1 every key is version 0 and carries its record type as ``apiKey``. Either
    way the key has the same fields (Kafka reads it at the record type, and its generated reader
    ignores the version when the fields exist in every valid version).
    """
    return record_type if record_type in schema.valid_versions else 0
