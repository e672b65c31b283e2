"""kdump.format.codecs against an independent implementation: kafka-python's ``kafka.codec``.

For every codec: our compress -> kafka-python's decompress, kafka-python's compress -> our
decompress, on hypothesis payloads from empty to a few hundred KiB (several snappy and lz4
blocks). Then the Kafka-specific framing cases one by one, and a fuzz test that random bytes
only ever raise CodecError.

kafka-python needs python-snappy for snappy and xxhash for its old-Kafka lz4 helpers. Without
python-snappy its ``snappy`` module attribute is replaced by a cramjam shim (python-snappy 0.7 is
itself a thin wrapper over cramjam); without xxhash the old-Kafka oracle tests are skipped.
"""

from __future__ import annotations

import gzip
import io
import os
import random
import struct
import types

import cramjam
import kafka.codec as kc
import lz4.frame
import pytest
import zstandard
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kdump.errors import CodecError
from kdump.format.codecs import Codec, codec_from_id, compress, decompress

FAST = settings(max_examples=60, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow])

needs_xxhash = pytest.mark.skipif(kc.xxhash is None,
                                  reason="kafka-python's old-Kafka lz4 helpers need the xxhash package")

XERIAL_HEADER = bytes.fromhex("82534e4150505900" "00000001" "00000001")
BIG = random.Random(7).randbytes(150_000) + b"kafka " * 20_000  # > 100 KiB, part incompressible


@pytest.fixture(autouse=True)
def _kafka_python_snappy(monkeypatch: pytest.MonkeyPatch) -> None:
    if kc.snappy is None:
        shim = types.SimpleNamespace(compress=lambda b: bytes(cramjam.snappy.compress_raw(b)),
                                     decompress=lambda b: bytes(cramjam.snappy.decompress_raw(b)))
        monkeypatch.setattr(kc, "snappy", shim)


def _payload(pattern: bytes, repeats: int, seed: int, noise: int) -> bytes:
    return pattern * repeats + random.Random(seed).randbytes(noise)


# Small arbitrary payloads, and big ones built from a seed (hypothesis would be slow to draw
# 300 KiB byte by byte): a repeated pattern (compressible) plus random bytes (incompressible,
# so lz4 stores some blocks raw).
payloads = st.one_of(
    st.binary(max_size=3000),
    st.builds(_payload, st.binary(min_size=1, max_size=40), st.integers(0, 8000),
              st.integers(0, 2**32), st.integers(0, 150_000)),
)


# --- the enum and ids ----------------------------------------------------------------------------

def test_codec_names() -> None:
    assert [(c.value, c.kafka_name, c.name) for c in Codec] == [
        (0, "none", "NONE"), (1, "gzip", "GZIP"), (2, "snappy", "SNAPPY"), (3, "lz4", "LZ4"),
        (4, "zstd", "ZSTD")]


@pytest.mark.parametrize("codec_id", range(5))
def test_codec_from_known_id(codec_id: int) -> None:
    assert codec_from_id(codec_id) is Codec(codec_id)


@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_codec_from_unknown_id_has_kafkas_message(codec_id: int) -> None:
    with pytest.raises(CodecError) as err:
        codec_from_id(codec_id)
    assert str(err.value) == f"Unknown compression type id: {codec_id}"


# --- both directions against kafka-python ---------------------------------------------------------

@FAST
@given(payloads)
@example(b"")
@example(BIG)
def test_gzip_against_kafka_python(data: bytes) -> None:
    ours = compress(Codec.GZIP, data)
    assert kc.gzip_decode(ours) == data
    assert decompress(Codec.GZIP, kc.gzip_encode(data)) == data


@FAST
@given(payloads)
@example(b"")
@example(BIG)
def test_snappy_against_kafka_python(data: bytes) -> None:
    ours = compress(Codec.SNAPPY, data)
    # Same framing and 32 KiB block size as snappy-java, so the bytes are identical.
    assert ours == kc.snappy_encode(data, xerial_compatible=True)
    if data:  # a bare 16-byte header: see test_snappy_empty_payload_is_a_bare_xerial_header
        assert kc.snappy_decode(ours) == data
    assert decompress(Codec.SNAPPY, kc.snappy_encode(data, xerial_compatible=True)) == data


def test_snappy_empty_payload_is_a_bare_xerial_header() -> None:
    # SnappyOutputStream writes its header even with no data; kafka-python's detector needs more
    # than 16 bytes, so it cannot be the oracle here.
    assert compress(Codec.SNAPPY, b"") == XERIAL_HEADER
    assert decompress(Codec.SNAPPY, XERIAL_HEADER) == b""


@FAST
@given(payloads)
@example(b"")
@example(BIG)
def test_lz4_against_kafka_python(data: bytes) -> None:
    ours = compress(Codec.LZ4, data)
    assert kc.lz4_decode(ours) == data
    # kafka-python's frames carry a content size, which Kafka (and we) skip.
    assert decompress(Codec.LZ4, kc.lz4_encode(data)) == data


@needs_xxhash
@FAST
@given(payloads)
@example(b"")
@example(BIG)
def test_lz4_magic0_against_kafka_python_old_kafka(data: bytes) -> None:
    ours = compress(Codec.LZ4, data, magic=0)
    assert ours == kc.lz4_encode_old_kafka(data)
    assert kc.lz4_decode_old_kafka(ours) == data
    assert decompress(Codec.LZ4, kc.lz4_encode_old_kafka(data), magic=0) == data


@FAST
@given(payloads)
@example(b"")
@example(BIG)
def test_zstd_against_kafka_python(data: bytes) -> None:
    ours = compress(Codec.ZSTD, data)
    assert kc.zstd_decode(ours) == data
    assert decompress(Codec.ZSTD, kc.zstd_encode(data)) == data


@pytest.mark.parametrize(("codec", "level"), [(codec, level) for codec in Codec for level in (None, 1, 9)
                                               if level is None or codec is not Codec.SNAPPY])
def test_levels_round_trip(codec: Codec, level: int | None) -> None:
    assert decompress(codec, compress(codec, BIG, level=level)) == BIG


@pytest.mark.parametrize("codec", list(Codec))
def test_memoryview_input(codec: Codec) -> None:
    blob = b"\x00" * 5 + compress(codec, BIG)
    assert decompress(codec, memoryview(bytearray(blob))[5:]) == BIG


# --- gzip ------------------------------------------------------------------------------------------

def test_gzip_concatenated_members() -> None:
    named = io.BytesIO()
    with gzip.GzipFile(filename="inner.txt", mode="wb", fileobj=named, mtime=0) as out:
        out.write(b"third")
    blob = compress(Codec.GZIP, b"first ") + kc.gzip_encode(b"second ") + named.getvalue()
    assert decompress(Codec.GZIP, blob) == b"first second third"


def test_gzip_members_larger_than_the_input_zlib_is_handed_at_a_time() -> None:
    # Input goes to zlib 64 KiB at a time: members (and the junk after them) that cross those slices.
    first, second = os.urandom(150_000), os.urandom(70_000)
    blob = compress(Codec.GZIP, first) + kc.gzip_encode(second) + b"junk after the members"
    assert decompress(Codec.GZIP, memoryview(blob)) == gzip.decompress(blob[:-22]) == first + second


def test_gzip_ignores_tail_that_is_not_a_member_header() -> None:
    # KafkaGZIPInputStream.readTrailer: "ignore any malformed, do nothing".
    member = compress(Codec.GZIP, b"payload")
    assert decompress(Codec.GZIP, member + b"junk after the member") == b"payload"
    assert decompress(Codec.GZIP, member + b"\x1f\x8b\x08") == b"payload"


def test_gzip_single_member_header_is_standard() -> None:
    blob = compress(Codec.GZIP, b"abc")
    assert blob[:4] == b"\x1f\x8b\x08\x00"
    assert gzip.decompress(blob) == b"abc"


def test_gzip_errors_are_one_line_and_name_the_codec() -> None:
    with pytest.raises(CodecError) as err:
        decompress(Codec.GZIP, b"not gzip at all")
    assert str(err.value) == ("gzip: invalid compressed data "
                              "(Error -3 while decompressing data: incorrect header check)")
    with pytest.raises(CodecError, match="^gzip: truncated"):
        decompress(Codec.GZIP, compress(Codec.GZIP, BIG)[:-5])
    with pytest.raises(CodecError, match="^gzip: "):
        decompress(Codec.GZIP, b"")


# --- snappy ----------------------------------------------------------------------------------------

def test_snappy_raw_block_without_xerial_magic() -> None:
    raw = kc.snappy_encode(BIG, xerial_compatible=False)
    assert raw[:8] != XERIAL_HEADER[:8]
    assert decompress(Codec.SNAPPY, raw) == BIG


def test_snappy_blocks_hold_32_kib_of_input() -> None:
    blob = compress(Codec.SNAPPY, b"z" * (32 * 1024 * 3 + 1))
    lengths, pos = [], len(XERIAL_HEADER)
    while pos < len(blob):
        (length,) = struct.unpack_from(">i", blob, pos)
        block = blob[pos + 4:pos + 4 + length]
        lengths.append(len(cramjam.snappy.decompress_raw(block)))
        pos += 4 + length
    assert lengths == [32 * 1024] * 3 + [1]


def test_snappy_first_header_version_is_not_checked() -> None:
    # snappy-java's readHeader only looks at the magic (kafka-python issue 2414: little-endian
    # version fields from some producers).
    blob = compress(Codec.SNAPPY, BIG)
    assert decompress(Codec.SNAPPY, blob[:8] + struct.pack("<ii", 1, 1) + blob[16:]) == BIG


def test_snappy_concatenated_xerial_streams() -> None:
    # snappy-java reads a second stream header in place of a block length.
    assert decompress(Codec.SNAPPY, compress(Codec.SNAPPY, b"one ") + compress(Codec.SNAPPY, b"two")) == b"one two"


def test_snappy_errors() -> None:
    blob = compress(Codec.SNAPPY, BIG)
    with pytest.raises(CodecError, match="^snappy: block length"):
        decompress(Codec.SNAPPY, blob[:-10])
    with pytest.raises(CodecError, match="^snappy: "):
        decompress(Codec.SNAPPY, b"")
    with pytest.raises(CodecError, match="^snappy: invalid compressed data"):
        decompress(Codec.SNAPPY, XERIAL_HEADER + struct.pack(">i", 3) + b"\xff\xff\xff")


# --- lz4 -------------------------------------------------------------------------------------------

def _lz4_with_hc(frame: bytes, hc: int) -> bytes:
    return frame[:6] + bytes([hc]) + frame[7:]


def test_lz4_header_matches_kafkas_writer() -> None:
    # Lz4BlockOutputStream: magic, FLG 0x60 (version 1, independent blocks), BD 0x40 (64 KiB),
    # HC = second byte of xxh32(FLG BD) = 0x82; for magic 0 xxh32 covers the magic too = 0x1a.
    assert compress(Codec.LZ4, b"abc")[:7] == bytes.fromhex("04224d18604082")
    assert compress(Codec.LZ4, b"abc", magic=0)[:7] == bytes.fromhex("04224d1860401a")
    assert compress(Codec.LZ4, b"")[7:] == b"\x00\x00\x00\x00"  # just the end mark


def test_lz4_blocks_are_at_most_64_kib_and_incompressible_ones_stored_raw() -> None:
    blob = compress(Codec.LZ4, BIG)
    pos, sizes, raw = 7, [], []
    while True:
        (word,) = struct.unpack_from("<I", blob, pos)
        if word == 0:
            break
        sizes.append(word & 0x7FFFFFFF)
        raw.append(bool(word & 0x80000000))  # Lz4BlockOutputStream's LZ4_FRAME_INCOMPRESSIBLE_MASK
        pos += 4 + (word & 0x7FFFFFFF)
    assert len(sizes) == -(-len(BIG) // 65536)
    assert all(size <= 65536 for size in sizes)
    assert raw[0] and not raw[-1]  # BIG starts with random bytes and ends with a pattern


def test_lz4_broken_header_checksum_only_for_magic_0() -> None:
    correct = compress(Codec.LZ4, BIG)
    broken = compress(Codec.LZ4, BIG, magic=0)
    assert broken != correct
    assert decompress(Codec.LZ4, broken, magic=0) == BIG
    assert decompress(Codec.LZ4, correct, magic=0) == BIG
    assert decompress(Codec.LZ4, _lz4_with_hc(correct, 0x00), magic=0) == BIG  # Kafka skips HC
    for magic in (1, 2):
        assert decompress(Codec.LZ4, correct, magic=magic) == BIG
        with pytest.raises(CodecError, match="^lz4: "):
            decompress(Codec.LZ4, broken, magic=magic)


def test_lz4_content_size_checked_then_skipped() -> None:
    with_size = lz4.frame.compress(BIG, store_size=True, block_linked=False)
    assert with_size[4] & 0x08
    assert decompress(Codec.LZ4, with_size) == BIG
    # Magic 0: neither the HC nor the content size is looked at (a forged huge size must not
    # make lz4.frame try to allocate it).
    forged = with_size[:6] + struct.pack("<Q", 2**62) + b"\x00" + with_size[15:]
    assert decompress(Codec.LZ4, forged, magic=0) == BIG
    with pytest.raises(CodecError, match="descriptor checksum"):
        decompress(Codec.LZ4, with_size[:14] + bytes([with_size[14] ^ 1]) + with_size[15:])


def test_lz4_rejects_what_kafka_rejects() -> None:
    with pytest.raises(CodecError, match="dependent block"):
        decompress(Codec.LZ4, lz4.frame.compress(BIG, block_linked=True))
    with pytest.raises(CodecError, match="invalid magic"):
        decompress(Codec.LZ4, b"\x00" * 20)
    with pytest.raises(CodecError, match="prematurely"):
        decompress(Codec.LZ4, b"\x04\x22\x4d\x18\x60")
    with pytest.raises(CodecError, match="^lz4: invalid compressed data"):
        decompress(Codec.LZ4, compress(Codec.LZ4, BIG)[:-100])


def test_lz4_reads_one_frame_and_ignores_the_rest() -> None:
    # Lz4BlockInputStream stops at the end mark.
    assert decompress(Codec.LZ4, compress(Codec.LZ4, b"one") + compress(Codec.LZ4, b"two")) == b"one"


# --- zstd ------------------------------------------------------------------------------------------

def test_zstd_concatenated_and_skippable_frames() -> None:
    skippable = struct.pack("<II", 0x184D2A50, 3) + b"???"
    blob = compress(Codec.ZSTD, b"one ") + skippable + kc.zstd_encode(b"two ") + compress(Codec.ZSTD, BIG)
    assert decompress(Codec.ZSTD, blob) == b"one two " + BIG


def test_zstd_frames_have_no_content_size_like_zstd_jni_streams() -> None:
    params = zstandard.get_frame_parameters(compress(Codec.ZSTD, BIG))
    assert params.content_size == zstandard.CONTENTSIZE_UNKNOWN
    assert not params.has_checksum


def test_zstd_truncated_or_trailing_garbage() -> None:
    blob = compress(Codec.ZSTD, BIG)
    with pytest.raises(CodecError, match="^zstd: truncated"):
        decompress(Codec.ZSTD, blob[:-3])
    with pytest.raises(CodecError, match="^zstd: "):
        decompress(Codec.ZSTD, blob + b"garbage!")
    with pytest.raises(CodecError, match="^zstd: "):
        decompress(Codec.ZSTD, b"")


@pytest.mark.parametrize("magic", [0, 1])
def test_zstd_needs_magic_2(magic: int) -> None:
    message = f"ZStandard compression is not supported for magic {magic}"
    with pytest.raises(CodecError) as err:
        decompress(Codec.ZSTD, compress(Codec.ZSTD, b"abc"), magic=magic)
    assert str(err.value) == message
    with pytest.raises(CodecError) as err:
        compress(Codec.ZSTD, b"abc", magic=magic)
    assert str(err.value) == message


# --- none, and fuzz --------------------------------------------------------------------------------

def test_none_passes_bytes_through() -> None:
    assert decompress(Codec.NONE, memoryview(b"abc")) == b"abc"
    assert compress(Codec.NONE, b"abc") == b"abc"


# Prefixes that get random bytes past the first checks of each format.
_PREFIXES = [b"", b"\x1f\x8b\x08\x00", XERIAL_HEADER, b"\x04\x22\x4d\x18\x60\x40",
             b"\x04\x22\x4d\x18\x68\x70", b"\x04\x22\x4d\x18\x7c\x70", b"\x28\xb5\x2f\xfd",
             b"\x50\x2a\x4d\x18"]
_GOOD = {codec: compress(codec, b"0123456789" * 700 + bytes(range(256))) for codec in Codec if codec}


@settings(max_examples=100, deadline=None, database=None)
@given(codec=st.sampled_from([c for c in Codec if c]), magic=st.sampled_from([0, 1, 2]),
       prefix=st.sampled_from(_PREFIXES), tail=st.binary(max_size=64))
def test_random_bytes_only_raise_codec_error(codec: Codec, magic: int, prefix: bytes, tail: bytes) -> None:
    try:
        decompress(codec, prefix + tail, magic=magic)
    except CodecError as err:
        assert "\n" not in str(err)


@settings(max_examples=100, deadline=None, database=None)
@given(codec=st.sampled_from([c for c in Codec if c]), magic=st.sampled_from([0, 1, 2]),
       data=st.data())
def test_damaged_streams_only_raise_codec_error(codec: Codec, magic: int, data: st.DataObject) -> None:
    blob = bytearray(_GOOD[codec])
    for _ in range(data.draw(st.integers(1, 4))):
        blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(blob)))
    try:
        decompress(codec, bytes(blob[:cut]), magic=magic)
    except CodecError as err:
        assert "\n" not in str(err)
