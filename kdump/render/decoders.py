"""Key/value decoders: what follows ``key:`` and ``payload:`` in a dump (DumpLogSegments' decoder options).

Kafka's built-ins (StringDecoder, IntegerDecoder, LongDecoder, DefaultDecoder) by their full
class names, their legacy ``kafka.serializer.*`` names and short names, plus kdump extensions
(hex, base64, json, schema-registry). Internal-topic decoders live in ``internal_topics``.
"""

from __future__ import annotations

import binascii
import functools
import re
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from kdump.accelerators import load
from kdump.errors import InvalidRecordError, UsageError
from kdump.render.dialect import Dialect

BytesDecoder = Callable[[bytes], str]
_c_java_utf8: Callable[[bytes], str] | None = load("kdump.render._v2lines", "java_utf8")


def string_decoder(data: bytes) -> str:
    """Java's ``new String(bytes, UTF_8)``, which Kafka's StringDecoder and header keys use."""
    try:
        return data.decode("utf-8")  # well-formed input decodes the same in both languages
    except UnicodeDecodeError:
        if _c_java_utf8 is not None and type(data) is bytes:
            return _c_java_utf8(data)   # the same steps in C: binary values decode at memory speed
        return java_utf8_replace(data)


def _continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def java_utf8_replace(data: bytes) -> str:
    """JDK 17's UTF-8 decoding with replacement (String.decodeUTF8_UTF16), step by step.

    It differs from Python's ``errors="replace"`` in how many bytes one U+FFFD stands for: an
    encoded surrogate (``ED A0 80``) or an out-of-range 4-byte form is one U+FFFD in Java and
    three or four in Python, and a truncated sequence at the end is one U+FFFD with its
    continuation bytes swallowed. Well-formed sequences are copied; ``_v2lines.c`` mirrors this.
    """
    out: list[str] = []
    n = len(data)
    sp = 0
    while sp < n:
        b1 = data[sp]
        sp += 1
        if b1 < 0x80:
            out.append(chr(b1))
        elif 0xC2 <= b1 <= 0xDF:
            if sp < n:
                if _continuation(data[sp]):
                    out.append(data[sp - 1:sp + 1].decode("utf-8"))
                    sp += 1
                else:
                    out.append("\ufffd")  # the second byte is read again
                continue
            out.append("\ufffd")
            break
        elif 0xE0 <= b1 <= 0xEF:
            if sp + 1 < n:
                b2, b3 = data[sp], data[sp + 1]
                if (b1 == 0xE0 and b2 & 0xE0 == 0x80) or not _continuation(b2) or not _continuation(b3):
                    out.append("\ufffd")
                    sp += 0 if (b1 == 0xE0 and b2 & 0xE0 == 0x80) or not _continuation(b2) else 1
                else:
                    code = (b1 & 0x0F) << 12 | (b2 & 0x3F) << 6 | (b3 & 0x3F)
                    out.append("\ufffd" if 0xD800 <= code <= 0xDFFF else chr(code))
                    sp += 2
                continue
            if sp < n and ((b1 == 0xE0 and data[sp] & 0xE0 == 0x80) or not _continuation(data[sp])):
                out.append("\ufffd")
                continue
            out.append("\ufffd")
            break
        elif 0xF0 <= b1 <= 0xF7:
            if sp + 2 < n:
                b2, b3, b4 = data[sp], data[sp + 1], data[sp + 2]
                code = (b1 & 0x07) << 18 | (b2 & 0x3F) << 12 | (b3 & 0x3F) << 6 | (b4 & 0x3F)
                if (not _continuation(b2) or not _continuation(b3) or not _continuation(b4)
                        or not 0x10000 <= code <= 0x10FFFF):
                    out.append("\ufffd")
                    if (b1 > 0xF4 or (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF)
                            or (b1 == 0xF4 and b2 & 0xF0 != 0x80) or not _continuation(b2)):
                        pass                      # only the lead byte is consumed
                    elif not _continuation(b3):
                        sp += 1
                    else:
                        sp += 2
                else:
                    out.append(chr(code))
                    sp += 3
                continue
            if b1 > 0xF4 or (sp < n and ((b1 == 0xF0 and not 0x90 <= data[sp] <= 0xBF)
                                         or (b1 == 0xF4 and data[sp] & 0xF0 != 0x80)
                                         or not _continuation(data[sp]))):
                out.append("\ufffd")
                continue
            sp += 1
            out.append("\ufffd")
            if sp < n and not _continuation(data[sp]):
                continue
            break
        else:
            out.append("\ufffd")
    return "".join(out)


def _fixed(fmt: str, name: str) -> BytesDecoder:
    layout = struct.Struct(fmt)

    def decode(data: bytes) -> str:
        if len(data) < layout.size:
            # Kafka throws BufferUnderflowException here and dies; kdump reports it per record.
            raise InvalidRecordError(f"{name} needs {layout.size} bytes but the field has {len(data)}")
        return str(layout.unpack_from(data)[0])

    return decode


def default_decoder(data: bytes) -> str:
    """Kafka prints the byte[]'s identity (``[B@1b6d3586``), different on every run.

    kdump prints the same shape with a stable stand-in (the CRC-32 of the bytes) so output is
    deterministic; use ``hex`` or ``base64`` to see the bytes.
    """
    return f"[B@{zlib.crc32(data) & 0xFFFFFFFF:x}"


def hex_decoder(data: bytes) -> str:
    return data.hex()


def base64_decoder(data: bytes) -> str:
    return binascii.b2a_base64(data, newline=False).decode("ascii")   # base64.b64encode, without its import


def json_decoder(data: bytes) -> str:
    """Compact re-serialised JSON (one line), or the UTF-8 text when it is not JSON."""
    import json  # here: json's import is 2-3 ms of every command's start-up, and few runs decode JSON

    text = string_decoder(data)
    try:
        return json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        return text


def schema_registry_decoder(data: bytes) -> str:
    """Confluent wire format: magic byte 0, int32 schema id, payload."""
    if len(data) >= 5 and data[0] == 0:
        schema_id = struct.unpack_from(">i", data, 1)[0]
        return f"schemaId={schema_id} {string_decoder(data[5:])}"
    return string_decoder(data)


_DECODERS: dict[str, BytesDecoder] = {
    "StringDecoder": string_decoder,
    "IntegerDecoder": _fixed(">i", "IntegerDecoder"),
    "LongDecoder": _fixed(">q", "LongDecoder"),
    "DefaultDecoder": default_decoder,
    "hex": hex_decoder,
    "base64": base64_decoder,
    "json": json_decoder,
    "schema-registry": schema_registry_decoder,
}
_ALIASES = {"string": "StringDecoder", "integer": "IntegerDecoder", "int": "IntegerDecoder",
            "long": "LongDecoder", "default": "DefaultDecoder", "bytes": "DefaultDecoder"}
TOOLS_API = "org.apache.kafka.tools.api."
SERIALIZER = "kafka.serializer."
_PACKAGES = (TOOLS_API, SERIALIZER)
_KAFKA_CLASSES = ("StringDecoder", "IntegerDecoder", "LongDecoder", "DefaultDecoder")


def decoder_names() -> list[str]:
    """What ``--key/value-decoder-class`` takes by name (``kdump completion`` offers them): the short
    names, then Kafka's full class names (``org.apache.kafka.tools.api.*`` from 3.8)."""
    return [*_DECODERS, *(TOOLS_API + name for name in _KAFKA_CLASSES)]


def bytes_decoder(name: str) -> BytesDecoder:
    """Resolve a ``--key-decoder-class``/``--value-decoder-class`` value."""
    short = next((name.removeprefix(package) for package in _PACKAGES if name.startswith(package)), name)
    short = _ALIASES.get(short.lower(), short)
    try:
        return _DECODERS[short]
    except KeyError:
        known = ", ".join(sorted(set(_DECODERS)))
        raise UsageError(f"unknown decoder class {name!r} (known: {known}, with or without the "
                         f"org.apache.kafka.tools.api. prefix)") from None


# --escape: what a terminal or a line-based reader would take as structure. C0/C1 controls, DEL and the
# Unicode line and paragraph separators become escapes, and a backslash is doubled so an escape in
# the data cannot pass for one kdump wrote.
_SHORT_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_TO_ESCAPE = re.compile("[\\\\\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _escape_char(match: re.Match[str]) -> str:
    char = match.group(0)
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    return f"\\x{ord(char):02x}" if ord(char) <= 0xFF else f"\\u{ord(char):04x}"


def escape_text(text: str) -> str:
    """``text`` with control characters written as ``\\n``, ``\\x1b``, ``\\u2028`` (and ``\\`` as ``\\\\``)."""
    return _TO_ESCAPE.sub(_escape_char, text)


def escaped(decoder: BytesDecoder) -> BytesDecoder:
    return functools.wraps(decoder)(lambda data: escape_text(decoder(data)))   # __wrapped__: decode_pieces


def _utf8_boundary(data: bytes) -> int:
    """The last position of ``data`` where the UTF-8 decoders (Java's and Python's) start afresh:
    an ASCII or lead byte, or a continuation byte that no lead byte in the three before can claim.
    Decoding the bytes before it and from it gives the text of the whole."""
    for cut in range(len(data) - 1, 0, -1):
        if data[cut] & 0xC0 != 0x80 or not any(b >= 0xC0 for b in data[max(cut - 3, 0):cut]):
            return cut
    return 0


# Where a piece of a value may end for decoders whose text of the parts is the text of the whole.
_PIECE_BOUNDARY: dict[BytesDecoder, Callable[[bytes], int]] = {
    string_decoder: _utf8_boundary,
    hex_decoder: len,
    base64_decoder: lambda data: len(data) - len(data) % 3,   # whole 3-byte groups concatenate
}


def decode_pieces(decoder: BytesDecoder, pieces: Iterable[bytes]) -> Iterator[str]:
    """``decoder``'s text of the bytes ``pieces`` hold one after another, a piece at a time, so that a
    value too large to hold is printed as it is read. Other decoders (a number, JSON, a checksum)
    need the whole value and get it joined."""
    boundary = _PIECE_BOUNDARY.get(getattr(decoder, "__wrapped__", decoder))
    if boundary is None:
        yield decoder(b"".join(pieces))
        return
    carry = b""
    for piece in pieces:
        data = carry + piece
        cut = boundary(data)
        if cut:
            yield decoder(data[:cut])
        carry = data[cut:]
    yield decoder(carry)


PairDecoder = Callable[[int, bytes | None, bytes | None], tuple[str | None, str | None]]


def escaped_pair(decode: PairDecoder) -> PairDecoder:
    """An internal-topic decoder ((offset, key, value) -> texts) whose texts are escaped."""
    def escaped_decode(offset: int, key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
        return tuple(None if text is None else escape_text(text) for text in decode(offset, key, value))  # type: ignore[return-value]

    return escaped_decode


class KafkaDecoderClass(NamedTuple):   # a NamedTuple: a frozen dataclass costs ~1 ms of start-up to define
    """A ``--key/value-decoder-class`` as the given Kafka release loads it."""

    name: str
    decode: BytesDecoder | None        # None: that release has no such class (loading it fails)
    notice: str | None = None          # what that release prints each time it creates the decoder


def kafka_decoder_class(name: str, dialect: Dialect) -> KafkaDecoderClass:
    """Resolve a decoder class the way that release's tool does.

    ``kafka.serializer.*`` exists until 3.9 (3.8 and 3.9 print a deprecation line and use the
    ``org.apache.kafka.tools.api`` twin, which exists from 3.8 on). Any other Java class name cannot
    be loaded by kdump, like a class missing from Kafka's classpath. Names without a package are
    kdump's own (short names, hex, base64, json, schema-registry) and work in every dialect.
    """
    if "." not in name:
        return KafkaDecoderClass(name, bytes_decoder(name))
    for package in _PACKAGES:
        short = name[len(package):] if name.startswith(package) else None
        if short not in _KAFKA_CLASSES:
            continue
        if package == SERIALIZER and dialect.serializer_decoders:
            notice = (f"{name} is deprecated. Please use {TOOLS_API}{short} instead"
                      if dialect.tools_api_decoders else None)
            return KafkaDecoderClass(name, _DECODERS[short], notice)
        if package == TOOLS_API and dialect.tools_api_decoders:
            return KafkaDecoderClass(name, _DECODERS[short])
    return KafkaDecoderClass(name, None)
