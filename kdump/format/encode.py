"""Encoders for the structures ``batch`` and ``records`` decode: v2 batches, legacy messages.

The writer (``kdump.log.writer``) and the tests build every byte through here, so what kdump
writes and what it reads share one definition of each layout (DefaultRecordBatch.writeHeader,
DefaultRecord.writeTo, LegacyRecord.write in Kafka).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from kdump.errors import CodecError
from kdump.format.batch import (
    ATTR_CONTROL,
    ATTR_DELETE_HORIZON,
    ATTR_TIMESTAMP_TYPE,
    ATTR_TRANSACTIONAL,
    FRAMING,
    LOG_OVERHEAD,
    V2_ATTRIBUTES_OFFSET,
    V2_CRC_OFFSET,
    V2_HEADER,
    V2_HEADER_SIZE,
    TimestampType,
)
from kdump.format.codecs import Codec, compress
from kdump.format.crc import crc32, crc32c
from kdump.format.records import Header, Record
from kdump.format.varint import encode_varint, encode_varlong

_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")


def encode_record_v2(offset_delta: int, timestamp_delta: int, key: bytes | None, value: bytes | None,
                     headers: Sequence[Header] = ()) -> bytes:
    """One DefaultRecord, including its leading length varint."""
    parts = [b"\x00", encode_varlong(timestamp_delta), encode_varint(offset_delta), *_varint_sized(key),
             *_varint_sized(value), encode_varint(len(headers))]
    for hkey, hval in headers:
        parts += (encode_varint(len(hkey)), hkey, *_varint_sized(hval))
    body = b"".join(parts)
    return encode_varint(len(body)) + body


def _varint_sized(blob: bytes | None) -> tuple[bytes, ...]:
    """A varint length (-1 for null), then the bytes, apart: a large value is copied once, by the join."""
    return (encode_varint(-1),) if blob is None else (encode_varint(len(blob)), blob)


def encode_batch_v2(records: Sequence[Record], *, base_offset: int, codec: Codec = Codec.NONE,
                    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
                    log_append_time: int | None = None, producer_id: int = -1, producer_epoch: int = -1,
                    base_sequence: int = -1, partition_leader_epoch: int = -1,
                    is_transactional: bool = False, is_control: bool = False,
                    delete_horizon_ms: int | None = None, last_offset_delta: int | None = None,
                    compression_level: int | None = None) -> bytes:
    """A complete v2 record batch holding ``records`` (absolute offsets and timestamps).

    baseTimestamp is the first record's timestamp, as Kafka's MemoryRecordsBuilder writes it, or
    the delete horizon when one is given. For LogAppendTime the broker's append time goes in
    maxTimestamp. ``last_offset_delta`` may exceed the records' (compacted batches keep it).
    """
    if records:
        first_ts = records[0].timestamp
        max_ts = max(r.timestamp for r in records)
        last_delta = records[-1].offset - base_offset
    else:
        first_ts = max_ts = -1
        last_delta = 0
    if last_offset_delta is not None:
        last_delta = last_offset_delta
    base_ts = first_ts if delete_horizon_ms is None else delete_horizon_ms
    attributes = int(codec)
    if timestamp_type is TimestampType.LOG_APPEND_TIME:
        if log_append_time is None:
            raise ValueError("LogAppendTime batches need log_append_time")
        max_ts = log_append_time
        attributes |= ATTR_TIMESTAMP_TYPE
    body = b"".join(encode_record_v2(r.offset - base_offset, r.timestamp - base_ts, r.key, r.value, r.headers)
                    for r in records)
    body = compress(codec, body, magic=2, level=compression_level)  # Codec.NONE: the bytes as they are
    if is_transactional:
        attributes |= ATTR_TRANSACTIONAL
    if is_control:
        attributes |= ATTR_CONTROL
    if delete_horizon_ms is not None:
        attributes |= ATTR_DELETE_HORIZON
    header = bytearray(V2_HEADER.pack(base_offset, V2_HEADER_SIZE - LOG_OVERHEAD + len(body),
                                      partition_leader_epoch, 2, 0, attributes, last_delta, base_ts, max_ts,
                                      producer_id, producer_epoch, base_sequence, len(records)))
    crc = crc32c(bytes(header[V2_ATTRIBUTES_OFFSET:]) + body)
    struct.pack_into(">I", header, V2_CRC_OFFSET, crc)
    return bytes(header) + body


def encode_legacy_message(offset: int, key: bytes | None, value: bytes | None, *, magic: int,
                          timestamp: int = -1, timestamp_type: TimestampType = TimestampType.CREATE_TIME,
                          codec: Codec = Codec.NONE) -> bytes:
    """One v0/v1 message with its 12-byte framing (LegacyRecord.write)."""
    if magic not in (0, 1):
        raise ValueError(f"legacy messages have magic 0 or 1, not {magic}")
    attributes = int(codec)
    if magic == 1 and timestamp_type is TimestampType.LOG_APPEND_TIME:
        attributes |= ATTR_TIMESTAMP_TYPE
    parts = [bytes([magic, attributes])]
    if magic == 1:
        parts.append(_INT64.pack(timestamp))
    for blob in (key, value):
        parts += (_INT32.pack(-1),) if blob is None else (_INT32.pack(len(blob)), blob)
    covered = b"".join(parts)
    message = struct.pack(">I", crc32(covered)) + covered
    return FRAMING.pack(offset, len(message)) + message


def encode_legacy_wrapper(records: Sequence[Record], *, magic: int, codec: Codec,
                          timestamp_type: TimestampType = TimestampType.CREATE_TIME,
                          log_append_time: int | None = None) -> bytes:
    """A compressed v0/v1 wrapper message around ``records`` (absolute offsets).

    v0 inner offsets are absolute; v1 inner offsets are relative (0..n-1) and the wrapper carries
    the last absolute offset (Kafka >= 0.10). The v1 wrapper timestamp is the max inner timestamp,
    or the append time for LogAppendTime.
    """
    if codec is Codec.NONE:
        raise ValueError("a wrapper needs a compression codec")
    if codec is Codec.ZSTD:
        raise CodecError("zstd requires magic 2")
    if not records:
        raise ValueError("a legacy wrapper holds at least one message")
    inner = []
    for i, r in enumerate(records):
        inner_offset = r.offset if magic == 0 else i
        inner.append(encode_legacy_message(inner_offset, r.key, r.value, magic=magic, timestamp=r.timestamp))
    blob = compress(codec, b"".join(inner), magic=magic)
    if magic == 1 and timestamp_type is TimestampType.LOG_APPEND_TIME:
        if log_append_time is None:
            raise ValueError("LogAppendTime wrappers need log_append_time")
        wrapper_ts = log_append_time
    else:
        wrapper_ts = max(r.timestamp for r in records)
    return encode_legacy_message(records[-1].offset, None, blob, magic=magic, timestamp=wrapper_ts,
                                 timestamp_type=timestamp_type, codec=codec)

