"""Record columns built in C (``_v2records.columns``) equal kafka-python's decoding, and the Python path.

The fast path never makes Python objects of records, so it is checked against an independent
decoder (kafka-python builds and reads the batches) with the C function on and off, and on inputs
it must decline (legacy entries, malformed records) where the general path words the error.
"""

from __future__ import annotations

import datetime
import struct
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow", reason="pyarrow not installed: pip install 'kdump[spark]'")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder  # noqa: E402
from kafka.record.legacy_records import LegacyRecordBatchBuilder  # noqa: E402

from kdump.arrow import columns as columns_module  # noqa: E402
from kdump.arrow import reading as reading_module  # noqa: E402
from kdump.arrow.planning import Segment, Split  # noqa: E402
from kdump.arrow.reading import ReadOptions, read_split  # noqa: E402
from kdump.format.codecs import Codec  # noqa: E402
from kdump.log.logdir import SegmentFiles  # noqa: E402

blobs = st.one_of(st.none(), st.binary(max_size=40))
header_lists = st.lists(st.tuples(st.text(max_size=8), st.one_of(st.none(), st.binary(max_size=12))), max_size=3)
FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(params=["c-columns", "python-columns"])
def column_builder(request, monkeypatch):  # type: ignore[no-untyped-def]
    if request.param == "python-columns":
        monkeypatch.setattr(columns_module, "_accelerated_columns", None)
    elif columns_module._accelerated_columns is None:
        pytest.skip("the C extension is not built (no compiler, or KDUMP_PURE_PYTHON=1)")
    return request.param


def kafka_python_batch(records: list, codec: Codec, base_offset: int) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=int(codec), is_transactional=False,
                                        producer_id=7, producer_epoch=1, base_sequence=100, batch_size=10**7)
    for i, (key, value, headers) in enumerate(records):
        builder.append(i, timestamp=1_700_000_000_000 + i, key=key, value=value,
                       headers=[(k, v) for k, v in headers])
    buf = bytearray(builder.build())
    struct.pack_into(">q", buf, 0, base_offset)          # set by the broker, outside the CRC
    return bytes(buf)


def read_file(path: Path, **options) -> list[dict]:  # type: ignore[no-untyped-def]
    size = path.stat().st_size
    split = Split(Segment("t", 0, SegmentFiles(0, str(path)), size), 0, size, 0, None)
    return [row for b in read_split(split, options=ReadOptions(**options)) for row in b.to_pylist()]


@FAST
@given(batches=st.lists(st.tuples(st.lists(st.tuples(blobs, blobs, header_lists), min_size=1, max_size=10),
                                  st.sampled_from(list(Codec))), min_size=1, max_size=4),
       max_rows=st.integers(min_value=1, max_value=20))
def test_rows_equal_kafka_python(tmp_path: Path, column_builder: str, batches: list, max_rows: int) -> None:
    blobs_out, expected, offset = [], [], 0
    for records, codec in batches:
        data = kafka_python_batch(records, codec, offset)
        blobs_out.append(data)
        for r in DefaultRecordBatch(data):
            expected.append((r.offset, r.timestamp, r.key, r.value, [(k, v) for k, v in r.headers],
                             100 + r.offset - offset))
        offset += len(records)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(blobs_out))
    rows = read_file(path, max_rows=max_rows)
    got = [(r["offset"], r["timestamp_ms"], r["key"], r["value"], [(h["key"], h["value"]) for h in r["headers"]],
            r["sequence"]) for r in rows]
    assert got == expected
    assert all(r["isvalid"] and r["producerId"] == 7 for r in rows)
    assert [r["timestamp"] for r in rows] == [  # the same instant as Spark's TIMESTAMP
        datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC) for _, ms, *_ in expected]


def test_legacy_entries_and_batches_share_the_columns(tmp_path: Path, column_builder: str) -> None:
    legacy = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=10**6)
    legacy.append(0, timestamp=5, key=b"k0", value=None)
    legacy.append(1, timestamp=6, key=None, value=b"v1")
    v2 = kafka_python_batch([(b"k2", b"v2", [("h", b"x")]), (None, None, [])], Codec.NONE, 2)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(legacy.build()) + v2)
    rows = read_file(path)
    assert [(r["offset"], r["timestamp_ms"], r["key"], r["value"], r["headers"], r["magic"]) for r in rows] == [
        (0, 5, b"k0", None, [], 1),
        (1, 6, None, b"v1", [], 1),
        (2, 1_700_000_000_000, b"k2", b"v2", [{"key": "h", "value": b"x"}], 2),
        (3, 1_700_000_000_001, None, None, [], 2),
    ]


def test_malformed_records_are_declined_and_worded_by_the_general_path(tmp_path: Path, column_builder: str) -> None:
    good = kafka_python_batch([(b"a", b"b", [])], Codec.NONE, 0)
    bad = bytearray(kafka_python_batch([(b"k", b"v", [])] * 3, Codec.NONE, 1))
    bad[61 + 4] = 0x7E                                   # the first record's key length: 63 bytes it does not have
    struct.pack_into(">I", bad, 17, _crc32c(bytes(bad[21:])))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(good + bytes(bad) + kafka_python_batch([(None, b"z", [])], Codec.NONE, 4))
    rows = read_file(path)
    assert [(r["offset"], r["isvalid"], r["value"]) for r in rows] == [(0, True, b"b"), (None, False, None),
                                                                      (4, True, b"z")]
    assert rows[1]["error"] and rows[1]["baseOffset"] == 1 and rows[1]["headers"] is None


def test_non_utf8_header_keys_are_replaced_not_fatal(tmp_path: Path, column_builder: str) -> None:
    data = bytearray(kafka_python_batch([(None, b"v", [("k\u00e9", b"x")])], Codec.NONE, 0))
    at = bytes(data).index("k\u00e9".encode())
    data[at + 1] = 0xFF                                  # now "k\xff\xa9": not UTF-8
    struct.pack_into(">I", data, 17, _crc32c(bytes(data[21:])))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    assert read_file(path)[0]["headers"] == [{"key": "k\ufffd\ufffd", "value": b"x"}]


def test_arrow_batches_are_cut_by_bytes_as_well_as_rows(tmp_path: Path, column_builder: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading_module, "MAX_BATCH_BYTES", 1000)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(kafka_python_batch([(None, bytes(300), [])] * 2, Codec.NONE, 2 * i) for i in range(5)))
    size = path.stat().st_size
    split = Split(Segment("t", 0, SegmentFiles(0, str(path)), size), 0, size, 0, None)
    assert [b.num_rows for b in read_split(split)] == [4, 4, 2]


def _crc32c(data: bytes) -> int:
    from kafka.record.util import calc_crc32c

    return calc_crc32c(data)
