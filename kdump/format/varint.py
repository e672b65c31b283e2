"""Variable-length integers as Kafka writes them (org.apache.kafka.common.utils.ByteUtils).

``varint``/``varlong`` are protobuf-style zig-zag encodings (used inside v2 records);
``uvarint`` is the unsigned form (flexible message versions, compact strings and arrays).
``decode_uvarint`` takes ``(buf, pos)`` and returns ``(value, next_pos)``; the record decoders in
``records`` and ``record_stream`` inline the one-byte case for speed and call it for the rest.
"""

from __future__ import annotations

from kdump.errors import InvalidRecordError

Buffer = bytes | bytearray | memoryview

_MAX_VARINT_BYTES = 5


def decode_uvarint(buf: Buffer, pos: int, max_bytes: int = _MAX_VARINT_BYTES) -> tuple[int, int]:
    """Unsigned base-128 varint starting at ``pos``, at most ``max_bytes`` long (5 or 10).

    The value is not cut to 32 or 64 bits: callers that mirror Java's int/long (ByteUtils keeps the
    low bits of an overlong varint) mask it."""
    value = 0
    shift = 0
    start = pos
    try:
        while True:
            b = buf[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value, pos
            shift += 7
            if pos - start >= max_bytes:
                # ByteUtils' texts; the converted value is what Java's int/long had gathered.
                if max_bytes == _MAX_VARINT_BYTES:
                    raise InvalidRecordError(f"Varint is too long, the most significant bit in the 5th byte is "
                                             f"set, converted value: {value & 0xFFFFFFFF:x}", position=start)
                raise InvalidRecordError(f"Varlong is too long, most significant bit in the 10th byte is set, "
                                         f"converted value: {value & 0xFFFFFFFFFFFFFFFF:x}", position=start)
    except IndexError:
        raise InvalidRecordError("varint runs past the end of the data", position=start) from None


def encode_uvarint(value: int) -> bytes:
    if value < 0:
        raise ValueError(f"uvarint cannot encode a negative value: {value}")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_varint(value: int) -> bytes:
    """Zig-zag int32; ``value`` must fit a signed 32-bit integer."""
    if not -(1 << 31) <= value < (1 << 31):
        raise ValueError(f"varint out of int32 range: {value}")
    return encode_uvarint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def encode_varlong(value: int) -> bytes:
    """Zig-zag int64; ``value`` must fit a signed 64-bit integer."""
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError(f"varlong out of int64 range: {value}")
    return encode_uvarint(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)
