"""JSON Lines for dumps (``--json``): one object per line, schema in docs/json-output.md.

Bytes (keys, values, header keys and values) are standard base64 so nothing is lost; every field
of the text output is present under a stable camelCase name.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from kdump.format.batch import Batch
from kdump.format.control import parse_control_record
from kdump.format.records import Record

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
