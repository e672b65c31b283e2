"""The byte framing of each codec, read from bounded pieces and written as Kafka's Java streams do.

``kdump.format.codecs`` dispatches on the codec id; this module holds what each codec's stream class
does (clients/src/main/java/org/apache/kafka/common/compress/*.java, Kafka 4.3.0): gzip members,
snappy-java's xerial blocks, lz4 frames with Kafka's magic-0 header checksum, zstd frames. Each
reader takes a ``PieceReader`` so a batch's compressed bytes can come from the file a piece at a time.
"""

from __future__ import annotations

import importlib.util
import struct
import sys
import threading
import zlib
from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING

from kdump.errors import CodecError
from kdump.format.piece_reader import Buffer, PieceReader


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
    parent, _, child = name.rpartition(".")
    if parent:  # as the import system does for a submodule, so `import lz4.frame` elsewhere sees it
        setattr(importlib.import_module(parent), child, module)
    return module


if TYPE_CHECKING:
    import cramjam
    import lz4.frame as lz4_frame
    import zstandard
else:
    cramjam = _on_first_use("cramjam")
    lz4_frame = _on_first_use("lz4.frame")
    zstandard = _on_first_use("zstandard")



# --- gzip --------------------------------------------------------------------------------------

_GZIP_INPUT = 1 << 16
"""Compressed bytes handed to zlib per call: zlib copies what a call leaves unread (``unconsumed_tail``),
so handing it the whole batch copied the rest of the batch on every output chunk."""


def gzip_chunks(src: PieceReader, chunk_size: int) -> Iterator[bytes]:
    # wbits 31: gzip wrapper, checks the CRC-32 and ISIZE trailer. max_length bounds each output;
    # the input it did not reach waits in unconsumed_tail.
    member: zlib._Decompress | None = zlib.decompressobj(31)
    while member is not None:
        pending: Buffer = b""
        while not member.eof:
            if not pending:
                pending = src.read(_GZIP_INPUT)
                if not pending:
                    raise CodecError("gzip: truncated data (no complete gzip member)")
            left = len(pending)
            out = member.decompress(pending, chunk_size)
            pending = member.unconsumed_tail
            if out:
                yield out
            elif not member.eof and pending and len(pending) == left:
                raise CodecError("gzip: truncated data (no complete gzip member)")
        src.unread(len(member.unused_data))  # a suffix of the last slice read
        member = _gzip_next_member(src)


def _gzip_next_member(src: PieceReader) -> zlib._Decompress | None:
    """A decompressor that has read the header of the member starting here, or None where Kafka
    stops: KafkaGZIPInputStream (as java.util.zip.GZIPInputStream.readTrailer) goes on
    while the rest starts with a well-formed member header (readHeader) and silently ignores
    anything else. The header is read as it comes, never held: Java's readHeader ignores the
    reserved flag bits, which zlib rejects, so zlib is given the flags without them and without
    FHCRC, whose header CRC is checked here (RFC 1952 section 2.3)."""
    fixed = src.exact(10)
    if len(fixed) < 10 or fixed[0] != 0x1F or fixed[1] != 0x8B or fixed[2] != 8:
        return None
    flags = fixed[3]
    hcrc = zlib.crc32(fixed)
    member = zlib.decompressobj(31)
    member.decompress(bytes((0x1F, 0x8B, 8, flags & 0x1D)) + bytes(fixed[4:]))
    if flags & 0x04:  # FEXTRA: XLEN, then XLEN bytes
        xlen = src.exact(2)
        if len(xlen) < 2:
            return None
        hcrc = zlib.crc32(xlen, hcrc)
        member.decompress(xlen)
        left = int.from_bytes(xlen, "little")
        while left:
            piece = src.read(min(left, _GZIP_INPUT))
            if not piece:
                return None
            hcrc = zlib.crc32(piece, hcrc)
            member.decompress(piece)
            left -= len(piece)
    for bit in (0x08, 0x10):  # FNAME, FCOMMENT: zero-terminated
        if flags & bit:
            while True:
                piece = src.read(_GZIP_INPUT)
                if not piece:
                    return None
                end = bytes(piece).find(0)
                if end >= 0:
                    src.unread(len(piece) - end - 1)
                    piece = piece[:end + 1]
                hcrc = zlib.crc32(piece, hcrc)
                member.decompress(piece)
                if end >= 0:
                    break
    if flags & 0x02:  # FHCRC: low 16 bits of the CRC-32 of the header so far
        stored = src.exact(2)
        if len(stored) < 2 or int.from_bytes(stored, "little") != hcrc & 0xFFFF:
            return None
    return member


# --- snappy ------------------------------------------------------------------------------------

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)  # magic, version 1, compatible version 1
_XERIAL_MAGIC_HEAD = struct.unpack(">i", _XERIAL_MAGIC[:4])[0]  # as a block length: a new header
_XERIAL_BLOCK = 32 * 1024  # snappy-java's default block size


def snappy_chunks(src: PieceReader) -> Iterator[Buffer]:
    # Mirrors snappy-java's SnappyInputStream (readHeader, hasNextChunk). One xerial block is at
    # most ~21 times its compressed size (snappy's densest copy: 3 bytes for 64).
    if src.left == 0:
        raise CodecError("snappy: empty input")
    head = src.exact(len(_XERIAL_HEADER))
    if len(head) < len(_XERIAL_HEADER) or head[:8] != _XERIAL_MAGIC:
        block = cramjam.snappy.decompress_raw(bytes(head) + src.rest())
        if len(block):
            yield memoryview(block)  # the library's buffer as is: no copy of a possibly large block
        return
    # The first header's version fields are not checked (some producers write them little-endian).
    while True:
        field = src.exact(4)
        if len(field) < 4:  # snappy-java stops quietly at a tail shorter than a length field
            return
        length = struct.unpack(">i", field)[0]
        if length == _XERIAL_MAGIC_HEAD:  # another stream's header (concatenated streams)
            rest = src.exact(len(_XERIAL_HEADER) - 4)
            if len(rest) < len(_XERIAL_HEADER) - 4:
                raise CodecError("snappy: truncated xerial header in a concatenated stream")
            if bytes(field) + bytes(rest[:4]) != _XERIAL_MAGIC:
                return
            if struct.unpack_from(">i", rest, 4)[0] < 1:
                raise CodecError("snappy: incompatible xerial stream version in a concatenated stream")
            continue
        if length < 0 or length > src.left:
            raise CodecError(f"snappy: block length {length} at byte {src.position - 4} exceeds the "
                             f"{src.left} bytes left")
        block = cramjam.snappy.decompress_raw(src.exact(length))
        if len(block):
            yield memoryview(block)


def snappy_compress(data: bytes) -> bytes:
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
_LZ4_INPUT = 1 << 16  # compressed bytes per call (lz4.frame copies what a call leaves unread)


def lz4_chunks(src: PieceReader, magic: int, chunk_size: int) -> Iterator[bytes]:
    # The header is checked here as Lz4BlockInputStream.readHeader does; the blocks, block and
    # content checksums are left to lz4.frame (C), fed 64 KiB at a time. Like Kafka, lz4.frame
    # reads one frame and ignores bytes after its end mark.
    head = src.exact(7)
    if len(head) < 7:
        raise CodecError("lz4: stream ended prematurely (no complete frame header)")
    if head[:4] != _LZ4_MAGIC:
        raise CodecError("lz4: not an LZ4 frame (invalid magic bytes)")
    flg, bd = head[4], head[5]
    if flg >> 6 != 1:
        raise CodecError(f"lz4: frame version {flg >> 6} is unsupported")
    if flg & 0x03 or bd & 0x8F:
        raise CodecError("lz4: reserved frame descriptor bits are set")
    if not flg & 0x20:
        raise CodecError("lz4: dependent block stream is unsupported")
    if not 4 <= (bd >> 4) & 7 <= 7:
        raise CodecError(f"lz4: block size value {(bd >> 4) & 7} is not between 4 and 7")
    if flg & _LZ4_CONTENT_SIZE:
        more = src.exact(8)
        head = bytes(head) + bytes(more)
        if len(more) < 8:
            raise CodecError("lz4: stream ended prematurely (no complete frame header)")
    hc_pos = len(head) - 1
    if magic != 0 and not flg & _LZ4_CONTENT_SIZE:
        piece: Buffer = head  # Kafka's own frames: lz4.frame checks HC
    else:
        if magic != 0 and head[hc_pos] != _lz4_hc(bytes(head[4:hc_pos])):
            raise CodecError("lz4: frame descriptor checksum mismatch")
        # Rebuild the header before handing over to lz4.frame: with magic 0 Kafka ignores the HC
        # byte (old clients computed it wrongly), and Kafka always skips the content size, which
        # lz4.frame would trust for its output allocation (a forged one raises MemoryError).
        descriptor = bytes((flg & ~_LZ4_CONTENT_SIZE, bd))
        piece = b"".join((_LZ4_MAGIC, descriptor, bytes((_lz4_hc(descriptor),))))
    piece = bytes(piece) + bytes(src.read(_LZ4_INPUT))  # one call for a small batch
    reader = lz4_frame.LZ4FrameDecompressor()
    while True:
        out = reader.decompress(piece, max_length=chunk_size)
        while True:
            if out:
                yield out
            if reader.eof:
                return
            if reader.needs_input:
                break
            out = reader.decompress(b"", max_length=chunk_size)
        piece = src.read(_LZ4_INPUT)
        if not piece:
            raise CodecError("lz4: invalid compressed data (frame incomplete: no end mark)")


def lz4_compress(data: bytes, magic: int, level: int | None) -> bytes:
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


def zstd_compressor(level: int) -> zstandard.ZstdCompressor:
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


def zstd_chunks(src: PieceReader, chunk_size: int) -> Iterator[bytes]:
    # zstandard's decompressobj writes out all it can of its input at once, so it is fed whole
    # blocks, a few at a time: a block never decodes to more than 128 KiB. Walking the frame
    # layout (RFC 8878) here also finds each frame's end, so truncation is detected, like
    # zstd-jni's stream, which reads across frames. Skippable frames decode to nothing.
    dctx = _zstd_decompressor()
    started = False
    while True:
        head = src.exact(4)
        if len(head) < 4:
            if started and not head:
                return
            raise CodecError(_ZSTD_TRUNCATED)
        started = True
        magic = int.from_bytes(head, "little")
        if magic & 0xFFFFFFF0 == _ZSTD_SKIPPABLE:
            skippable = src.exact(4)
            if len(skippable) < 4 or not src.skip(int.from_bytes(skippable, "little")):
                raise CodecError(_ZSTD_TRUNCATED)
            continue
        frame = dctx.decompressobj()
        descriptor_byte = src.exact(1)
        if magic != _ZSTD_MAGIC or not descriptor_byte:
            frame.decompress(bytes(head) + bytes(descriptor_byte))  # the library words the error for a bad magic
            raise CodecError(_ZSTD_TRUNCATED if magic == _ZSTD_MAGIC else "zstd: unsupported frame format")
        descriptor = descriptor_byte[0]
        single_segment = descriptor >> 5 & 1
        content_size_bytes = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
        rest = src.exact((0 if single_segment else 1) + (0, 1, 2, 4)[descriptor & 3] + content_size_bytes)
        parts: list[Buffer] = [head, descriptor_byte, rest]  # read, not yet given to the decompressor
        budget = chunk_size
        while True:
            block_header = src.exact(3)
            if len(block_header) < 3:
                raise CodecError(_ZSTD_TRUNCATED)
            header = int.from_bytes(block_header, "little")
            kind = header >> 1 & 3
            length = header >> 3
            body = src.exact(1 if kind == 1 else length)  # an RLE block stores one byte
            if len(body) < (1 if kind == 1 else length):
                raise CodecError(_ZSTD_TRUNCATED)
            parts += (block_header, body)
            budget -= length if kind < 2 else _ZSTD_BLOCK_MAX
            last = header & 1
            if last and descriptor & 0x04:  # content checksum
                checksum = src.exact(4)
                if len(checksum) < 4:
                    raise CodecError(_ZSTD_TRUNCATED)
                parts.append(checksum)
            if budget <= 0 or last:
                out = frame.decompress(b"".join(parts))
                parts = []
                budget = chunk_size
                if out:
                    yield out
            if last:
                break
        if not frame.eof:
            raise CodecError(_ZSTD_TRUNCATED)
