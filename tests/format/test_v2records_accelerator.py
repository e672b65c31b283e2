"""The optional C record decoder returns exactly what the Python reference decoder returns.

For well-formed areas the results must be equal; for damaged ones the C decoder must either agree or
hand the batch back (None), and the Python decoder's error then stands. kafka-python-based checks of
both decoders are in test_kafka_python_oracle.py.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kdump.errors import FormatError
from kdump.format.batch import V2_HEADER_SIZE, TimestampType, scan_batches
from kdump.format.encode import encode_batch_v2
from kdump.format.records import RECORD_DECODER, Record, decode_v2_record_area

try:
    from kdump.format._v2records import decode as c_decode
except ImportError:
    c_decode = None

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

blobs = st.one_of(st.none(), st.binary(max_size=300))
headers = st.lists(st.tuples(st.binary(max_size=20), st.one_of(st.none(), st.binary(max_size=20))), max_size=3)


def test_extension_is_built():
    # pip builds it from setup.py with the machine's C compiler; without one kdump still works, slower.
    if os.environ.get("KDUMP_PURE_PYTHON", "") not in ("", "0"):
        assert RECORD_DECODER == "pure Python"
        return
    assert c_decode is not None, "kdump/format/_v2records.c was not compiled (is a C compiler installed?)"
    assert RECORD_DECODER == "C extension"


def _both(area: bytes, count: int, batch):
    fast = c_decode(area, count, batch.base_offset, batch.base_timestamp, batch.log_append_time, batch.base_sequence,
                    Record)
    try:
        slow = decode_v2_record_area(area, count, batch)
    except (FormatError, IndexError, ValueError) as err:
        slow = err
    return fast, slow


def _batch(records, **fields):
    data = encode_batch_v2(records, **fields)
    return data, next(iter(scan_batches(data)))


needs_extension = pytest.mark.skipif(c_decode is None, reason="C extension not built (test_extension_is_built fails)")


@needs_extension
@SETTINGS
@given(
    rows=st.lists(st.tuples(st.integers(0, 2**20), st.integers(-2**40, 2**40), blobs, blobs, headers), max_size=20),
    base_offset=st.integers(0, 2**62),
    base_ts=st.integers(-1, 2**45),
    base_seq=st.one_of(st.just(-1), st.integers(0, 2**31 - 1)),
    log_append=st.booleans(),
)
def test_same_records_as_python(rows, base_offset, base_ts, base_seq, log_append):
    records = [Record(base_offset + delta, base_ts + ts, key, value, tuple(hs)) for delta, ts, key, value, hs in rows]
    data, batch = _batch(records, base_offset=base_offset, base_sequence=base_seq,
                         producer_id=7 if base_seq >= 0 else -1, producer_epoch=0 if base_seq >= 0 else -1,
                         timestamp_type=TimestampType.LOG_APPEND_TIME if log_append else TimestampType.CREATE_TIME,
                         log_append_time=base_ts + 5 if log_append else None)
    area = data[V2_HEADER_SIZE:]
    fast, slow = _both(area, len(records), batch)
    assert fast is not None and fast == slow
    assert all(type(r) is Record for r in fast[0])
    # Either decoder reads straight from a memoryview of the file too.
    assert c_decode(memoryview(data)[V2_HEADER_SIZE:], len(records), batch.base_offset, batch.base_timestamp,
                    batch.log_append_time, batch.base_sequence, Record) == fast


@needs_extension
@SETTINGS
@given(
    rows=st.lists(st.tuples(blobs, blobs, headers), min_size=1, max_size=6),
    edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255), st.sampled_from("set insert delete")),
                   min_size=1, max_size=4),
    count_change=st.sampled_from([0, 0, 0, -1, 1, 2**31 - 1]),
)
def test_damaged_areas_are_agreed_or_handed_back(rows, edits, count_change):
    records = [Record(i, 1_600_000_000_000 + i, key, value, tuple(hs)) for i, (key, value, hs) in enumerate(rows)]
    data, batch = _batch(records, base_offset=0, base_sequence=2**31 - 3, producer_id=1, producer_epoch=0)
    area = bytearray(data[V2_HEADER_SIZE:])
    for where, byte, kind in edits:
        where %= len(area) + 1
        if kind == "set" and where < len(area):
            area[where] = byte
        elif kind == "insert":
            area.insert(where, byte)
        elif where < len(area):
            del area[where]
    fast, slow = _both(bytes(area), max(0, len(records) + count_change), batch)
    if isinstance(slow, Exception):
        assert fast is None
    else:
        assert fast is None or fast == slow


@needs_extension
def test_long_varints_and_wrapping_sequences():
    # Offset deltas past the 2-byte varint, timestamps far from the base, sequences wrapping past int32
    # (DefaultRecordBatch.incrementSequence: Integer.MAX_VALUE is followed by 0).
    records = [Record(i * 70_000, -(2**40) + i, b"k" * 200, None, ((b"h", None),)) for i in range(5)]
    data, batch = _batch(records, base_offset=0, base_sequence=2**31 - 100_000, producer_id=3,
                         producer_epoch=1)
    fast, slow = _both(data[V2_HEADER_SIZE:], 5, batch)
    assert fast == slow
    assert [r.sequence for r in fast[0]] == [2**31 - 100_000, 2**31 - 30_000, 40_000, 110_000, 180_000]


@needs_extension
def test_rejects_a_record_type_that_is_not_a_tuple():
    with pytest.raises(TypeError):
        c_decode(b"", 0, 0, 0, None, -1, dict)
