"""Frame-versioned records (KRaft metadata, ``__remote_log_metadata``): AbstractApiMessageSerde's envelope.

Kafka 4.3.0: server-common/src/main/java/org/apache/kafka/server/common/serialization/
AbstractApiMessageSerde.java (uvarint frame version, api key and version, then the message), and the state
ids of storage-api's RemoteLogSegmentState / RemotePartitionDeleteState.
"""

from __future__ import annotations

import struct

from kdump.errors import FormatError
from kdump.format.messages.protocol import MessageData, Reader, read_message
from kdump.format.messages.schema import MessageSchema

SEGMENT_STATES = ("COPY_SEGMENT_STARTED", "COPY_SEGMENT_FINISHED", "DELETE_SEGMENT_STARTED",
                  "DELETE_SEGMENT_FINISHED")
PARTITION_DELETE_STATES = ("DELETE_PARTITION_MARKED", "DELETE_PARTITION_STARTED", "DELETE_PARTITION_FINISHED")
_UNDECODABLE = (FormatError, ValueError, IndexError, struct.error, UnicodeError)


def read_framed(value: bytes, registry: dict[int, MessageSchema],
                frame_version: int = 1) -> tuple[MessageSchema, int, MessageData]:
    """AbstractApiMessageSerde.read: uvarint frame version, api key, version, struct, no trailing bytes.

    ``frame_version`` is the one the release reads (Dialect.metadata_frame_version)."""
    reader = Reader(value)
    frame = _framed_short(reader, "frame version")
    if frame == 0 and frame_version != 0:
        raise FormatError("Could not deserialize metadata record with frame version 0. Note that upgrades from "
                          "the preview release of KRaft in 2.8 to newer versions are not supported.")
    if frame != frame_version:
        # 2.8 (the KRaft preview) reads frame version 0 only, later releases 1 only.
        raise FormatError(f"Could not deserialize metadata record due to unknown frame version {frame}"
                          f"(only frame version {frame_version} is supported)")
    api_key = _framed_short(reader, "type")
    version = _framed_short(reader, "version")
    schema = registry.get(api_key)
    if schema is None:
        raise FormatError(f"org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}")
    if version not in schema.valid_versions:
        # The generated read() throws "Can't read version N of ...", which the serde wraps as below.
        raise FormatError(f"Failed to deserialize record with type {api_key}")
    try:
        data = read_message(schema, reader, version)
    except _UNDECODABLE as exc:
        raise FormatError(f"Failed to deserialize record with type {api_key}") from exc
    if reader.remaining() > 0:
        raise FormatError(f"Found {reader.remaining()} byte(s) of garbage after {api_key}")
    return schema, version, data


def _framed_short(reader: Reader, entity: str) -> int:
    try:
        value = reader.uvarint()
    except FormatError as exc:
        raise FormatError(f"Error while reading {entity}") from exc
    if value > 0x7FFF:
        raise FormatError(f"Value for {entity} was too large.")
    return value
