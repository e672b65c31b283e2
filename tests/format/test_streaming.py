"""Streamed decompression and record decoding: bounded pieces, windows, lazy values, Kafka's wrapping varints.

Expected values come from Kafka's source: ByteUtils.readVarint/readVarlong keep the low 32/64 bits
of an overlong varint, DefaultRecord adds deltas with Java's wrapping long arithmetic, and
DefaultRecordBatch's iterator reads one more byte after the declared records
("Incorrect declared batch size, records still remaining in file") or fails on a stream that ends
inside a record ("Incorrect declared batch size, premature EOF reached").
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kdump.errors import InvalidRecordError
from kdump.format import record_stream
from kdump.format import records as records_module
from kdump.format.batch import V2_ATTRIBUTES_OFFSET, V2_HEADER, V2_HEADER_SIZE, scan_batches
from kdump.format.codecs import CHUNK_SIZE, Codec, compress, decompress, decompress_chunks
from kdump.format.crc import crc32c
from kdump.format.encode import encode_batch_v2, encode_record_v2
from kdump.format.record_stream import LazyValue
from kdump.format.records import Record, count_records, decode_records, decode_v2_record_area, iter_records

try:
    from kdump.format._v2records import decode as c_decode
except ImportError:
    c_decode = None

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
COMPRESSED = [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]


def raw_batch(area: bytes, count: int, codec: Codec = Codec.NONE, *, base_offset: int = 0, base_ts: int = 0) -> bytes:
    """A v2 batch around an already encoded records area (compressed here with ``codec``)."""
    body = area if codec is Codec.NONE else compress(codec, area)
    header = bytearray(V2_HEADER.pack(base_offset, V2_HEADER_SIZE - 12 + len(body), 0, 2, 0, int(codec), 0, base_ts,
                                      base_ts, -1, -1, -1, count))
    header[17:21] = crc32c(bytes(header[V2_ATTRIBUTES_OFFSET:]) + body).to_bytes(4, "big")
    return bytes(header) + body


def only_batch(data: bytes):
    return next(iter(scan_batches(data)))


# --- decompression in bounded pieces ---------------------------------------------------------------

@pytest.mark.parametrize("codec", COMPRESSED)
def test_pieces_are_bounded_and_join_to_the_whole(codec: Codec) -> None:
    data = b"\x00" * (24 << 20) + bytes(range(256)) * 4000
    pieces = list(decompress_chunks(codec, compress(codec, data)))
    # zstd may overshoot by one block (128 KiB); snappy's xerial blocks are 32 KiB.
    assert max(len(p) for p in pieces) <= CHUNK_SIZE + 128 * 1024
    assert len(pieces) >= 24
    assert b"".join(pieces) == data == decompress(codec, compress(codec, data))


def test_zstd_pieces_stay_small_for_a_bomb() -> None:
    # ~10 KB of zstd holding 300 MB: every piece is still at most about a chunk.
    bomb = compress(Codec.ZSTD, b"\x00" * (300 << 20))
    assert len(bomb) < 20_000
    total = 0
    for piece in decompress_chunks(Codec.ZSTD, bomb, chunk_size=64 * 1024):
        assert len(piece) <= 64 * 1024 + 128 * 1024
        total += len(piece)
    assert total == 300 << 20


# --- windows: the C decoder and the Python reference agree on partial windows -----------------------

rows = st.lists(st.tuples(st.one_of(st.none(), st.binary(max_size=30)), st.one_of(st.none(), st.binary(max_size=60)),
                          st.lists(st.tuples(st.binary(max_size=5), st.one_of(st.none(), st.binary(max_size=5))),
                                   max_size=2)), min_size=1, max_size=15)


@pytest.mark.skipif(c_decode is None, reason="C extension not built")
@SETTINGS
@given(rows=rows, cut=st.integers(0, 2000), start_record=st.integers(0, 15), want=st.integers(0, 20))
def test_window_decoding_agrees(rows, cut, start_record, want) -> None:
    records = [Record(i, 1_700_000_000_000 + i, k, v, tuple(h)) for i, (k, v, h) in enumerate(rows)]
    data = encode_batch_v2(records, base_offset=0)
    batch = only_batch(data)
    area = data[V2_HEADER_SIZE:]
    encoded = [encode_record_v2(i, i, k, v, tuple(h)) for i, (k, v, h) in enumerate(rows)]
    start = sum(len(e) for e in encoded[:min(start_record, len(encoded))])
    window = area[:start + cut]
    slow = decode_v2_record_area(window, want, batch, start=start, final=False, bounded=True)
    fast = c_decode(window, want, batch.base_offset, batch.base_timestamp, None, batch.base_sequence, Record,
                    start, False)
    assert fast == slow
    # Exactly the records the window holds whole, up to ``want``.
    whole = 0
    pos = start
    for e in encoded[min(start_record, len(encoded)):]:
        if pos + len(e) > len(window) or whole == want:
            break
        pos += len(e)
        whole += 1
    assert len(slow[0]) == whole and slow[1] == pos
    assert slow[0] == records[min(start_record, len(records)):][:whole]


# --- streamed batches ------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", COMPRESSED)
def test_records_cut_by_chunk_boundaries(codec: Codec, monkeypatch: pytest.MonkeyPatch) -> None:
    records = [Record(i, 5 + i, b"k%d" % i, b"v" * (i * 37 % 500), ((b"h", b"x" * i),) if i % 3 else ())
               for i in range(300)]
    data = encode_batch_v2(records, base_offset=0, codec=codec)
    expected = decode_records(data, only_batch(data))
    assert expected == records
    monkeypatch.setattr(records_module, "decompress_chunks", functools.partial(decompress_chunks, chunk_size=7))
    monkeypatch.setattr(records_module, "GROUP_SIZE", 16)
    groups = list(iter_records(data, only_batch(data)))
    assert max(len(g) for g in groups) <= 16
    assert [r for g in groups for r in g] == records


def _value_record(size: int, fill: bytes = b"\x00") -> bytes:
    return encode_record_v2(0, 0, b"key", fill * size, ((b"h", b"v"),))


@pytest.mark.parametrize("codec", COMPRESSED)
def test_large_value_is_lazy_when_only_sizes_are_needed(codec: Codec, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_stream, "WINDOW_RECORD_LIMIT", 1000)
    monkeypatch.setattr(record_stream, "LAZY_VALUE_MIN", 500)
    monkeypatch.setattr(records_module, "decompress_chunks", functools.partial(decompress_chunks, chunk_size=300))
    value = bytes(range(256)) * 1600  # spans several blocks of every codec, so no window holds it whole
    area = encode_record_v2(0, 1, b"a", b"small") + encode_record_v2(1, 2, b"key", value, ((b"h", b"v"),)) + \
        encode_record_v2(2, 3, None, None)
    data = raw_batch(area, 3, codec)
    batch = only_batch(data)
    lazy = [r for g in iter_records(data, batch, values=False) for r in g]
    whole = decode_records(data, batch)
    assert whole == [Record(0, 1, b"a", b"small", (), -1), Record(1, 2, b"key", value, ((b"h", b"v"),), -1),
                     Record(2, 3, None, None, (), -1)]
    assert isinstance(lazy[1].value, LazyValue) and len(lazy[1].value) == len(value)
    assert bytes(lazy[1].value) == value and b"".join(lazy[1].value.chunks()) == value
    assert lazy[1]._replace(value=value) == whole[1] and lazy[0] == whole[0] and lazy[2] == whole[2]
    assert count_records(data, batch) == 3


def test_control_batches_always_read_their_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_stream, "LAZY_VALUE_MIN", 2)
    monkeypatch.setattr(record_stream, "WINDOW_RECORD_LIMIT", 2)
    data = bytearray(encode_batch_v2([Record(0, 0, b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x05")], base_offset=0,
                                     codec=Codec.GZIP, is_control=True, is_transactional=True, producer_id=1,
                                     producer_epoch=0))
    (record,) = [r for g in iter_records(bytes(data), only_batch(bytes(data)), values=False) for r in g]
    assert record.value == b"\x00\x00\x00\x00\x00\x05"


@pytest.mark.parametrize("codec", COMPRESSED)
def test_data_after_the_declared_records_fails_without_reading_it_all(codec: Codec,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    area = encode_record_v2(0, 0, b"k", b"v") + b"\x00" * (64 << 20)
    data = raw_batch(area, 1, codec)
    pulled = []

    def counting(*args, **kwargs):
        for piece in decompress_chunks(*args, **kwargs):
            pulled.append(len(piece))
            yield piece

    monkeypatch.setattr(records_module, "decompress_chunks", counting)
    with pytest.raises(InvalidRecordError, match="Incorrect declared batch size, records still remaining in file$"):
        decode_records(data, only_batch(data))
    assert sum(pulled) <= 4 * CHUNK_SIZE + 256 * 1024  # a few chunks, not the 64 MiB


@pytest.mark.parametrize("codec", COMPRESSED)
@pytest.mark.parametrize("window_limit", [1 << 20, 8])
def test_stream_ending_inside_a_record(codec: Codec, window_limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_stream, "WINDOW_RECORD_LIMIT", window_limit)
    area = encode_record_v2(0, 0, b"k", b"v") + encode_record_v2(1, 0, b"key", b"value" * 10)[:-5]
    data = raw_batch(area, 2, codec)
    with pytest.raises(InvalidRecordError, match="Incorrect declared batch size, premature EOF reached$"):
        decode_records(data, only_batch(data))


@pytest.mark.parametrize("codec", COMPRESSED)
def test_field_running_past_its_record_is_invalid_structure(codec: Codec) -> None:
    # The key length says 9 bytes but the record ends after 3 (the next record's bytes follow).
    record = bytearray(encode_record_v2(0, 0, b"abc", None))
    record[4] = 18  # zig-zag 9
    area = bytes(record) + encode_record_v2(1, 0, b"k" * 20, b"v")
    data = raw_batch(area, 2, codec)
    with pytest.raises(InvalidRecordError, match="Found invalid record structure$"):
        decode_records(data, only_batch(data))


# --- overlong varints wrap like Kafka's ByteUtils ------------------------------------------------------

def _record(body: bytes) -> bytes:
    return bytes([len(body) * 2]) + body  # zig-zag length, one byte for these short bodies


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.ZSTD])
@pytest.mark.parametrize("accelerated", [True, False])
def test_overlong_varints_wrap(codec: Codec, accelerated: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not accelerated:
        monkeypatch.setattr(records_module, "_accelerated_decode", None)
    # timestampDelta: 10-byte varlong whose last byte is 0x7f; Java keeps only its lowest bit at bit 63:
    # raw 0xFFFFFFFFFFFFFFFF -> zig-zag -> Long.MIN_VALUE.
    ts = b"\xff" * 9 + b"\x7f"
    # offsetDelta: 5-byte varint fe ff ff ff 7f; Java keeps the low 32 bits, 0xFFFFFFFE -> Integer.MAX_VALUE.
    off = b"\xfe\xff\xff\xff\x7f"
    # keyLength: 5-byte varint ff ff ff ff 7f -> 0xFFFFFFFF -> Integer.MIN_VALUE: negative, so a null key.
    key = b"\xff\xff\xff\xff\x7f"
    area = _record(b"\x00" + ts + off + key + b"\x02v\x00")
    data = raw_batch(area, 1, codec, base_offset=10, base_ts=1000)
    (record,) = decode_records(data, only_batch(data))
    # DefaultRecord: timestamp = baseTimestamp + delta, offset = baseOffset + delta (long arithmetic).
    assert record.timestamp == 1000 - 2**63
    assert record.offset == 10 + 2**31 - 1
    assert record.key is None and record.value == b"v"


def test_timestamp_sum_wraps_like_java_long() -> None:
    area = _record(b"\x00" + b"\x02" + b"\x00\x01\x01\x00")  # timestampDelta +1, offsetDelta 0, null key/value
    data = raw_batch(area, 1, base_ts=2**63 - 1)
    (record,) = decode_records(data, only_batch(data))
    assert record.timestamp == -(2**63)


def test_varlong_longer_than_ten_bytes_is_kafkas_error() -> None:
    area = _record(b"\x00" + b"\xff" * 10 + b"\x01" + b"\x00\x01\x01\x00")
    data = raw_batch(area, 1)
    with pytest.raises(InvalidRecordError, match="Varlong is too long, most significant bit in the 10th byte is set, "
                                                 "converted value: ffffffffffffffff$"):
        decode_records(data, only_batch(data))


def test_varint_longer_than_five_bytes_is_kafkas_error() -> None:
    area = _record(b"\x00\x00" + b"\xff\xff\xff\xff\xff\x01" + b"\x01\x01\x00")
    data = raw_batch(area, 1)
    with pytest.raises(InvalidRecordError, match="Varint is too long, the most significant bit in the 5th byte is "
                                                 "set, converted value: ffffffff$"):
        decode_records(data, only_batch(data))


@pytest.mark.skipif(c_decode is None, reason="C extension not built")
@SETTINGS
@given(rows=rows, edits=st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 255)), min_size=1, max_size=4),
       cut=st.integers(0, 3000), want=st.integers(1, 20))
def test_damaged_windows_are_agreed_or_handed_back(rows, edits, cut, want) -> None:
    records = [Record(i, 7 + i, k, v, tuple(h)) for i, (k, v, h) in enumerate(rows)]
    data = encode_batch_v2(records, base_offset=0)
    batch = only_batch(data)
    area = bytearray(data[V2_HEADER_SIZE:])
    for where, byte in edits:
        area[where % len(area)] = byte
    window = bytes(area[:cut])
    fast = c_decode(window, want, batch.base_offset, batch.base_timestamp, None, batch.base_sequence, Record, 0, False)
    try:
        slow = decode_v2_record_area(window, want, batch, final=False, bounded=True)
    except InvalidRecordError:
        assert fast is None
    else:
        assert fast is None or fast == slow


@pytest.mark.parametrize("codec", COMPRESSED)
def test_cli_reports_a_stream_ending_inside_a_record_in_one_line(codec: Codec, tmp_path) -> None:
    from tests.kdump_testing import run_kdump

    area = encode_record_v2(0, 0, b"k", b"v") + encode_record_v2(1, 0, b"key", b"value" * 10)[:-5]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(raw_batch(area, 2, codec))
    result = run_kdump("--files", str(path), "--deep-iteration")
    assert result.exit_code == 1
    assert result.stderr.strip() == (f"Error: {path}: position 0: "
                                     "Incorrect declared batch size, premature EOF reached")
    # Kafka prints the batch line and the records before the one it fails on.
    lines = result.stdout.splitlines()
    assert lines[-2].startswith("baseOffset: 0 lastOffset: 0 count: 2 ")
    assert lines[-1] == "| offset: 0 CreateTime: 0 keySize: 1 valueSize: 1 sequence: -1 headerKeys: []"


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP, Codec.ZSTD])
@pytest.mark.parametrize("accelerated", [True, False])
def test_records_before_a_malformed_one_are_printed(codec: Codec, accelerated: bool, tmp_path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # DumpLogSegments prints each record as the batch's iterator reads it, so the records before a bad
    # one come out before the error. Record 2 here has a negative header key size.
    if not accelerated:  # run_kdump runs in this process
        monkeypatch.setattr(records_module, "_accelerated_decode", None)
    bad = bytearray(encode_record_v2(2, 0, b"k", b"v", ((b"h", b"x"),)))
    bad[9] = 0x01  # the header key length: zig-zag -1
    area = encode_record_v2(0, 0, b"a", b"b") + encode_record_v2(1, 0, b"c", b"d") + bytes(bad)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(raw_batch(area, 3, codec))
    from tests.kdump_testing import run_kdump

    result = run_kdump("--files", str(path), "--deep-iteration")
    assert result.exit_code == 1
    assert result.stderr.strip() == f"Error: {path}: position 0: Invalid negative header key size -1"
    lines = result.stdout.splitlines()
    assert lines[-3].startswith("baseOffset: 0 lastOffset: 0 count: 3 ")
    assert [line.split(" CreateTime")[0] for line in lines[-2:]] == ["| offset: 0", "| offset: 1"]
