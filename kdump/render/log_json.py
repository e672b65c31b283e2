"""JSON Lines for dumps (``--json``): one object per line, schema in docs/json-output.md.

Bytes (keys, values, header keys and values) are standard base64 so nothing is lost; every field
of the text output is present under a stable camelCase name.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from kdump.format.batch import Batch
from kdump.format.control import parse_control_record
from kdump.format.records import LazyValue, Record

JSON_SCHEMA_VERSION = 1


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def file_object(path: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": "file", "schemaVersion": JSON_SCHEMA_VERSION, "path": path, "fileType": kind, **fields}


def batch_object(path: str, batch: Batch, records: Sequence[Record] | None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "type": "batch",
        "path": path,
        "position": batch.position,
        "baseOffset": batch.base_offset,
        "lastOffset": batch.last_offset,
        "count": batch.records_count,
        "baseSequence": batch.base_sequence,
        "lastSequence": batch.last_sequence,
        "producerId": batch.producer_id,
        "producerEpoch": batch.producer_epoch,
        "partitionLeaderEpoch": batch.partition_leader_epoch,
        "isTransactional": batch.is_transactional,
        "isControl": batch.is_control,
        "deleteHorizonMs": batch.delete_horizon_ms,
        "timestampType": batch.timestamp_type.kafka_name,
        "maxTimestamp": batch.max_timestamp,
        "size": batch.size,
        "magic": batch.magic,
        "compressCodec": batch.codec.kafka_name,
        "crc": batch.crc,
        "isValid": batch.is_valid,
    }
    if records is not None:
        obj["records"] = [record_object(batch, r) for r in records]
    return obj


_BUFFERED = 1 << 20  # characters of a batch's line held before writing (so most lines come out whole)


def batch_text(path: str, batch: Batch, groups: Iterable[Sequence[Record]] | None,
               feed: Callable[[Sequence[Record]], None]) -> Iterator[str]:
    """``dumps(batch_object(...))`` and a newline, in pieces: a batch of millions of records, or
    with a value of gigabytes, is written as it is decoded. ``feed`` sees each group of records."""
    head = dumps(batch_object(path, batch, None))
    if groups is None:
        yield head + "\n"
        return
    parts = [head[:-1], ',"records":[']
    size = 0
    separator = ""
    for records in groups:
        feed(records)
        for record in records:
            if isinstance(record.value, LazyValue):
                parts.append(separator)
                yield "".join(parts)
                parts = []
                size = 0
                yield from _lazy_record_text(batch, record)
            else:
                text = separator + dumps(record_object(batch, record))
                parts.append(text)
                size += len(text)
            separator = ","
        if size >= _BUFFERED:
            yield "".join(parts)
            parts = []
            size = 0
    parts.append("]}\n")
    yield "".join(parts)


_PLACEHOLDER = "\u0000lazy\u0000"


def _lazy_record_text(batch: Batch, record: Record) -> Iterator[str]:
    """A record's JSON with its large value base64-encoded piece by piece, as it is read again."""
    value = record.value
    assert isinstance(value, LazyValue)
    obj = record_object(batch, record._replace(value=b""))
    obj["valueSize"] = len(value)
    obj["value"] = _PLACEHOLDER
    before, after = dumps(obj).split(dumps(_PLACEHOLDER)[1:-1], 1)
    yield before
    carry = b""
    for piece in value.chunks():
        data = carry + piece
        cut = len(data) - len(data) % 3  # base64 of whole 3-byte groups concatenates cleanly
        carry = data[cut:]
        yield base64.b64encode(data[:cut]).decode("ascii")
    yield base64.b64encode(carry).decode("ascii") + after


def record_object(batch: Batch, record: Record) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "offset": record.offset,
        "timestamp": record.timestamp,
        "keySize": -1 if record.key is None else len(record.key),
        "valueSize": -1 if record.value is None else len(record.value),
        "key": _b64(record.key),
        "value": _b64(record.value),
    }
    if batch.is_legacy:
        obj["isValid"] = record.legacy_valid
        obj["crc"] = record.legacy_crc
    else:
        obj["sequence"] = record.sequence
        obj["headers"] = [{"key": _b64(k), "value": _b64(v)} for k, v in record.headers]
    if batch.is_control:
        info = parse_control_record(record.key, record.value)
        obj["control"] = {"type": info.type_name, "typeId": info.type_id,
                          "coordinatorEpoch": info.coordinator_epoch}
    return obj
