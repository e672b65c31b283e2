"""Records inside a log entry: v2 records (DefaultRecord) and legacy inner messages.

``iter_records(buf, batch)`` yields the records of one entry in groups of a few thousand; a
compressed batch is decompressed as a stream (``record_stream``), so memory does not grow with
the batch, and ``decode_records`` returns them in one list for batches known to be small.
The v2 loop is the hot path of deep iteration. ``decode_v2_record_area`` is the reference: it
decodes the one-byte varint case inline (a function call per varint is what makes Python decoders
slow) and builds plain tuples typed as ``Record``. When the optional C
extension ``_v2records`` is built it decodes well-formed batches ~8x faster with identical results,
and hands anything malformed back to the Python loop, which words the error
(``KDUMP_PURE_PYTHON=1`` turns it off; tests run both).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import NamedTuple

from kdump.accelerators import RECORD_DECODE_FUNCTION, implementation, load
from kdump.errors import FormatError, InvalidRecordError
from kdump.format.batch import V2_HEADER_SIZE, Batch, increment_sequence
from kdump.format.codecs import Codec, decompress_chunks, decompress_stream
from kdump.format.layout import RECORD_FIELDS, check_fields
from kdump.format.legacy_records import legacy_records
from kdump.format.record_stream import (
    GROUP_SIZE,
    INVALID_STRUCTURE,
    PREMATURE_EOF,
    RECORDS_REMAINING,
    stream_v2_records,
    wrap64,
)
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


check_fields(Record, RECORD_FIELDS)
_new_record = tuple.__new__  # Record(...) goes through a Python-level __new__; this does not.

_AcceleratedDecode = Callable[..., "tuple[list[Record], int] | None"]


_accelerated_decode: _AcceleratedDecode | None = load(*RECORD_DECODE_FUNCTION)
RECORD_DECODER = implementation(_accelerated_decode)
"""Which v2 record decoder this process uses (benchmarks and ``kdump --version`` print it)."""


def decode_records(buf: Buffer, batch: Batch) -> list[Record]:
    """All records of ``batch`` (whose bytes lie in ``buf`` at ``batch.position``) in one list.

    For batches known to be small; anything that reads untrusted files uses ``iter_records``.
    """
    groups = iter_records(buf, batch)
    records = next(groups, [])
    for group in groups:
        records.extend(group)  # the decoder's own lists: extending the first one is safe
    return records


def iter_records(buf: Buffer, batch: Batch, *, values: bool = True) -> Iterator[list[Record]]:
    """The records of ``batch`` in groups of a few thousand, decompressing as a stream.

    Memory stays bounded whatever the batch holds. With ``values=False`` a value of
    ``LAZY_VALUE_MIN`` bytes or more may come as a ``LazyValue`` (``len()`` works, ``bytes()``
    reads it again), for callers that need sizes only. Errors are raised by the call or while
    iterating.
    """
    fast = _accelerated_decode
    if fast is not None:
        # The common case, a small batch whose records fit one chunk, in one call and without
        # generators; anything else goes the general way, which starts over and words the errors.
        data = small_v2_area(buf, batch)
        if data is not None:
            decoded = fast(data, batch.records_count, batch.base_offset, batch.base_timestamp,
                           batch.log_append_time, batch.base_sequence, Record)
            if decoded is not None and decoded[1] == len(data):
                return iter((decoded[0],))
    return _iter_records(buf, batch, values)


_CODECS = tuple(Codec)


def small_v2_area(buf: Buffer, batch: Batch) -> Buffer | None:
    """The (decompressed) records area of a v2 batch of at most ``GROUP_SIZE`` records in one buffer.

    None when the batch is not such a batch (legacy, too many records, header too short, unknown
    codec, or more than one decompressed chunk): ``iter_records`` then reads it as a stream.
    """
    count = batch.records_count
    if count is None or not 0 <= count <= GROUP_SIZE or batch.size < V2_HEADER_SIZE:
        return None
    area = buf[batch.position + V2_HEADER_SIZE:batch.end]
    codec_id = batch.attributes & 0x07
    if not codec_id:
        return area
    if codec_id >= len(_CODECS):
        return None
    chunks = decompress_chunks(_CODECS[codec_id], area, magic=2)
    try:
        first = next(chunks, b"")
        if next(chunks, None) is not None:
            return None
    except FormatError as err:
        err.position = batch.position
        raise
    return first


def _iter_records(buf: Buffer, batch: Batch, values: bool) -> Iterator[list[Record]]:
    try:
        if batch.is_legacy:
            yield from legacy_records(buf, batch, Record)
        else:
            # Control records are parsed, so their values are always read.
            yield from _v2_records(buf, batch, values or batch.is_control)
    except FormatError as err:
        # Positions inside decompressed data mean nothing in the file: name the batch instead.
        err.position = batch.position
        raise
    except (IndexError, ValueError, OverflowError) as err:
        raise InvalidRecordError(f"unreadable records: {err}", position=batch.position) from None


def count_records(buf: Buffer, batch: Batch) -> int:
    """How many records ``batch`` really holds (decoding them, without keeping any)."""
    return sum(len(group) for group in iter_records(buf, batch, values=False))


def _v2_records(buf: Buffer, batch: Batch, values: bool) -> Iterator[list[Record]]:
    count = batch.records_count or 0
    if count < 0:
        raise InvalidRecordError(f"Found invalid record count {count} in magic v2 batch")
    if batch.size < V2_HEADER_SIZE:
        raise InvalidRecordError(f"Record batch size {batch.size} is smaller than the "
                                 f"minimum batch header size {V2_HEADER_SIZE}")
    area = buf[batch.position + V2_HEADER_SIZE:batch.end]
    codec = batch.codec
    fast = _accelerated_decode
    args = (batch.base_offset, batch.base_timestamp, batch.log_append_time, batch.base_sequence, Record)
    if codec is Codec.NONE:
        # Uncompressed: the records are read in place, a group at a time.
        data: Buffer = area
        pos = 0
        left = count
        while left:
            n = min(left, GROUP_SIZE)
            decoded = None if fast is None else fast(data, n, *args, pos, True)
            if decoded is None:  # no accelerator, or malformed records: the Python loop words the error
                if type(data) is not bytes:
                    data = bytes(data)
                before: list[Record] = []
                try:
                    decoded = decode_v2_record_area(data, n, batch, start=pos, into=before)
                except (FormatError, IndexError, ValueError, OverflowError):
                    if before:  # Kafka prints the records before the one that fails
                        yield before
                    raise
            records, pos = decoded
            left -= n
            yield records
        if pos != len(data):
            raise InvalidRecordError(RECORDS_REMAINING)
        return

    saved: list[bytes] = []

    def reopen() -> Callable[[], Iterator[Buffer]]:
        # A LazyValue reads its batch again, maybe after the file is closed: it keeps a copy of
        # the compressed bytes (no larger than the batch in the file), shared by the batch's values.
        if not saved:
            saved.append(bytes(area))
        return functools.partial(decompress_chunks, codec, saved[0], magic=2)

    yield from stream_v2_records(decompress_chunks(codec, area, magic=2), count, batch,
                                 _group_decoder(batch), values=values, reopen=reopen,
                                 new_record=lambda fields: _new_record(Record, fields), group_size=GROUP_SIZE)


def stream_held_v2_records(read: Callable[[], Iterator[Buffer]], batch: Batch, *,
                           values: bool) -> Iterator[list[Record]]:
    """The records of a v2 batch too large to hold; ``read()`` hands out its records area (the
    ``batch.size - V2_HEADER_SIZE`` bytes after the header, compressed or not) in pieces, and is
    called again by a ``LazyValue``.

    A compressed batch is decompressed as it is read (``decompress_stream``): the same decoding, and
    so the same records and errors, as ``iter_records`` on the batch whole. An uncompressed one is
    decoded as a stream too, which on a malformed batch may stop at another record, or with other
    words, than Kafka's in-place reading: the caller then decodes that batch whole to find Kafka's
    error (``log.batches`` does). Errors name ``batch.position``.
    """
    count = batch.records_count or 0
    size = batch.size - V2_HEADER_SIZE
    codec = batch.codec
    if count < 0:
        raise InvalidRecordError(f"Found invalid record count {count} in magic v2 batch", position=batch.position)

    def chunks() -> Iterator[Buffer]:
        return read() if codec is Codec.NONE else decompress_stream(codec, read(), size, magic=2)

    try:
        yield from stream_v2_records(chunks(), count, batch, _group_decoder(batch), values=values or batch.is_control,
                                     reopen=lambda: chunks, new_record=lambda fields: _new_record(Record, fields),
                                     group_size=GROUP_SIZE)
    except FormatError as err:
        err.position = batch.position
        raise
    except (IndexError, ValueError, OverflowError) as err:
        raise InvalidRecordError(f"unreadable records: {err}", position=batch.position) from None


def _group_decoder(batch: Batch) -> Callable[[bytes, int, int], tuple[list[Record], int, Exception | None]]:
    """``stream_v2_records``' ``decode_group`` for ``batch``: the C decoder, else the Python loop (which
    words the error). Each record is parsed within its declared length, as Kafka reads a compressed
    stream (DefaultRecord.readFrom(DataInput)), which is also how a window knows it holds a record
    whole; for a healthy uncompressed record that reads the same as Kafka's in-place parsing."""
    fast = _accelerated_decode
    args = (batch.base_offset, batch.base_timestamp, batch.log_append_time, batch.base_sequence, Record)

    def decode_group(window: bytes, start: int, n: int) -> tuple[list[Record], int, Exception | None]:
        decoded = None if fast is None else fast(window, n, *args, start, False)
        if decoded is not None:
            return decoded[0], decoded[1], None
        before: list[Record] = []
        try:
            records, pos = decode_v2_record_area(window, n, batch, start=start, final=False, bounded=True,
                                                 into=before)
        except (FormatError, IndexError, ValueError, OverflowError) as err:
            return before, start, err  # the records before the failing one are still handed out
        return records, pos, None

    return decode_group


_ZIGZAG = [(u >> 1) ^ -(u & 1) for u in range(128)]
"""Zig-zag decoding of every one-byte varint: one list lookup instead of four operations."""


def decode_v2_record_area(data: bytes, count: int, batch: Batch, *, start: int = 0, final: bool = True,
                          bounded: bool = False, into: list[Record] | None = None) -> tuple[list[Record], int]:
    """Decode up to ``count`` DefaultRecords of ``data`` from ``start``; returns them and the end position.

    ``final=False``: ``data`` is a window over a stream, so stop before a record it does not hold
    whole. ``bounded=True`` (compressed batches): like Kafka's DefaultRecord.readFrom(DataInput),
    a record is parsed within its declared length only.
    Written for speed: one-byte varints are a table lookup, two-byte offset deltas (records 64+ of a
    batch) are decoded inline, and only longer ones call ``decode_uvarint``. Varints wrap to 32 and
    varlongs to 64 bits, and offsets and timestamps to 64 bits, like Java arithmetic.
    Records are appended to ``into`` when given, so after an error it holds the ones before it.
    """
    base_offset = batch.base_offset
    base_ts = batch.base_timestamp
    log_append_ts = batch.log_append_time
    base_seq = batch.base_sequence
    offsets_wrap = not _SAFE_LOW < base_offset < _SAFE_HIGH
    zz = _ZIGZAG
    new = _new_record
    out: list[Record] = [] if into is None else into
    append = out.append
    pos = start
    size = len(data)
    try:
        for _ in range(count):
            start = pos
            if bounded and not _record_is_whole(data, pos):
                if not final:
                    break
                raise InvalidRecordError(PREMATURE_EOF)
            u = data[pos]  # length
            if u < 0x80:
                length = zz[u]
                pos += 1
            else:
                u, pos = decode_uvarint(data, pos)
                u &= _M32
                length = (u >> 1) ^ -(u & 1)
            end = pos + length
            u = data[pos + 1]  # timestampDelta, after the unused attributes byte
            if u < 0x80:
                ts_delta = zz[u]
                pos += 2
            else:
                u, pos = decode_uvarint(data, pos + 1, 10)
                u &= _M64
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
                    u &= _M32
                offset_delta = (u >> 1) ^ -(u & 1)
            u = data[pos]  # keyLength
            if u < 0x80:
                n = zz[u]
                pos += 1
            else:
                u, pos = decode_uvarint(data, pos)
                u &= _M32
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
                u &= _M32
                n = (u >> 1) ^ -(u & 1)
            if n >= 0:
                value = data[pos:pos + n]
                pos += n
            else:
                value = None
            if bounded and pos > end:  # Kafka's buffer holds this record only: reading on underflows
                raise InvalidRecordError(INVALID_STRUCTURE)
            if data[pos] == 0:  # headersCount, almost always 0
                headers: tuple[Header, ...] = ()
                pos += 1
            else:
                u, pos = decode_uvarint(data, pos)
                u &= _M32
                headers, pos = _headers(data, pos, (u >> 1) ^ -(u & 1), end if bounded else size)
            if pos != end or pos > size:
                if bounded and pos > end:
                    raise InvalidRecordError(INVALID_STRUCTURE)
                raise InvalidRecordError(f"Invalid record size: expected to read {length} bytes in record "
                                         f"payload, but instead read {pos - end + length} (record at byte "
                                         f"{start} of the batch's records)")
            if log_append_ts is None:
                timestamp = base_ts + ts_delta
                if not _I64_MIN <= timestamp <= _I64_MAX:
                    timestamp = wrap64(timestamp)
            else:
                timestamp = log_append_ts
            offset = base_offset + offset_delta
            if offsets_wrap:
                offset = wrap64(offset)
            append(new(Record, (offset, timestamp, key, value, headers,
                                -1 if base_seq < 0 else increment_sequence(base_seq, offset_delta), None, None)))
    except IndexError:
        if not bounded:
            raise
        raise InvalidRecordError(INVALID_STRUCTURE) from None
    return out, pos


_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF
_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1
_SAFE_LOW = _I64_MIN + (1 << 31)  # no int32 offset delta takes a base offset in here out of range
_SAFE_HIGH = _I64_MAX - (1 << 31)


def _record_is_whole(data: bytes, pos: int) -> bool:
    """True if ``data[pos:]`` holds the record's length field and as many bytes as it says.

    A length field that is too long or negative counts as whole: decoding it words the error."""
    size = len(data)
    u = shift = 0
    for i in range(pos, min(pos + 5, size)):
        b = data[i]
        u |= (b & 0x7F) << shift
        if b < 0x80:
            u &= _M32
            length = (u >> 1) ^ -(u & 1)
            return length < 0 or i + 1 + length <= size
        shift += 7
    return pos + 5 <= size


def _headers(data: bytes, pos: int, count: int, limit: int) -> tuple[tuple[Header, ...], int]:
    if count < 0:
        raise InvalidRecordError(f"Found invalid number of record headers {count}")
    if count > limit - pos:
        raise InvalidRecordError(f"Found invalid number of record headers {count}: more than the bytes left")
    headers = []
    for _ in range(count):
        u, pos = decode_uvarint(data, pos)
        u &= _M32
        n = (u >> 1) ^ -(u & 1)
        if n < 0:
            raise InvalidRecordError(f"Invalid negative header key size {n}")
        hkey = data[pos:pos + n]
        pos += n
        u, pos = decode_uvarint(data, pos)
        u &= _M32
        n = (u >> 1) ^ -(u & 1)
        if n >= 0:
            hval: bytes | None = data[pos:pos + n]
            pos += n
        else:
            hval = None
        headers.append((hkey, hval))
    return tuple(headers), pos
