"""JSON Lines for dumps (``--json``): one object per line, schema in docs/json-output.md.

Bytes (keys, values, header keys and values) are standard base64 so nothing is lost; every field
of the text output is present under a stable camelCase name. A batch is one line and each of its
records another, so no line grows with the number of records in a batch; a value too large to hold
(a ``LazyValue``) is base64-encoded piece by piece as it is read.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from kdump.format.batch import Batch
from kdump.format.control import parse_control_record
from kdump.format.record_stream import LazyValue
from kdump.format.records import Record
from kdump.render.log_text import RecordTextOptions, decoded_texts

JSON_SCHEMA_VERSION = 2

_RECORDS_PER_WRITE = 256  # lines joined into one write: one write per line halves the speed


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


# One encoder for the run: json.dumps with options builds a new one per call, which shows with a
# line per record.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def dumps(obj: dict[str, Any]) -> str:
    return _ENCODER.encode(obj)


def file_object(path: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": "file", "schemaVersion": JSON_SCHEMA_VERSION, "path": path, "fileType": kind, **fields}


def batch_object(path: str, batch: Batch, error: str | None = None) -> dict[str, Any]:
    """The batch's own fields; ``error`` says why its records could not be decoded."""
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
    if error is not None:
        obj["error"] = error
    return obj


def records_error_object(path: str, batch: Batch, error: str) -> dict[str, Any]:
    """The records of a batch whose line (and first records) are already out failed further on."""
    return {"type": "recordsError", "path": path, "batchPosition": batch.position, "error": error}


def record_object(batch: Batch, record: Record, contents: RecordTextOptions | None = None) -> dict[str, Any]:
    """One record; with ``contents.print_contents`` also the decoders' text beside the base64."""
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
    elif contents is not None and contents.print_contents:
        obj["keyDecoded"], obj["valueDecoded"] = decoded_texts(record, contents)
    return obj


def batch_chunks(path: str, batch: Batch, groups: Iterable[Sequence[Record]] | None,
                 contents: RecordTextOptions | None = None,
                 feed: Callable[[Sequence[Record]], None] | None = None) -> Iterator[str]:
    """The batch line, then one line per record, as newline-terminated strings of a few hundred lines.

    ``groups`` are the batch's records a group at a time (kdump.format.records.iter_records), so a
    batch of millions of records is written as it is decoded; ``feed`` sees each group. The first
    group is rendered before anything is yielded, so a record that cannot be rendered (a malformed
    control record, a decoder that rejects the bytes) in a small batch fails before anything of the
    batch is written."""
    head = dumps(batch_object(path, batch))
    if groups is None:
        yield head + "\n"
        return
    # ``type``, ``path`` and the batch's ``batchPosition``, encoded once per batch
    prefix = f'{{"type":"record","path":{_ENCODER.encode(path)},"batchPosition":{batch.position},'
    encode = _ENCODER.encode
    lines: list[str] = [head]
    for records in groups:
        if feed is not None:
            feed(records)
        for record in records:
            if isinstance(record.value, LazyValue):
                lines.append("")
                yield "\n".join(lines)
                lines = []
                yield from _lazy_record_line(prefix, batch, record, contents)
                continue
            lines.append(prefix + encode(record_object(batch, record, contents))[1:])
            if len(lines) >= _RECORDS_PER_WRITE:
                lines.append("")
                yield "\n".join(lines)
                lines = []
    if lines:
        lines.append("")
        yield "\n".join(lines)


_PLACEHOLDER = "\u0000lazy\u0000"


def _lazy_record_line(prefix: str, batch: Batch, record: Record, contents: RecordTextOptions | None) -> Iterator[str]:
    """A record's line with its large value base64-encoded piece by piece, as it is read again."""
    value = record.value
    assert isinstance(value, LazyValue)
    obj = record_object(batch, record._replace(value=b""), contents)
    obj["valueSize"] = len(value)
    obj["value"] = _PLACEHOLDER
    before, after = (prefix + _ENCODER.encode(obj)[1:]).split(_ENCODER.encode(_PLACEHOLDER)[1:-1], 1)
    yield before
    carry = b""
    for piece in value.chunks():
        data = carry + piece
        cut = len(data) - len(data) % 3  # base64 of whole 3-byte groups concatenates cleanly
        carry = data[cut:]
        yield base64.b64encode(data[:cut]).decode("ascii")
    yield base64.b64encode(carry).decode("ascii") + after + "\n"
