"""Log entries: v2 record batches and legacy (v0/v1) messages, and Kafka's framing rules.

Layouts mirror org.apache.kafka.common.record.DefaultRecordBatch (v2) and LegacyRecord /
AbstractLegacyRecordBatch (v0/v1). ``scan_batches`` reproduces FileLogInputStream.nextBatch:
stop when 17 or fewer bytes remain, fail on a size field below 14, stop at a partial tail.
Only headers are parsed here; records are decoded on demand by ``records``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from enum import IntEnum
from typing import NamedTuple

from kdump.accelerators import BATCH_SCAN_FUNCTION, load
from kdump.errors import CodecError, CorruptRecordError
from kdump.format.codecs import Codec, codec_from_id
from kdump.format.crc import crc32, crc32c
from kdump.format.layout import BATCH_FIELDS, check_fields

Buffer = bytes | bytearray | memoryview

# Log entry framing, common to every magic (FileLogInputStream).
FRAMING = struct.Struct(
    ">q"  # offset / baseOffset
    "i"   # size: bytes that follow this field
)
LOG_OVERHEAD = FRAMING.size                     # 12
HEADER_SIZE_UP_TO_MAGIC = LOG_OVERHEAD + 5      # 17: framing + partitionLeaderEpoch/crc + magic
MIN_RECORD_OVERHEAD = 14                        # LegacyRecord.RECORD_OVERHEAD_V0

# DefaultRecordBatch header, magic 2.
V2_HEADER = struct.Struct(
    ">q"  # baseOffset
    "i"   # batchLength
    "i"   # partitionLeaderEpoch (not covered by the CRC)
    "b"   # magic
    "I"   # crc (CRC-32C of attributes .. end)
    "h"   # attributes
    "i"   # lastOffsetDelta
    "q"   # baseTimestamp (the delete horizon when attribute bit 6 is set)
    "q"   # maxTimestamp
    "q"   # producerId
    "h"   # producerEpoch
    "i"   # baseSequence
    "i"   # recordsCount
)
V2_HEADER_SIZE = V2_HEADER.size                           # 61
V2_CRC_OFFSET = struct.calcsize(">qiib")                  # 17
V2_ATTRIBUTES_OFFSET = V2_CRC_OFFSET + 4                  # 21: CRC coverage starts here

# LegacyRecord, after the 12-byte framing.
LEGACY_V0_HEADER = struct.Struct(
    ">I"  # crc (CRC-32 of magic .. end)
    "b"   # magic
    "b"   # attributes
)
LEGACY_V1_TIMESTAMP = struct.Struct(">q")  # magic 1 only, right after attributes
LEGACY_CRC_START = LOG_OVERHEAD + 4        # CRC coverage starts at the magic byte

ATTR_CODEC_MASK = 0x07
ATTR_TIMESTAMP_TYPE = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_DELETE_HORIZON = 0x40

INT32_MAX = 0x7FFFFFFF
"""Java's Integer.MAX_VALUE: sequence wrap, index relative offsets, segment and message size limits."""


class TimestampType(IntEnum):
    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    @property
    def kafka_name(self) -> str:
        """TimestampType.name in Kafka, by id (-1, 0, 1)."""
        return ("NoTimestampType", "CreateTime", "LogAppendTime")[self + 1]


def increment_sequence(sequence: int, increment: int) -> int:
    """DefaultRecordBatch.incrementSequence: int32 arithmetic that wraps to 0, not negative."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


class Batch(NamedTuple):
    """One log entry's header: a v2 record batch, or a v0/v1 message (possibly a compressed wrapper).

    For legacy entries the v2-only fields hold Kafka's defaults (AbstractLegacyRecordBatch) and ``base_offset``
    equals ``last_offset`` (Kafka only knows a wrapper's first offset after decompressing it).
    A NamedTuple rather than a dataclass: immutable all the same, and several times cheaper to
    build, which matters at hundreds of thousands of batches a second.
    """

    position: int
    base_offset: int
    last_offset: int
    size: int                      # 12 + the size field: the whole entry
    magic: int
    crc: int                       # as stored, unsigned
    attributes: int
    partition_leader_epoch: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int | None      # None for legacy entries
    is_valid: bool | None          # None when the CRC was not checked

    @property
    def is_legacy(self) -> bool:
        return self.magic < 2

    @property
    def end(self) -> int:
        return self.position + self.size

    @property
    def codec_id(self) -> int:
        return self.attributes & ATTR_CODEC_MASK

    @property
    def codec(self) -> Codec:
        """Raises CodecError for ids 5-7, as Kafka's CompressionType.forId does."""
        try:
            return codec_from_id(self.codec_id)
        except CodecError as err:
            err.position = self.position
            raise

    @property
    def timestamp_type(self) -> TimestampType:
        if self.magic == 0:
            return TimestampType.NO_TIMESTAMP_TYPE
        if self.attributes & ATTR_TIMESTAMP_TYPE:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def log_append_time(self) -> int | None:
        """The broker's append time, which overrides every record's timestamp; None under CreateTime."""
        return self.max_timestamp if self.timestamp_type is TimestampType.LOG_APPEND_TIME else None

    @property
    def is_transactional(self) -> bool:
        return not self.is_legacy and bool(self.attributes & ATTR_TRANSACTIONAL)

    @property
    def is_control(self) -> bool:
        return not self.is_legacy and bool(self.attributes & ATTR_CONTROL)

    @property
    def delete_horizon_ms(self) -> int | None:
        if not self.is_legacy and self.attributes & ATTR_DELETE_HORIZON:
            return self.base_timestamp
        return None

    @property
    def last_offset_delta(self) -> int:
        return self.last_offset - self.base_offset

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == -1:
            return -1
        return increment_sequence(self.base_sequence, self.last_offset_delta)


_new_batch = tuple.__new__  # skips NamedTuple's Python-level __new__

# The C walk over runs of plain v2 batches (kdump/format/_v2records.c ``scan``): the shallow scan's
# per-batch work without the interpreter's ~3 us a batch (benchmarks/bench_startup.py's shallow dump).
_c_scan = load(*BATCH_SCAN_FUNCTION)
_C_SCAN_BATCHES = 256   # batches per call: a list of a window of tiny batches stays small


check_fields(Batch, BATCH_FIELDS)


def read_batch(buf: Buffer, pos: int, *, check_crc: bool = True, base: int = 0) -> Batch:
    """Parse the entry header at ``pos``; the caller has checked that the whole entry is in ``buf``.

    ``buf[0]`` is byte ``base`` of the file, so the batch's ``position`` is ``base + pos``: a reader
    that holds a window of a file gets file positions without rebuilding each batch.
    Raises CorruptRecordError when a v2 header cannot be read (Kafka: "Failed to load record batch").
    """
    offset, size = FRAMING.unpack_from(buf, pos)
    magic = buf[pos + 16]
    if magic > 127:
        magic -= 256
    total = LOG_OVERHEAD + size
    if magic >= 2:
        if pos + V2_HEADER_SIZE > len(buf):
            raise CorruptRecordError(f"Failed to load record batch at position {base + pos}: "
                                     f"fewer than {V2_HEADER_SIZE} bytes left for its header", position=base + pos)
        (base_offset, _, leader_epoch, magic, stored_crc, attributes, last_delta, base_ts, max_ts,
         producer_id, producer_epoch, base_seq, count) = V2_HEADER.unpack_from(buf, pos)
        valid = None
        if check_crc:
            valid = total >= V2_HEADER_SIZE and crc32c(buf[pos + V2_ATTRIBUTES_OFFSET:pos + total]) == stored_crc
        return _new_batch(Batch, (base + pos, base_offset, base_offset + last_delta, total, magic, stored_crc,
                                  attributes & 0xFFFF, leader_epoch, base_ts, max_ts, producer_id, producer_epoch,
                                  base_seq, count, valid))
    stored_crc, magic, attributes = LEGACY_V0_HEADER.unpack_from(buf, pos + LOG_OVERHEAD)
    timestamp = -1
    if magic == 1 and size >= MIN_RECORD_OVERHEAD + LEGACY_V1_TIMESTAMP.size:
        (timestamp,) = LEGACY_V1_TIMESTAMP.unpack_from(buf, pos + LOG_OVERHEAD + LEGACY_V0_HEADER.size)
    valid = legacy_crc_valid(buf, pos, size, stored_crc) if check_crc else None
    return Batch(base + pos, offset, offset, total, magic, stored_crc, attributes & 0xFF, -1, timestamp, timestamp,
                 -1, -1, -1, None, valid)


def legacy_crc_valid(buf: Buffer, pos: int, size: int, stored_crc: int) -> bool:
    """LegacyRecord.isValid for the message whose framing starts at ``pos`` (``size``: its size field)."""
    return size >= MIN_RECORD_OVERHEAD and crc32(buf[pos + LEGACY_CRC_START:pos + LOG_OVERHEAD + size]) == stored_crc


def scan_batches(buf: Buffer, start: int = 0, end: int | None = None, *,
                 check_crc: bool = True, base: int = 0) -> Iterator[Batch]:
    """Yield every complete entry in ``buf[start:end]`` following Kafka's framing rules.

    Stops silently at a tail of 17 bytes or fewer and at an entry that runs past ``end``;
    raises CorruptRecordError (Kafka's exact text, minus the file name) for a size below 14.
    ``start`` and ``end`` index ``buf``; yielded positions are ``base`` + the index (see read_batch).
    """
    for run in scan_batch_runs(buf, start, end, check_crc=check_crc, base=base):
        yield from run


def scan_batch_runs(buf: Buffer, start: int = 0, end: int | None = None, *,
                    check_crc: bool = True, base: int = 0) -> Iterator[list[Batch]]:
    """``scan_batches``' entries a non-empty list at a time: a shallow reader's loop then runs per list
    (up to 256 batches where the C walk runs, one entry where the Python code below does)."""
    if end is None:
        end = len(buf)
    buf_len = len(buf)
    pos = start
    unpack = FRAMING.unpack_from
    unpack_v2 = V2_HEADER.unpack_from
    new = _new_batch
    # The CRC reads a slice of a view: a slice of a bytearray (LogBatches' window) is a copy, which over a
    # shallow scan is the whole segment copied once more. Released when the scan ends or is dropped, so
    # the window can be resized again.
    view = memoryview(buf)
    c_scan = _c_scan
    c_crc = crc32c if check_crc else None
    try:
        while pos < end - HEADER_SIZE_UP_TO_MAGIC:
            if c_scan is not None:
                # The run of plain v2 batches from here, a bounded list at a time; what it stops at
                # (another magic, a bad size, a partial entry) is the Python code's below.
                batches, pos = c_scan(buf, pos, end, base, c_crc, Batch, _C_SCAN_BATCHES)
                if batches:
                    yield batches
                    continue
            if buf[pos + 16] == 2 and pos + V2_HEADER_SIZE <= buf_len:
                # The common case, inlined (read_batch handles the rest): one unpack reads the whole v2 header.
                (base_offset, size, leader_epoch, magic, stored_crc, attributes, last_delta, base_ts, max_ts,
                 producer_id, producer_epoch, base_seq, count) = unpack_v2(buf, pos)
                if size < MIN_RECORD_OVERHEAD:
                    raise CorruptRecordError(f"Found record size {size} smaller than minimum record overhead "
                                             f"({MIN_RECORD_OVERHEAD})", position=base + pos)
                if pos > end - LOG_OVERHEAD - size:
                    return
                total = LOG_OVERHEAD + size
                valid = None
                if check_crc:
                    valid = (total >= V2_HEADER_SIZE
                             and crc32c(view[pos + V2_ATTRIBUTES_OFFSET:pos + total]) == stored_crc)
                yield [new(Batch, (base + pos, base_offset, base_offset + last_delta, total, magic, stored_crc,
                                   attributes & 0xFFFF, leader_epoch, base_ts, max_ts, producer_id, producer_epoch,
                                   base_seq, count, valid))]
                pos += total
                continue
            _, size = unpack(buf, pos)
            if size < MIN_RECORD_OVERHEAD:
                raise CorruptRecordError(f"Found record size {size} smaller than minimum record overhead "
                                         f"({MIN_RECORD_OVERHEAD})", position=base + pos)
            if pos > end - LOG_OVERHEAD - size:
                return
            yield [read_batch(buf, pos, check_crc=check_crc, base=base)]
            pos += LOG_OVERHEAD + size
    finally:
        view.release()

