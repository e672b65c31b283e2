"""Build message-protocol bytes from plain values, the mirror image of ``protocol.read_message``.

Used by the tests to build internal-topic records. Values are given as a mapping keyed by schema
name (``"ProducerId"``) or JSON name (``"producerId"``); nested structs as mappings, arrays as
lists, uuids as ``Uuid`` or their 22-character text. Missing fields take Kafka's defaults; tagged
fields are written only when they differ from their default, as Kafka's generated writers do.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

from kdump.format.messages.protocol import _INT, MessageData, Uuid, default_value, is_default
from kdump.format.messages.schema import Field, MessageSchema
from kdump.format.varint import encode_uvarint


def uvarint(value: int) -> bytes:
    """Unsigned varint of a Java int (negative values are taken as their 32-bit pattern)."""
    return encode_uvarint(value & 0xFFFFFFFF)


def write_message(schema: MessageSchema, values: Mapping[str, Any] | MessageData, version: int) -> bytes:
    out = bytearray()
    _write_struct(out, schema.fields, values, version, schema.flexible(version))
    return bytes(out)


def _lookup(values: Mapping[str, Any] | MessageData, f: Field, version: int) -> Any:
    if isinstance(values, MessageData):
        return values.values.get(f.name, default_value(f, version))
    if f.name in values:
        return values[f.name]
    if f.json_name in values:
        return values[f.json_name]
    return default_value(f, version)


def _write_struct(out: bytearray, fields: tuple[Field, ...], values: Any, version: int, flexible: bool) -> None:
    tagged: list[tuple[int, bytes]] = []
    for f in fields:
        if version not in f.versions:
            continue
        value = _lookup(values, f, version)
        if f.tagged_in(version):
            if not is_default(f, value, version):
                buf = bytearray()
                _write_value(buf, f, value, version, True, tagged=True)
                tagged.append((f.tag, bytes(buf)))  # type: ignore[arg-type]
            continue
        _write_value(out, f, value, version, flexible)
    if isinstance(values, MessageData):
        tagged.extend(values.unknown_tags)
    if flexible:
        out += uvarint(len(tagged))
        for tag, data in sorted(tagged):
            out += uvarint(tag) + uvarint(len(data)) + data


def _write_length(out: bytearray, n: int, flexible: bool, classic: str) -> None:
    if flexible:
        out += uvarint(n + 1)
    else:
        out += _INT[classic].pack(n)


def _write_value(out: bytearray, f: Field, value: Any, version: int, flexible: bool, tagged: bool = False) -> None:
    if f.is_struct:
        if f.nullable_in(version):
            # The markers protocol._read_value reads: a varint 0 / 1 in a tagged field, else a byte -1 / 1.
            if value is None:
                out += b"\x00" if tagged else b"\xff"
                return
            out += b"\x01"
        _write_struct(out, f.fields, value if value is not None else {}, version, flexible)
        return
    if f.is_array:
        if value is None:
            _write_length(out, -1, flexible, "int32")
            return
        _write_length(out, len(value), flexible, "int32")
        for item in value:
            if f.element_type == "struct":
                _write_struct(out, f.fields, item, version, flexible)
            else:
                _write_scalar(out, f.element_type, item, flexible)
        return
    _write_scalar(out, f.type, value, flexible)


def _write_scalar(out: bytearray, kind: str, value: Any, flexible: bool) -> None:
    if kind in ("string", "bytes"):
        if value is None:
            _write_length(out, -1, flexible, "int16" if kind == "string" else "int32")
            return
        raw = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        _write_length(out, len(raw), flexible, "int16" if kind == "string" else "int32")
        out += raw
    elif kind == "bool":
        out += b"\x01" if value else b"\x00"
    elif kind == "uuid":
        uid = value if isinstance(value, Uuid) else Uuid.from_string(value) if isinstance(value, str) \
            else Uuid(bytes(value))
        out += uid.raw
    else:
        out += _INT[kind].pack(value)


# -- record envelopes -------------------------------------------------------------------------------


def coordinator_key(schema: MessageSchema, record_type: int, values: Mapping[str, Any]) -> bytes:
    """A coordinator record key: int16 record type, then the key struct."""
    from kdump.format.messages.tables import key_version

    return struct.pack(">h", record_type) + write_message(schema, values, key_version(schema, record_type))


def coordinator_value(schema: MessageSchema, version: int, values: Mapping[str, Any]) -> bytes:
    """A coordinator record value: int16 value version, then the value struct."""
    return struct.pack(">h", version) + write_message(schema, values, version)


def metadata_record(schema: MessageSchema, version: int, values: Mapping[str, Any], frame_version: int = 1) -> bytes:
    """A KRaft metadata record value: uvarint frame version, api key, version, then the struct."""
    assert schema.api_key is not None
    return uvarint(frame_version) + uvarint(schema.api_key) + uvarint(version) + write_message(schema, values, version)


def control_value(schema: MessageSchema, values: Mapping[str, Any], version: int = 0) -> bytes:
    """A KRaft control record value (the schema's own ``Version`` field is part of ``values``)."""
    return write_message(schema, values, version)
