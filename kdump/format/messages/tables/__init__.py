"""Registries over the schema tables: which schema belongs to which record type / api key."""

from __future__ import annotations

from kdump.format.messages.schema import MessageSchema
from kdump.format.messages.tables import (
    control,
    group_coordinator as gc,
    metadata_a,
    metadata_b,
    remote_log,
    share_group as sg,
    share_state,
    transaction_log,
)

KeyValue = tuple[MessageSchema, MessageSchema]

# GroupCoordinatorRecordSerde: record type (the key's leading int16) → key / value schemas.
GROUP_COORDINATOR: dict[int, KeyValue] = {
    0: (gc.OFFSET_COMMIT_KEY, gc.OFFSET_COMMIT_VALUE),
    1: (gc.OFFSET_COMMIT_KEY, gc.OFFSET_COMMIT_VALUE),
    2: (gc.GROUP_METADATA_KEY, gc.GROUP_METADATA_VALUE),
    3: (gc.CONSUMER_GROUP_METADATA_KEY, gc.CONSUMER_GROUP_METADATA_VALUE),
    4: (gc.CONSUMER_GROUP_PARTITION_METADATA_KEY, gc.CONSUMER_GROUP_PARTITION_METADATA_VALUE),
    5: (gc.CONSUMER_GROUP_MEMBER_METADATA_KEY, gc.CONSUMER_GROUP_MEMBER_METADATA_VALUE),
    6: (gc.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY, gc.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
    7: (gc.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY, gc.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
    8: (gc.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY, gc.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    9: (sg.SHARE_GROUP_PARTITION_METADATA_KEY, sg.SHARE_GROUP_PARTITION_METADATA_VALUE),
    10: (sg.SHARE_GROUP_MEMBER_METADATA_KEY, sg.SHARE_GROUP_MEMBER_METADATA_VALUE),
    11: (sg.SHARE_GROUP_METADATA_KEY, sg.SHARE_GROUP_METADATA_VALUE),
    12: (sg.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY, sg.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
    13: (sg.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY, sg.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
    14: (sg.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY, sg.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    15: (sg.SHARE_GROUP_STATE_PARTITION_METADATA_KEY, sg.SHARE_GROUP_STATE_PARTITION_METADATA_VALUE),
}

CONSUMER_PROTOCOL_SUBSCRIPTION = gc.CONSUMER_PROTOCOL_SUBSCRIPTION
CONSUMER_PROTOCOL_ASSIGNMENT = gc.CONSUMER_PROTOCOL_ASSIGNMENT

# ShareCoordinatorRecordSerde.
SHARE_STATE: dict[int, KeyValue] = {
    0: (share_state.SHARE_SNAPSHOT_KEY, share_state.SHARE_SNAPSHOT_VALUE),
    1: (share_state.SHARE_UPDATE_KEY, share_state.SHARE_UPDATE_VALUE),
}

# TransactionCoordinatorRecordSerde (4.0+); before 4.0 the key's int16 was the key version.
TRANSACTION_LOG: dict[int, KeyValue] = {
    0: (transaction_log.TRANSACTION_LOG_KEY, transaction_log.TRANSACTION_LOG_VALUE),
}


def _by_api_key(*modules: object) -> dict[int, MessageSchema]:
    found: dict[int, MessageSchema] = {}
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, MessageSchema) and value.api_key is not None:
                found[value.api_key] = value
    return dict(sorted(found.items()))


# MetadataRecordType: api key → schema (the frame's second uvarint).
METADATA: dict[int, MessageSchema] = _by_api_key(metadata_a, metadata_b)

# RemoteLogMetadataSerde: api key → schema.
REMOTE_LOG: dict[int, MessageSchema] = _by_api_key(remote_log)

# ControlRecordType id → value schema for the KRaft control records.
CONTROL: dict[int, MessageSchema] = _by_api_key(control)


def key_version(schema: MessageSchema, record_type: int) -> int:
    """The version a coordinator key struct is read at.

    Up to Kafka 3.9 the key schemas were versioned by record type (``ConsumerGroupMetadataKey`` is
    "version 3"); from 4.0 every key is version 0 and carries its record type as ``apiKey``.
    """
    return record_type if record_type in schema.valid_versions else 0
