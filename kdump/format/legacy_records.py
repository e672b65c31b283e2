"""Records of legacy (magic 0/1) log entries: one plain message, or a compressed wrapper's inner messages.

The inner message set of a compressed wrapper is read as a stream of decompressed chunks and
handed out in groups, so a wrapper holding millions of messages never sits in memory whole
(each inner message is still read whole).
"""

from __future__ import annotations

from collections.abc import Iterator

from kdump.errors import InvalidRecordError
from kdump.format.batch import (
    FRAMING,
    LEGACY_V0_HEADER,
    LOG_OVERHEAD,
    MIN_RECORD_OVERHEAD,
    Batch,
    TimestampType,
    legacy_crc_valid,
)
from kdump.format.codecs import Codec, decompress_chunks
from kdump.format.record_stream import GROUP_SIZE, ChunkReader

Buffer = bytes | bytearray | memoryview

_Entry = tuple[int, int, int, "bytes | None", "bytes | None", bool]
"""An inner message: (offset as stored, crc, timestamp, key, value, crc valid)."""


def legacy_message(buf: Buffer, pos: int, size: int) -> tuple[int, int, int, int, bytes | None, bytes | None]:
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


def legacy_records(buf: Buffer, batch: Batch, record_type: type) -> Iterator[list]:
    """The records of one legacy entry, in groups (AbstractLegacyRecordBatch.DeepRecordsIterator)."""
    size = batch.size - LOG_OVERHEAD
    crc, magic, _attributes, timestamp, key, value = legacy_message(buf, batch.position, size)
    codec = batch.codec
    if codec is Codec.NONE:
        valid = batch.is_valid if batch.is_valid is not None else legacy_crc_valid(buf, batch.position, size, crc)
        yield [record_type(batch.last_offset, timestamp, key, value, (), -1, crc, valid)]
        return
    if value is None:
        raise InvalidRecordError("compressed legacy wrapper has a null value")
    compressed = value
    log_append = batch.timestamp_type is TimestampType.LOG_APPEND_TIME

    def records(groups: Iterator[list[_Entry]], base: int | None) -> Iterator[list]:
        for group in groups:
            yield [record_type(off if base is None else base + off, timestamp if log_append else ts, k, v, (), -1,
                               c, ok) for off, c, ts, k, v, ok in group]

    if magic == 0:  # v0: inner offsets are absolute
        yield from records(_inner_entries(compressed, codec, magic), None)
        return
    # v1: inner offsets are relative to the last one, which is known only at the end. Small sets are
    # kept from the first reading; larger ones are decompressed a second time.
    kept: list[_Entry] | None = []
    last_inner = 0
    for group in _inner_entries(compressed, codec, magic):
        last_inner = group[-1][0]
        if kept is not None:
            kept.extend(group)
            if len(kept) > GROUP_SIZE:
                kept = None
    wrapper_offset = batch.last_offset
    if wrapper_offset == 0:                          # some librdkafka producers
        base = 0
    elif wrapper_offset < last_inner:
        raise InvalidRecordError(f"Found invalid wrapper offset in compressed v1 message set, wrapper "
                                 f"offset '{wrapper_offset}' is less than the last inner message "
                                 f"offset '{last_inner}' and it is not zero")
    else:
        base = wrapper_offset - last_inner
    yield from records(iter([kept]) if kept is not None else _inner_entries(compressed, codec, magic), base)


def _inner_entries(compressed: bytes, codec: Codec, magic: int) -> Iterator[list[_Entry]]:
    reader = ChunkReader(decompress_chunks(codec, compressed, magic=magic))
    group: list[_Entry] = []
    while not reader.at_end():
        if not reader.need(LOG_OVERHEAD):
            raise InvalidRecordError("truncated inner message framing in compressed legacy wrapper")
        offset, size = FRAMING.unpack_from(reader.data, reader.pos)
        if size < MIN_RECORD_OVERHEAD or not reader.need(LOG_OVERHEAD + size):
            raise InvalidRecordError(f"invalid inner message size {size} in compressed legacy wrapper")
        data, pos = reader.data, reader.pos
        crc, _, attributes, ts, key, value = legacy_message(data, pos, size)
        if attributes & 0x07:
            raise InvalidRecordError("Compressed message set contains a compressed inner message")
        group.append((offset, crc, ts, key, value, legacy_crc_valid(data, pos, size, crc)))
        reader.pos += LOG_OVERHEAD + size
        if len(group) >= GROUP_SIZE:
            yield group
            group = []
    if group:
        yield group
