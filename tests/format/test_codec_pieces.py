"""``decompress_stream``: the compressed bytes fed in pieces (a batch too large to hold, read from the file a
window at a time) decode to the same bytes, and fail with the same error, however they are cut."""

from __future__ import annotations

import gzip
import random
import struct
import zlib

import pytest

from kdump.errors import CodecError
from kdump.format.codecs import Codec, compress, decompress, decompress_stream

DATA = random.Random(3).randbytes(70_000) + b"abc" * 20_000   # more than 64 KiB compressed


def cut(data: bytes, sizes: list[int]) -> list[bytes]:
    pieces, pos, i = [], 0, 0
    while pos < len(data):
        pieces.append(data[pos:pos + sizes[i % len(sizes)]])
        pos += sizes[i % len(sizes)]
        i += 1
    return pieces


def outcome(codec: Codec, pieces: list[bytes], size: int, magic: int = 2) -> bytes | str:
    try:
        return b"".join(decompress_stream(codec, pieces, size, magic=magic))
    except CodecError as err:
        return str(err)


def gzip_member(data: bytes, *, name: bytes | None = None, extra: bytes | None = None, comment: bytes | None = None,
                hcrc: bool = False, reserved: int = 0) -> bytes:
    """One gzip member with the optional header fields of RFC 1952 section 2.3."""
    flags = (0x04 if extra is not None else 0) | (0x08 if name is not None else 0) | \
        (0x10 if comment is not None else 0) | (0x02 if hcrc else 0) | reserved
    header = bytes((0x1F, 0x8B, 8, flags)) + b"\x00" * 4 + b"\x00\x03"
    if extra is not None:
        header += struct.pack("<H", len(extra)) + extra
    if name is not None:
        header += name + b"\x00"
    if comment is not None:
        header += comment + b"\x00"
    if hcrc:
        header += struct.pack("<H", zlib.crc32(header) & 0xFFFF)
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = deflate.compress(data) + deflate.flush()
    return header + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


SECOND = gzip_member(b"second", name=b"n" * 70_000,  # a name longer than 64 KiB
                      extra=b"x" * 300, comment=b"c", hcrc=True)
GZIP_CASES = {
    # Python's gzip module reads concatenated members with all the optional fields, as Java's does.
    "members": compress(Codec.GZIP, DATA) + SECOND,
    "reserved-flags-in-a-later-member": compress(Codec.GZIP, b"first") + gzip_member(b"later", reserved=0xE0),
}


@pytest.mark.parametrize("name", list(GZIP_CASES))
def test_gzip_members_in_pieces_are_pythons(name: str) -> None:
    blob = GZIP_CASES[name]
    for sizes in ([1, 2, 3, 4093], [7, 1, 64 << 10], [len(blob)]):
        assert outcome(Codec.GZIP, cut(blob, sizes), len(blob)) == gzip.decompress(blob)


def test_gzip_tail_that_is_not_a_whole_member_header_is_ignored_in_pieces() -> None:
    # Java's GZIPInputStream.readTrailer: a header it cannot read (truncated, bad header CRC) ends the stream.
    first = compress(Codec.GZIP, DATA)
    for tail in (SECOND[:20], SECOND[:70_100], SECOND[:70_313], b"\x1f\x8b\x07" + b"\x00" * 20,
                 gzip_member(b"x", hcrc=True)[:10] + b"\x00\x00" + gzip_member(b"x")[10:]):
        blob = first + tail
        for sizes in ([1, 2, 3, 4093], [5, 64 << 10]):
            assert outcome(Codec.GZIP, cut(blob, sizes), len(blob)) == DATA


def snappy_concatenated() -> bytes:
    return compress(Codec.SNAPPY, DATA) + compress(Codec.SNAPPY, b"more")


CASES = [
    (Codec.GZIP, compress(Codec.GZIP, DATA)),
    (Codec.SNAPPY, snappy_concatenated()),
    (Codec.SNAPPY, bytes(__import__("cramjam").snappy.compress_raw(DATA))),
    (Codec.LZ4, compress(Codec.LZ4, DATA)),
    (Codec.ZSTD, compress(Codec.ZSTD, DATA[:100_000]) + compress(Codec.ZSTD, DATA[100_000:])),
]


@pytest.mark.parametrize(("codec", "blob"), CASES, ids=["gzip", "snappy", "snappy-raw", "lz4", "zstd"])
def test_any_cut_gives_the_whole_buffers_bytes_and_errors(codec: Codec, blob: bytes) -> None:
    rng = random.Random(int(codec))
    variants = [blob, blob[:len(blob) // 2], blob[:-1], blob + b"\x00" * 9,
                blob[:len(blob) // 3] + bytes(b ^ 0x5A for b in blob[len(blob) // 3:len(blob) // 3 + 50])
                + blob[len(blob) // 3 + 50:]]
    for variant in variants:
        try:
            whole: bytes | str = decompress(codec, variant)
        except CodecError as err:
            whole = str(err)
        for sizes in ([1, 2, 3, 4093], [rng.randrange(1, 5000) for _ in range(50)], [64 << 10, 3]):
            assert outcome(codec, cut(variant, sizes), len(variant)) == whole, (codec, sizes)
    assert whole != DATA or codec is Codec.SNAPPY  # the flipped bytes do not decode silently (snappy aside)


def test_old_lz4_frame_with_its_broken_header_checksum_in_pieces() -> None:
    blob = compress(Codec.LZ4, DATA, magic=0)
    assert outcome(Codec.LZ4, cut(blob, [1, 3, 4096]), len(blob), magic=0) == DATA

