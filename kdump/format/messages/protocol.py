"""One generic reader and writer for Kafka's message-protocol encoding, driven by schema tables.

Mirrors what Kafka's generated ``*Data.read(Readable, short)`` / ``write`` methods do: fixed-width
big-endian integers, int16/int32 (classic) or unsigned-varint (flexible, length + 1) prefixes for
strings, bytes and arrays, a presence marker for nullable structs (a byte, negative for null; in a
tagged field an unsigned varint, 0 for null), and in flexible versions a tagged-field section (count,
then tag / size / data; unknown tags are skipped).
Errors carry Kafka's own wording because the dump tool prints them.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from kdump.errors import FormatError
from kdump.format.checkpoint import uuid_from_string, uuid_to_string
from kdump.format.messages.schema import NULL, Field, MessageSchema

# Java's BufferUnderflowException has no message, so Kafka's wrappers print "null".
UNDERFLOW_MESSAGE = "null"

_INT = {"int8": struct.Struct(">b"), "int16": struct.Struct(">h"), "int32": struct.Struct(">i"),
        "int64": struct.Struct(">q"), "uint16": struct.Struct(">H"), "uint32": struct.Struct(">I"),
        "float64": struct.Struct(">d")}


@dataclass(frozen=True, slots=True)
class Uuid:
    """Kafka's ``Uuid``: 16 bytes, printed as URL-safe base64 without padding (22 characters)."""

    raw: bytes

    ZERO: ClassVar[Uuid]  # set below the class

    def __str__(self) -> str:
        return uuid_to_string(self.raw)

    @classmethod
    def from_string(cls, text: str) -> Uuid:
        raw = uuid_from_string(text)
        if raw is None:
            raise ValueError(f"Invalid Uuid string {text!r}")
        return cls(raw)


Uuid.ZERO = Uuid(bytes(16))


@dataclass(slots=True)
class MessageData:
    """A read (or built) struct: every schema field has a value (defaults for absent ones)."""

    fields: tuple[Field, ...]
    version: int
    values: dict[str, Any]
    unknown_tags: tuple[tuple[int, bytes], ...] = ()

    def __getitem__(self, name: str) -> Any:
        """A value by schema name (``ProducerId``) or JSON name (``producerId``)."""
        if name in self.values:
            return self.values[name]
        for f in self.fields:
            if f.json_name == name:
                return self.values[f.name]
        raise KeyError(name)

    def present(self) -> Iterator[Field]:
        """Fields that exist in this version, in schema order."""
        return (f for f in self.fields if self.version in f.versions)

    def to_plain(self) -> dict[str, Any]:
        """Nested plain dicts/lists, keyed by schema name (for tests and comparisons)."""
        return {k: _plain(v) for k, v in self.values.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, MessageData):
        return value.to_plain()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def default_value(f: Field, version: int = 0) -> Any:
    """The value a freshly constructed Kafka message holds for ``f``."""
    if f.default is NULL:
        return None
    if f.default is not None:
        return f.default
    if f.is_array:
        return []
    if f.is_struct:
        return MessageData(f.fields, version, {c.name: default_value(c, version) for c in f.fields})
    return {"bool": False, "string": "", "bytes": b"", "uuid": Uuid.ZERO, "float64": 0.0}.get(f.type, 0)


def is_default(f: Field, value: Any, version: int) -> bool:
    """Kafka's "non-default value" test used for tagged fields."""
    return _plain(value) == _plain(default_value(f, version))


def _java_int(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


class Reader:
    """A cursor over a buffer; every read raises ``FormatError`` with Kafka's text on failure."""

    def __init__(self, data: bytes | memoryview, pos: int = 0) -> None:
        self.data = memoryview(data)
        self.pos = pos

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def fixed(self, kind: str) -> Any:
        s = _INT[kind]
        if self.remaining() < s.size:
            raise FormatError(UNDERFLOW_MESSAGE)
        (value,) = s.unpack_from(self.data, self.pos)
        self.pos += s.size
        return value

    def uvarint(self) -> int:
        """Kafka's ``readUnsignedVarint``: at most 5 bytes, result wrapped to a Java int."""
        result = 0
        for i in range(5):
            if self.pos >= len(self.data):
                raise FormatError(UNDERFLOW_MESSAGE)
            b = self.data[self.pos]
            self.pos += 1
            result |= (b & 0x7F) << (7 * i)
            if b < 0x80:
                return _java_int(result)
        raise FormatError("Varint is too long, the most significant bit in the 5th byte is set, "
                          f"converted value: {result & 0xFFFFFFFF:x}")

    def array(self, size: int) -> bytes:
        available = self.remaining()
        if size > available:
            raise FormatError(f"Error reading byte array of {size} byte(s): only {available} byte(s) available")
        out = bytes(self.data[self.pos:self.pos + size])
        self.pos += size
        return out

    def uuid(self) -> Uuid:
        if self.remaining() < 16:
            raise FormatError(UNDERFLOW_MESSAGE)
        return Uuid(self.array(16))


def read_message(schema: MessageSchema, data: bytes | memoryview | Reader, version: int) -> MessageData:
    """Read ``schema`` at ``version`` from ``data`` (a buffer or a positioned ``Reader``)."""
    reader = data if isinstance(data, Reader) else Reader(data)
    return read_struct(reader, schema.fields, version, schema.flexible(version))


def read_struct(r: Reader, fields: tuple[Field, ...], version: int, flexible: bool) -> MessageData:
    values: dict[str, Any] = {}
    for f in fields:
        if version not in f.versions or f.tagged_in(version):
            values[f.name] = default_value(f, version)
        else:
            values[f.name] = _read_value(r, f, version, flexible)
    unknown: list[tuple[int, bytes]] = []
    if flexible:
        by_tag = {f.tag: f for f in fields if f.tagged_in(version)}
        for _ in range(r.uvarint()):
            tag = r.uvarint()
            size = r.uvarint()
            tagged = by_tag.get(tag)
            if tagged is None:
                unknown.append((tag, r.array(size)))
            else:
                values[tagged.name] = _read_value(r, tagged, version, True, tagged=True)
    return MessageData(fields, version, values, tuple(unknown))


def _length(r: Reader, flexible: bool, classic: str) -> int:
    return _java_int(r.uvarint() - 1) if flexible else r.fixed(classic)


def _read_value(r: Reader, f: Field, version: int, flexible: bool, tagged: bool = False) -> Any:
    if f.is_struct:
        # A nullable struct's marker is `readUnsignedVarint() <= 0` in a tagged field, `readByte() < 0`
        # elsewhere (generator/src/main/java/org/apache/kafka/message/MessageDataGenerator.java,
        # generateStructReader; so is 4.3.0's generated ConsumerGroupMemberMetadataValue.read). A tagged
        # null is what the 4.x group coordinator writes for the ClassicMemberMetadata (tag 0, whose
        # default is the empty struct) of a member on the consumer protocol: tag 0, size 1, marker 0.
        if f.nullable_in(version) and (r.uvarint() <= 0 if tagged else r.fixed("int8") < 0):
            return None
        return read_struct(r, f.fields, version, flexible)
    if f.is_array:
        n = _length(r, flexible, "int32")
        if n < 0:
            _check_nullable(f.nullable_in(version), f.json_name)
            return None
        if n > r.remaining():
            raise FormatError(f"Tried to allocate a collection of size {n}, but there are only "
                              f"{r.remaining()} bytes remaining.")
        el = f.element_type
        if el == "struct":
            return [read_struct(r, f.fields, version, flexible) for _ in range(n)]
        if el in ("string", "bytes"):
            return [_read_var(r, el, flexible, f"{f.json_name} element", False) for _ in range(n)]
        return [_read_primitive(r, el) for _ in range(n)]
    if f.type in ("string", "bytes"):
        return _read_var(r, f.type, flexible, f.json_name, f.nullable_in(version))
    return _read_primitive(r, f.type)


def _check_nullable(nullable: bool, name: str) -> None:
    if not nullable:
        raise FormatError(f"non-nullable field {name} was serialized as null")


def _read_var(r: Reader, kind: str, flexible: bool, name: str, nullable: bool) -> str | bytes | None:
    n = _length(r, flexible, "int16" if kind == "string" else "int32")
    if n < 0:
        _check_nullable(nullable, name)
        return None
    if kind == "string":
        if n > 0x7FFF:
            raise FormatError(f"string field {name} had invalid length {n}")
        return r.array(n).decode("utf-8", errors="replace")
    return r.array(n)


def _read_primitive(r: Reader, kind: str) -> Any:
    if kind == "bool":
        return r.fixed("int8") != 0
    if kind == "uuid":
        return r.uuid()
    return r.fixed(kind)
