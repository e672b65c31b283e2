"""Kafka's compression codecs: the ids in a batch's attributes and the byte framing of each.

Each codec has the framing of the Java stream class Kafka wraps around a batch
(clients/src/main/java/org/apache/kafka/common/compress/*.java):

- gzip: ``GZIPOutputStream`` writes one member; ``KafkaGZIPInputStream`` reads concatenated
  members and ignores a tail that does not start a well-formed member header.
- snappy: snappy-java's xerial stream (16-byte header, then [int32 BE length][raw snappy block],
  32 KiB of input per block); input without the xerial magic is one raw snappy block.
- lz4: ``Lz4BlockOutputStream``: one LZ4 frame, independent 64 KiB blocks, no checksums, no
  content size; for magic 0 the header checksum is computed wrongly and ignored on read.
- zstd: zstd-jni's stream (no content size); the reader reads across frames. Magic 2 only.

Every failure is a ``CodecError`` whose reason starts with the codec's name.
"""

from __future__ import annotations

import enum
import importlib.util
import struct
import sys
import threading
import zlib
from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING

from kdump.errors import CodecError


def _on_first_use(name: str) -> ModuleType:
    """``import name``, run when an attribute is first used: most runs meet no codec (a shallow scan
    never decompresses a v2 batch), and the three libraries took a third of kdump's start-up."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.loader is not None, name  # declared dependencies of kdump
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:
    import cramjam
    import lz4.frame as lz4_frame
    import zstandard
else:
    cramjam = _on_first_use("cramjam")
    lz4_frame = _on_first_use("lz4.frame")
    zstandard = _on_first_use("zstandard")

Buffer = bytes | bytearray | memoryview


class Codec(enum.IntEnum):
    """Compression id, attribute bits 0-2 (Kafka's ``CompressionType``)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @property
    def kafka_name(self) -> str:
        """``CompressionType.name``, what ``compresscodec:`` shows since Kafka 3.0."""
        return self.name.lower()


def codec_from_id(codec_id: int) -> Codec:
    """``CompressionType.forId``: ids 5-7 fit in the 3 attribute bits but name no codec."""
    try:
        return Codec(codec_id)
    except ValueError:
        raise CodecError(f"Unknown compression type id: {codec_id}") from None


CHUNK_SIZE = 1 << 20
"""Most bytes one step of ``decompress_chunks`` hands out (snappy's raw blocks aside, see there)."""


def decompress(codec: Codec, data: Buffer, *, magic: int = 2) -> bytes:
    """Decompress one batch's (v2) or wrapper value's (v0/v1) payload, as Kafka reads it.

    ``magic`` matters for lz4 (magic 0 ignores the frame header checksum) and zstd (magic 2 only).
    Raises CodecError, and nothing else, for any input bytes. Holds the whole output: readers of
    batches that may be large use ``decompress_chunks``.
    """
    return b"".join(decompress_chunks(codec, data, magic=magic))


def decompress_chunks(codec: Codec, data: Buffer, *, magic: int = 2,
                      chunk_size: int = CHUNK_SIZE) -> Iterator[Buffer]:
    """The decompressed bytes of ``data`` as a stream of non-empty pieces of at most ``chunk_size``.

    Memory stays bounded whatever the compression ratio: a few kilobytes that inflate to
    gigabytes are read a chunk at a time, never whole. The one exception is a raw snappy block,
    which the library only decodes whole; snappy cannot inflate more than ~21 times, so such a
    piece is bounded by the input's size. Raises CodecError, and nothing else, for any input.
    """
    if codec is Codec.NONE:
        view = memoryview(data)
        for start in range(0, len(view), chunk_size):
            yield view[start:start + chunk_size]
        return
    _check_magic(codec, magic)
    try:
        if codec is Codec.GZIP:
            yield from _gzip_chunks(data, chunk_size)
        elif codec is Codec.SNAPPY:
            yield from _snappy_chunks(data)
        elif codec is Codec.LZ4:
            yield from _lz4_chunks(data, magic, chunk_size)
        else:
            yield from _zstd_chunks(data, chunk_size)
    except CodecError:
        raise
    # The libraries signal bad input with all of these (zlib.error, RuntimeError from lz4,
    # cramjam.DecompressionError, ZstdError; MemoryError/OverflowError for absurd sizes).
    except (zlib.error, RuntimeError, ValueError, OverflowError, MemoryError, struct.error,
            cramjam.DecompressionError, zstandard.ZstdError) as err:
        raise CodecError(f"{codec.kafka_name}: invalid compressed data ({_one_line(err)})") from err


def compress(codec: Codec, data: bytes, *, magic: int = 2, level: int | None = None) -> bytes:
    """Compress ``data`` into the bytes Kafka's producer/broker would store for ``codec``.

    ``level`` is the library's level (None = Kafka's default: gzip 6, lz4 fast, zstd 3);
    snappy has none.
    """
    if codec is Codec.NONE:
        return bytes(data)
    _check_magic(codec, magic)
    try:
        if codec is Codec.GZIP:
            comp = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION if level is None else level,
                                    zlib.DEFLATED, 31)
            return comp.compress(data) + comp.flush()
        if codec is Codec.SNAPPY:
            return _snappy_compress(data)
        if codec is Codec.LZ4:
            return _lz4_compress(data, magic, level)
        return _zstd_compressor(3 if level is None else level).compress(data)
    except (zlib.error, RuntimeError, ValueError, cramjam.CompressionError, zstandard.ZstdError) as err:
        raise CodecError(f"{codec.kafka_name}: cannot compress ({_one_line(err)})") from err


def _check_magic(codec: Codec, magic: int) -> None:
    if codec is Codec.ZSTD and magic < 2:
        # Kafka's text, from MemoryRecordsBuilder and AbstractLegacyRecordBatch.
        raise CodecError(f"ZStandard compression is not supported for magic {magic}")


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text or type(err).__name__


# --- gzip --------------------------------------------------------------------------------------

_GZIP_INPUT = 1 << 16
"""Compressed bytes handed to zlib per call: zlib copies what a call leaves unread (``unconsumed_tail``),
so handing it the whole batch copied the rest of the batch on every output chunk."""


def _gzip_chunks(data: Buffer, chunk_size: int) -> Iterator[bytes]:
    view = memoryview(data).cast("B")
    size = len(view)
    start = 0
    while True:
        # wbits 31: gzip wrapper, checks the CRC-32 and ISIZE trailer. max_length bounds each
        # output; the input it did not reach waits in unconsumed_tail.
        member = zlib.decompressobj(31)
        fed = start
        pending: Buffer = b""
        while not member.eof:
            if not pending:
                if fed >= size:
                    raise CodecError("gzip: truncated data (no complete gzip member)")
                pending = view[fed:fed + _GZIP_INPUT]
                fed += len(pending)
            left = len(pending)
            out = member.decompress(pending, chunk_size)
            pending = member.unconsumed_tail
            if out:
                yield out
            elif not member.eof and pending and len(pending) == left:
                raise CodecError("gzip: truncated data (no complete gzip member)")
        start = fed - len(member.unused_data)
        # KafkaGZIPInputStream goes on while the rest starts with a well-formed member header
        # and silently ignores anything else.
        if start >= size or not _gzip_header_complete(bytes(view[start:])):
            return


def _gzip_header_complete(buf: bytes) -> bool:
    """True if ``buf`` starts with a whole, valid gzip header (RFC 1952 section 2.3)."""
    if len(buf) < 10 or buf[0] != 0x1F or buf[1] != 0x8B or buf[2] != 8:
        return False
    flags, pos = buf[3], 10
    if flags & 0x04:  # FEXTRA
        if len(buf) < pos + 2:
            return False
        pos += 2 + int.from_bytes(buf[pos:pos + 2], "little")
    for bit in (0x08, 0x10):  # FNAME, FCOMMENT: zero-terminated
        if flags & bit:
            end = buf.find(b"\x00", pos)
            if end < 0:
                return False
            pos = end + 1
    if flags & 0x02:  # FHCRC: low 16 bits of the CRC-32 of the header so far
        hcrc = int.from_bytes(buf[pos:pos + 2], "little")
        return len(buf) >= pos + 2 and hcrc == zlib.crc32(buf[:pos]) & 0xFFFF
    return len(buf) >= pos


# --- snappy ------------------------------------------------------------------------------------

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)  # magic, version 1, compatible version 1
_XERIAL_MAGIC_HEAD = struct.unpack(">i", _XERIAL_MAGIC[:4])[0]  # as a block length: a new header
_XERIAL_BLOCK = 32 * 1024  # snappy-java's default block size


def _snappy_chunks(data: Buffer) -> Iterator[Buffer]:
    # Mirrors snappy-java's SnappyInputStream (readHeader, hasNextChunk). One xerial block is
    # at most ~21 times its compressed size (snappy's densest copy: 3 bytes for 64).
    size = len(data)
    if size == 0:
        raise CodecError("snappy: empty input")
    if size < len(_XERIAL_HEADER) or data[:8] != _XERIAL_MAGIC:
        block = cramjam.snappy.decompress_raw(data)
        if len(block):
            yield memoryview(block)  # the library's buffer as is: no copy of a possibly large block
        return
    # The first header's version fields are not checked (some producers write them little-endian).
    pos = len(_XERIAL_HEADER)
    while size - pos >= 4:  # snappy-java stops quietly at a tail shorter than a length field
        length = struct.unpack_from(">i", data, pos)[0]
        if length == _XERIAL_MAGIC_HEAD:  # another stream's header (concatenated streams)
            if size - pos < len(_XERIAL_HEADER):
                raise CodecError("snappy: truncated xerial header in a concatenated stream")
            if data[pos:pos + 8] != _XERIAL_MAGIC:
                break
            if struct.unpack_from(">i", data, pos + 8)[0] < 1:
                raise CodecError("snappy: incompatible xerial stream version in a concatenated stream")
            pos += len(_XERIAL_HEADER)
            continue
        pos += 4
        if length < 0 or length > size - pos:
            raise CodecError(f"snappy: block length {length} at byte {pos - 4} exceeds the "
                             f"{size - pos} bytes left")
        block = cramjam.snappy.decompress_raw(data[pos:pos + length])
        if len(block):
            yield memoryview(block)
        pos += length


def _snappy_compress(data: bytes) -> bytes:
    view = memoryview(data)
    parts = [_XERIAL_HEADER]
    for start in range(0, len(view), _XERIAL_BLOCK):
        block = bytes(cramjam.snappy.compress_raw(view[start:start + _XERIAL_BLOCK]))
        parts.append(struct.pack(">i", len(block)))
        parts.append(block)
    return b"".join(parts)


# --- lz4 ---------------------------------------------------------------------------------------

_LZ4_MAGIC = b"\x04\x22\x4d\x18"  # 0x184D2204 little-endian
_LZ4_CONTENT_SIZE = 0x08  # FLG bit 3: 8-byte content size follows BD


def _lz4_chunks(data: Buffer, magic: int, chunk_size: int) -> Iterator[bytes]:
    # The header is checked here as Lz4BlockInputStream.readHeader does; the blocks, block and
    # content checksums are left to lz4.frame (C). Like Kafka, lz4.frame reads one frame and
    # ignores bytes after its end mark.
    if len(data) < 7:
        raise CodecError("lz4: stream ended prematurely (no complete frame header)")
    if data[:4] != _LZ4_MAGIC:
        raise CodecError("lz4: not an LZ4 frame (invalid magic bytes)")
    flg, bd = data[4], data[5]
    if flg >> 6 != 1:
        raise CodecError(f"lz4: frame version {flg >> 6} is unsupported")
    if flg & 0x03 or bd & 0x8F:
        raise CodecError("lz4: reserved frame descriptor bits are set")
    if not flg & 0x20:
        raise CodecError("lz4: dependent block stream is unsupported")
    if not 4 <= (bd >> 4) & 7 <= 7:
        raise CodecError(f"lz4: block size value {(bd >> 4) & 7} is not between 4 and 7")
    hc_pos = 6 + (8 if flg & _LZ4_CONTENT_SIZE else 0)
    if len(data) <= hc_pos:
        raise CodecError("lz4: stream ended prematurely (no complete frame header)")
    if magic != 0 and not flg & _LZ4_CONTENT_SIZE:
        frame: Buffer = data  # Kafka's own frames: lz4.frame checks HC
    else:
        if magic != 0 and data[hc_pos] != _lz4_hc(bytes(data[4:hc_pos])):
            raise CodecError("lz4: frame descriptor checksum mismatch")
        # Rebuild the header before handing over to lz4.frame: with magic 0 Kafka ignores the HC
        # byte (old clients computed it wrongly), and Kafka always skips the content size, which
        # lz4.frame would trust for its output allocation (a forged one raises MemoryError).
        descriptor = bytes((flg & ~_LZ4_CONTENT_SIZE, bd))
        frame = b"".join((_LZ4_MAGIC, descriptor, bytes((_lz4_hc(descriptor),)), data[hc_pos + 1:]))
    reader = lz4_frame.LZ4FrameDecompressor()
    out = reader.decompress(frame, max_length=chunk_size)
    while True:
        if out:
            yield out
        if reader.eof:
            return
        if reader.needs_input:
            raise CodecError("lz4: invalid compressed data (frame incomplete: no end mark)")
        out = reader.decompress(b"", max_length=chunk_size)


def _lz4_compress(data: bytes, magic: int, level: int | None) -> bytes:
    # Lz4BlockOutputStream: FLG 0x60 (version 1, independent blocks), BD 0x40 (64 KiB), stores an
    # incompressible block raw, ends with a zero end mark.
    frame = lz4_frame.compress(data, compression_level=0 if level is None else level,
                               block_size=lz4_frame.BLOCKSIZE_MAX64KB, block_linked=False,
                               content_checksum=False, block_checksum=False, store_size=False)
    if magic == 0:
        # Kafka's writer for magic 0 hashes the magic bytes too (useBrokenFlagDescriptorChecksum).
        frame = frame[:6] + bytes((_lz4_hc(frame[:6]),)) + frame[7:]
    return frame


_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _lz4_hc(header: bytes) -> int:
    """Frame header checksum byte: second byte of xxHash32(seed 0).

    Pure Python because the input is at most 14 bytes (magic + FLG + BD + content size), which
    keeps xxh32's 16-byte stripe loop out and avoids a dependency for a handful of bytes. The
    C library cannot be used here: it only ever computes the correct checksum.
    """
    if len(header) >= 16:
        raise ValueError("_lz4_hc handles frame headers only (< 16 bytes)")
    h = (_P5 + len(header)) & _M32
    i = 0
    while i + 4 <= len(header):
        h = (h + int.from_bytes(header[i:i + 4], "little") * _P3) & _M32
        h = (((h << 17) | (h >> 15)) & _M32) * _P4 & _M32
        i += 4
    for byte in header[i:]:
        h = (h + byte * _P5) & _M32
        h = (((h << 11) | (h >> 21)) & _M32) * _P1 & _M32
    h = ((h ^ (h >> 15)) * _P2) & _M32
    h = ((h ^ (h >> 13)) * _P3) & _M32
    h ^= h >> 16
    return (h >> 8) & 0xFF


# --- zstd --------------------------------------------------------------------------------------

# Contexts are reused (a new one per batch made decompression 1.8x slower)
# but kept per thread, because a zstandard context must not be used by two threads at once.
_zstd_local = threading.local()


def _zstd_decompressor() -> zstandard.ZstdDecompressor:
    dctx = getattr(_zstd_local, "dctx", None)
    if dctx is None:
        dctx = _zstd_local.dctx = zstandard.ZstdDecompressor()
    return dctx


def _zstd_compressor(level: int) -> zstandard.ZstdCompressor:
    cache = getattr(_zstd_local, "cctx", None)
    if cache is None:
        cache = _zstd_local.cctx = {}
    cctx = cache.get(level)
    if cctx is None:
        # Like zstd-jni's stream: no content size in the frame header, no checksum.
        cctx = cache[level] = zstandard.ZstdCompressor(level=level, write_content_size=False)
    return cctx


_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_SKIPPABLE = 0x184D2A50  # the low 4 bits are free
_ZSTD_BLOCK_MAX = 128 * 1024  # no block decodes to more (Block_Maximum_Size)
_ZSTD_TRUNCATED = "zstd: truncated data (no complete zstd frame)"


def _zstd_chunks(data: Buffer, chunk_size: int) -> Iterator[bytes]:
    # zstandard's decompressobj writes out all it can of its input at once, so it is fed whole
    # blocks, a few at a time: a block never decodes to more than 128 KiB. Walking the frame
    # layout (RFC 8878) here also finds each frame's end, so truncation is detected, like
    # zstd-jni's stream, which reads across frames. Skippable frames decode to nothing.
    dctx = _zstd_decompressor()
    size = len(data)
    pos = 0
    while True:
        if size - pos < 4:
            if pos and pos == size:
                return
            raise CodecError(_ZSTD_TRUNCATED)
        magic = int.from_bytes(data[pos:pos + 4], "little")
        if magic & 0xFFFFFFF0 == _ZSTD_SKIPPABLE:
            if size - pos < 8:
                raise CodecError(_ZSTD_TRUNCATED)
            pos += 8 + int.from_bytes(data[pos + 4:pos + 8], "little")
            if pos > size:
                raise CodecError(_ZSTD_TRUNCATED)
            continue
        frame = dctx.decompressobj()
        if magic != _ZSTD_MAGIC or size - pos < 5:
            frame.decompress(data[pos:pos + 5])  # the library words the error for a bad magic
            raise CodecError(_ZSTD_TRUNCATED if magic == _ZSTD_MAGIC else "zstd: unsupported frame format")
        descriptor = data[pos + 4]
        single_segment = descriptor >> 5 & 1
        content_size_bytes = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
        block = pos + 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[descriptor & 3] + content_size_bytes
        fed = pos  # data[pos:fed] has been given to the decompressor
        budget = chunk_size
        while True:
            if size - block < 3:
                raise CodecError(_ZSTD_TRUNCATED)
            header = int.from_bytes(data[block:block + 3], "little")
            kind = header >> 1 & 3
            length = header >> 3
            block += 3 + (1 if kind == 1 else length)  # an RLE block stores one byte
            if block > size:
                raise CodecError(_ZSTD_TRUNCATED)
            budget -= length if kind < 2 else _ZSTD_BLOCK_MAX
            last = header & 1
            if last and descriptor & 0x04:  # content checksum
                block += 4
                if block > size:
                    raise CodecError(_ZSTD_TRUNCATED)
            if budget <= 0 or last:
                out = frame.decompress(data[fed:block])
                fed = block
                budget = chunk_size
                if out:
                    yield out
            if last:
                break
        if not frame.eof:
            raise CodecError(_ZSTD_TRUNCATED)
        pos = block
