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

Each framing is in ``kdump.format.codec_framing``; this module maps codec ids to it.

Every failure is a ``CodecError`` whose reason starts with the codec's name.
"""

from __future__ import annotations

import enum
import struct
import zlib
from collections.abc import Iterable, Iterator

from kdump.errors import CodecError
from kdump.format.codec_framing import (
    cramjam,
    gzip_chunks,
    lz4_chunks,
    lz4_compress,
    snappy_chunks,
    snappy_compress,
    zstandard,
    zstd_chunks,
    zstd_compressor,
)
from kdump.format.piece_reader import Buffer, PieceReader


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
    gigabytes are read a chunk at a time, never whole. The one exception is a snappy block (see
    ``decompress_stream``). Raises CodecError, and nothing else, for any input.
    """
    return decompress_stream(codec, (data,), len(data), magic=magic, chunk_size=chunk_size)


def decompress_stream(codec: Codec, pieces: Iterable[Buffer], size: int, *, magic: int = 2,
                      chunk_size: int = CHUNK_SIZE) -> Iterator[Buffer]:
    """``decompress_chunks`` of the ``size`` compressed bytes that ``pieces`` hand out in order.

    The input is read a bounded slice at a time (64 KiB for gzip and lz4, a block or up to
    ``chunk_size`` of blocks for zstd), so a batch too large to hold is decompressed as it is read
    from the file; how the input is cut into pieces changes nothing in the output or the errors.
    The exception is snappy, whose library decodes a block only whole: one xerial block is held
    (snappy-java's SnappyInputStream reads a whole block into memory too; Kafka's producer writes
    32 KiB ones), and input without the xerial magic is one raw block, held whole as snappy-java
    holds it (it reads the whole stream before calling Snappy.uncompress). A snappy block inflates
    at most ~21 times.
    """
    if codec is Codec.NONE:
        return _uncompressed_chunks(pieces, chunk_size)
    _check_magic(codec, magic)
    return _decompressed(codec, PieceReader(pieces, size), magic, chunk_size)


def _uncompressed_chunks(pieces: Iterable[Buffer], chunk_size: int) -> Iterator[Buffer]:
    for piece in pieces:
        view = memoryview(piece).cast("B")
        for start in range(0, len(view), chunk_size):
            yield view[start:start + chunk_size]


def _decompressed(codec: Codec, src: PieceReader, magic: int, chunk_size: int) -> Iterator[Buffer]:
    try:
        if codec is Codec.GZIP:
            yield from gzip_chunks(src, chunk_size)
        elif codec is Codec.SNAPPY:
            yield from snappy_chunks(src)
        elif codec is Codec.LZ4:
            yield from lz4_chunks(src, magic, chunk_size)
        else:
            yield from zstd_chunks(src, chunk_size)
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
            return snappy_compress(data)
        if codec is Codec.LZ4:
            return lz4_compress(data, magic, level)
        return zstd_compressor(3 if level is None else level).compress(data)
    except (zlib.error, RuntimeError, ValueError, cramjam.CompressionError, zstandard.ZstdError) as err:
        raise CodecError(f"{codec.kafka_name}: cannot compress ({_one_line(err)})") from err


def _check_magic(codec: Codec, magic: int) -> None:
    if codec is Codec.ZSTD and magic < 2:
        # Kafka's text, from MemoryRecordsBuilder and AbstractLegacyRecordBatch.
        raise CodecError(f"ZStandard compression is not supported for magic {magic}")


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text or type(err).__name__
