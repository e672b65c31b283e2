"""Records inside a log entry: v2 records (DefaultRecord) and legacy inner messages.

``decode_records(buf, batch)`` returns every record of one entry, decompressing as needed.
The v2 loop is the hot path of deep iteration. ``decode_v2_record_area`` is the reference: it
decodes the one-byte varint case inline (a function call per varint is what makes Python decoders
slow, PERFORMANCE-NOTES.md) and builds plain tuples typed as ``Record``. When the optional C
extension ``_v2records`` is built it decodes well-formed batches ~8x faster with identical results,
and hands anything malformed back to the Python loop, which words the error
(``KDUMP_PURE_PYTHON=1`` turns it off; tests run both).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kdump.accelerators import load
from kdump.errors import CodecError, FormatError, InvalidRecordError
from kdump.format.batch import (
    FRAMING,
    LEGACY_CRC_START,
    LEGACY_V0_HEADER,
    LOG_OVERHEAD,
    MIN_RECORD_OVERHEAD,
    V2_HEADER_SIZE,
    Batch,
    TimestampType,
    increment_sequence,
    read_batch,
)
from kdump.format.codecs import Codec, decompress
from kdump.format.crc import crc32
from kdump.format.varint import decode_uvarint

Buffer = bytes | bytearray | memoryview

Header = tuple[bytes, bytes | None]
"""A record header: (key as raw UTF-8 bytes, value or None)."""


class Record(NamedTuple):
    """One record. ``legacy_crc``/``legacy_valid`` are set only for v0/v1 messages."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    sequence: int = -1
    legacy_crc: int | None = None
    legacy_valid: bool | None = None


_new_record = tuple.__new__  # Record(...) goes through a Python-level __new__; this does not.

_AcceleratedDecode = Callable[[Buffer, int, int, int, "int | None", int, type], "tuple[list[Record], int] | None"]


_accelerated_decode: _AcceleratedDecode | None = load("kdump.format._v2records", "decode")
RECORD_DECODER = "C extension" if _accelerated_decode is not None else "pure Python"
"""Which v2 record decoder this process uses (benchmarks and ``kdump --version`` print it)."""


def decode_records(buf: Buffer, batch: Batch) -> list[Record]:
    """All records of ``batch`` (whose bytes lie in ``buf`` at ``batch.position``)."""
    try:
        if batch.is_legacy:
            return _legacy_records(buf, batch)
        return _v2_records(buf, batch)
    except FormatError as err:
        # Positions inside decompressed data mean nothing in the file: name the batch instead.
        err.position = batch.position
        raise
    except (IndexError, ValueError, OverflowError) as err:
        raise InvalidRecordError(f"unreadable records: {err}", position=batch.position) from None


def _v2_records(buf: Buffer, batch: Batch) -> list[Record]:
    count = batch.records_count or 0
    if count < 0:
        raise InvalidRecordError(f"Found invalid record count {count} in magic v2 batch")
    if batch.size < V2_HEADER_SIZE:
        raise InvalidRecordError(f"Record batch size {batch.size} is smaller than the "
                                 f"minimum batch header size {V2_HEADER_SIZE}")
    area = buf[batch.position + V2_HEADER_SIZE:batch.end]
    codec = batch.codec
    data = area if codec is Codec.NONE else decompress(codec, area, magic=2)
    decoded = None
    if _accelerated_decode is not None:
        decoded = _accelerated_decode(data, count, batch.base_offset, batch.base_timestamp, batch.log_append_time,
                                      batch.base_sequence, Record)
    if decoded is None:  # no accelerator, or malformed records: the Python loop raises the precise error
        decoded = decode_v2_record_area(bytes(data), count, batch)
    records, pos = decoded
    if pos != len(data):
        if codec is Codec.NONE:
            raise InvalidRecordError("Incorrect declared batch size, records still remaining in file")
        raise InvalidRecordError(f"Compressed batch has {len(data) - pos} bytes left after its "
                                 f"{count} declared records")
    return records


_ZIGZAG = [(u >> 1) ^ -(u & 1) for u in range(128)]
"""Zig-zag decoding of every one-byte varint: one list lookup instead of four operations."""


def decode_v2_record_area(data: bytes, count: int, batch: Batch) -> tuple[list[Record], int]:
    """Decode ``count`` DefaultRecords from ``data``; returns the records and the end position.

    Written for speed: one-byte varints are a table lookup, two-byte offset deltas (records 64+ of a
    batch) are decoded inline, and only longer ones call ``decode_uvarint``.
    """
    base_offset = batch.base_offset
    base_ts = batch.base_timestamp
    log_append_ts = batch.log_append_time
    base_seq = batch.base_sequence
    zz = _ZIGZAG
    new = _new_record
    out: list[Record] = []
    append = out.append
    pos = 0
    for _ in range(count):
        start = pos
        u = data[pos]  # length
        if u < 0x80:
            length = zz[u]
            pos += 1
        else:
            u, pos = decode_uvarint(data, pos)
            length = (u >> 1) ^ -(u & 1)
        end = pos + length
        u = data[pos + 1]  # timestampDelta, after the unused attributes byte
        if u < 0x80:
            ts_delta = zz[u]
            pos += 2
        else:
            u, pos = decode_uvarint(data, pos + 1, 10)
            ts_delta = (u >> 1) ^ -(u & 1)
        u = data[pos]  # offsetDelta
        if u < 0x80:
            offset_delta = zz[u]
            pos += 1
        else:
            v = data[pos + 1]
            if v < 0x80:
                u = (u & 0x7F) | (v << 7)
                pos += 2
            else:
                u, pos = decode_uvarint(data, pos)
            offset_delta = (u >> 1) ^ -(u & 1)
        u = data[pos]  # keyLength
        if u < 0x80:
            n = zz[u]
            pos += 1
        else:
            u, pos = decode_uvarint(data, pos)
            n = (u >> 1) ^ -(u & 1)
        if n >= 0:
            key = data[pos:pos + n]
            pos += n
        else:
            key = None
        u = data[pos]  # valueLength
        if u < 0x80:
            n = zz[u]
            pos += 1
        else:
            u, pos = decode_uvarint(data, pos)
            n = (u >> 1) ^ -(u & 1)
        if n >= 0:
            value = data[pos:pos + n]
            pos += n
        else:
            value = None
        if data[pos] == 0:  # headersCount, almost always 0
            headers: tuple[Header, ...] = ()
            pos += 1
        else:
            u, pos = decode_uvarint(data, pos)
            headers, pos = _headers(data, pos, (u >> 1) ^ -(u & 1))
        if pos != end or pos > len(data):
            raise InvalidRecordError(f"Invalid record size: expected to read {length} bytes in record "
                                     f"payload, but instead read {pos - end + length} (record at byte {start} "
                                     f"of the batch's records)")
        append(new(Record, (base_offset + offset_delta,
                            base_ts + ts_delta if log_append_ts is None else log_append_ts,
                            key, value, headers,
                            -1 if base_seq < 0 else increment_sequence(base_seq, offset_delta), None, None)))
    return out, pos


def _headers(data: bytes, pos: int, count: int) -> tuple[tuple[Header, ...], int]:
    if count < 0:
        raise InvalidRecordError(f"Found invalid number of record headers {count}")
    if count > len(data) - pos:
        raise InvalidRecordError(f"Found invalid number of record headers {count}: more than the bytes left")
    headers = []
    for _ in range(count):
        u, pos = decode_uvarint(data, pos)
        n = (u >> 1) ^ -(u & 1)
        if n < 0:
            raise InvalidRecordError(f"Invalid negative header key size {n}")
        hkey = data[pos:pos + n]
        pos += n
        u, pos = decode_uvarint(data, pos)
        n = (u >> 1) ^ -(u & 1)
        if n >= 0:
            hval: bytes | None = data[pos:pos + n]
            pos += n
        else:
            hval = None
        headers.append((hkey, hval))
    return tuple(headers), pos


# ---- legacy v0/v1 ---------------------------------------------------------------------------

def _legacy_message(buf: Buffer, pos: int, size: int) -> tuple[int, int, int, int, bytes | None, bytes | None]:
    """(crc, magic, attributes, timestamp, key, value) of the message whose framing starts at ``pos``."""
    crc, magic, attributes = LEGACY_V0_HEADER.unpack_from(buf, pos + LOG_OVERHEAD)
    p = pos + LOG_OVERHEAD + LEGACY_V0_HEADER.size
    timestamp = -1
    if magic == 1:
        timestamp = int.from_bytes(buf[p:p + 8], "big", signed=True)
        p += 8
    end = pos + LOG_OVERHEAD + size
    key, p = _legacy_bytes(buf, p, end)
    value, p = _legacy_bytes(buf, p, end)
    if p != end:
        raise InvalidRecordError(f"legacy message has {end - p} bytes after its value", position=pos)
    return crc, magic, attributes, timestamp, key, value


def _legacy_bytes(buf: Buffer, p: int, end: int) -> tuple[bytes | None, int]:
    if p + 4 > end:
        raise InvalidRecordError("legacy message is too short for its length fields", position=p)
    n = int.from_bytes(buf[p:p + 4], "big", signed=True)
    p += 4
    if n < 0:
        return None, p
    if p + n > end:
        raise InvalidRecordError(f"legacy message field of {n} bytes runs past the message end", position=p)
    return bytes(buf[p:p + n]), p + n


def _legacy_records(buf: Buffer, batch: Batch) -> list[Record]:
    size = batch.size - LOG_OVERHEAD
    crc, magic, attributes, timestamp, key, value = _legacy_message(buf, batch.position, size)
    codec = batch.codec
    if codec is Codec.NONE:
        return [Record(batch.last_offset, timestamp, key, value, (), -1, crc, batch.is_valid
                       if batch.is_valid is not None else _legacy_valid(buf, batch.position, size))]
    if value is None:
        raise InvalidRecordError("compressed legacy wrapper has a null value")
    inner = decompress(codec, value, magic=magic)
    return _inner_messages(inner, batch, magic, timestamp)


def _legacy_valid(buf: Buffer, pos: int, size: int) -> bool:
    return size >= MIN_RECORD_OVERHEAD and crc32(buf[pos + LEGACY_CRC_START:pos + LOG_OVERHEAD + size]) == \
        LEGACY_V0_HEADER.unpack_from(buf, pos + LOG_OVERHEAD)[0]


def _inner_messages(inner: bytes, wrapper: Batch, wrapper_magic: int, wrapper_ts: int) -> list[Record]:
    """Inner message set of a compressed wrapper (AbstractLegacyRecordBatch.DeepRecordsIterator)."""
    entries = []
    pos = 0
    while pos < len(inner):
        if pos + LOG_OVERHEAD > len(inner):
            raise InvalidRecordError("truncated inner message framing in compressed legacy wrapper")
        offset, size = FRAMING.unpack_from(inner, pos)
        if size < MIN_RECORD_OVERHEAD or pos + LOG_OVERHEAD + size > len(inner):
            raise InvalidRecordError(f"invalid inner message size {size} in compressed legacy wrapper")
        crc, magic, attributes, ts, key, value = _legacy_message(inner, pos, size)
        if attributes & 0x07:
            raise InvalidRecordError("Compressed message set contains a compressed inner message")
        entries.append((offset, crc, ts, key, value, _legacy_valid(inner, pos, size)))
        pos += LOG_OVERHEAD + size
    if wrapper_magic == 0:
        absolute = [e[0] for e in entries]              # v0: inner offsets are absolute
    else:
        last_inner = entries[-1][0] if entries else 0
        wrapper_offset = wrapper.last_offset
        if wrapper_offset == 0:                          # some librdkafka producers
            base = 0
        elif wrapper_offset < last_inner:
            raise InvalidRecordError(f"Found invalid wrapper offset in compressed v1 message set, wrapper "
                                     f"offset '{wrapper_offset}' is less than the last inner message "
                                     f"offset '{last_inner}' and it is not zero")
        else:
            base = wrapper_offset - last_inner
        absolute = [base + e[0] for e in entries]
    log_append = wrapper.timestamp_type is TimestampType.LOG_APPEND_TIME
    return [Record(off, wrapper_ts if log_append else ts, key, value, (), -1, crc, valid)
            for off, (_, crc, ts, key, value, valid) in zip(absolute, entries)]


__all__ = ["Header", "Record", "RECORD_DECODER", "decode_records", "decode_v2_record_area", "read_batch", "CodecError"]
