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
import struct
import threading
import zlib

import cramjam
import lz4.frame
import zstandard

from kdump.errors import CodecError

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

    @property
    def enum_name(self) -> str:
        """The Java enum constant, what ``compresscodec:`` showed up to Kafka 2.8."""
        return self.name


def codec_from_id(codec_id: int) -> Codec:
    """``CompressionType.forId``: ids 5-7 fit in the 3 attribute bits but name no codec."""
    try:
        return Codec(codec_id)
    except ValueError:
        raise CodecError(f"Unknown compression type id: {codec_id}") from None


def decompress(codec: Codec, data: Buffer, *, magic: int = 2) -> bytes:
    """Decompress one batch's (v2) or wrapper value's (v0/v1) payload, as Kafka reads it.

    ``magic`` matters for lz4 (magic 0 ignores the frame header checksum) and zstd (magic 2 only).
    Raises CodecError, and nothing else, for any input bytes.
    """
    if codec is Codec.NONE:
        return bytes(data)
    _check_magic(codec, magic)
    try:
        if codec is Codec.GZIP:
            return _gzip_decompress(data)
        if codec is Codec.SNAPPY:
            return _snappy_decompress(data)
        if codec is Codec.LZ4:
            return _lz4_decompress(data, magic)
        return _zstd_decompress(data)
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

def _gzip_decompress(data: Buffer) -> bytes:
    parts: list[bytes] = []
    rest: Buffer = data
    while True:
        # wbits 31: gzip wrapper, checks the CRC-32 and ISIZE trailer. zlib reads memoryviews
        # without copying; unused_data is the (rare) tail after this member.
        member = zlib.decompressobj(31)
        parts.append(member.decompress(rest))
        if not member.eof:
            raise CodecError("gzip: truncated data (no complete gzip member)")
        rest = member.unused_data
        # KafkaGZIPInputStream goes on while the rest starts with a well-formed member header
        # and silently ignores anything else.
        if not rest or not _gzip_header_complete(rest):
            return b"".join(parts)  # a single part comes back as is, not copied


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


def _snappy_decompress(data: Buffer) -> bytes:
    # Mirrors snappy-java's SnappyInputStream (readHeader, hasNextChunk).
    size = len(data)
    if size == 0:
        raise CodecError("snappy: empty input")
    if size < len(_XERIAL_HEADER) or data[:8] != _XERIAL_MAGIC:
        return bytes(cramjam.snappy.decompress_raw(data))
    # The first header's version fields are not checked (some producers write them little-endian).
    parts: list[bytes] = []
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
        parts.append(bytes(cramjam.snappy.decompress_raw(data[pos:pos + length])))
        pos += length
    return b"".join(parts)


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


def _lz4_decompress(data: Buffer, magic: int) -> bytes:
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
        return lz4.frame.decompress(data)  # fast path, Kafka's own frames: lz4.frame checks HC
    if magic != 0 and data[hc_pos] != _lz4_hc(bytes(data[4:hc_pos])):
        raise CodecError("lz4: frame descriptor checksum mismatch")
    # Rebuild the header before handing over to lz4.frame: with magic 0 Kafka ignores the HC
    # byte (old clients computed it wrongly), and Kafka always skips the content size, which
    # lz4.frame would trust for its output allocation (a forged one raises MemoryError).
    descriptor = bytes((flg & ~_LZ4_CONTENT_SIZE, bd))
    return lz4.frame.decompress(b"".join((_LZ4_MAGIC, descriptor, bytes((_lz4_hc(descriptor),)),
                                          data[hc_pos + 1:])))


def _lz4_compress(data: bytes, magic: int, level: int | None) -> bytes:
    # Lz4BlockOutputStream: FLG 0x60 (version 1, independent blocks), BD 0x40 (64 KiB), stores an
    # incompressible block raw, ends with a zero end mark.
    frame = lz4.frame.compress(data, compression_level=0 if level is None else level,
                               block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
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

# Contexts are reused (a new one per batch made decompression 1.8x slower, PERFORMANCE-NOTES.md)
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


def _zstd_decompress(data: Buffer) -> bytes:
    # One decompressobj per frame: it reports eof (so truncation is detected, which
    # read_across_frames=True cannot do) and hands back the next frame as unused_data.
    # Skippable frames count as frames and decode to nothing.
    dctx = _zstd_decompressor()
    parts: list[bytes] = []
    rest: Buffer = data
    while True:
        frame = dctx.decompressobj()
        parts.append(frame.decompress(rest))
        if not frame.eof:
            raise CodecError("zstd: truncated data (no complete zstd frame)")
        rest = frame.unused_data
        if not rest:
            return b"".join(parts)
