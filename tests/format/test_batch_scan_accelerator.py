"""The optional C walk over runs of v2 batches (``_v2records.scan``) gives exactly what the Python walk
in ``scan_batch_runs`` gives: the same batches, and the same error at the same place, for any bytes.

The Python walk itself is checked against Kafka (its framing rules and texts) by the golden tests in
tests/cli and tests/format; here the C walk must agree with it, stopping where it does not handle a
case and leaving that to the Python code.
"""

from __future__ import annotations

import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kdump.errors import KdumpError
from kdump.format import batch as batch_module
from kdump.format.batch import Batch, scan_batch_runs, scan_batches
from kdump.format.encode import encode_batch_v2, encode_legacy_message
from kdump.format.records import Record

try:
    from kdump.format._v2records import scan as c_scan
except ImportError:
    c_scan = None

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
needs_extension = pytest.mark.skipif(c_scan is None, reason="C extension not built (test_scan_is_built fails)")


def test_scan_is_built() -> None:
    if os.environ.get("KDUMP_PURE_PYTHON", "") not in ("", "0"):
        assert batch_module._c_scan is None
        return
    assert c_scan is not None, "kdump/format/_v2records.c was not compiled (is a C compiler installed?)"
    assert batch_module._c_scan is c_scan


def _v2(offset: int, count: int, epoch: int, attributes_codec: int) -> bytes:
    records = [Record(offset + i, 1_700_000_000_000 + i, b"k%d" % i, b"v" * (i % 7)) for i in range(count)]
    data = bytearray(encode_batch_v2(records, base_offset=offset, partition_leader_epoch=epoch,
                                     producer_id=offset % 5 - 1, base_sequence=-1 if offset % 2 else offset % 1000))
    if attributes_codec:  # an id Kafka does not know (5-7): its CRC still matches, the line fails
        data[22] = (data[22] & ~0x07) | attributes_codec
        from kdump.format.crc import crc32c

        struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    return bytes(data)


entries = st.one_of(
    st.builds(_v2, st.integers(0, 2**40), st.integers(1, 5), st.integers(-1, 9), st.sampled_from([0, 0, 0, 5, 7])),
    st.builds(lambda offset, magic: encode_legacy_message(offset, b"k", b"v", magic=magic, timestamp=5),
              st.integers(0, 2**40), st.integers(0, 1)),
)
# Damage: bytes overwritten anywhere (sizes, magic bytes, CRCs), a cut tail, zero padding.
edits = st.lists(st.tuples(st.integers(0, 10_000), st.binary(min_size=1, max_size=4)), max_size=3)


def _walk(data: bytes, start: int, end: int | None, check_crc: bool, base: int, accelerated: bool,
          monkeypatch: pytest.MonkeyPatch) -> tuple[list[list[Batch]], str | None]:
    monkeypatch.setattr(batch_module, "_c_scan", c_scan if accelerated else None)
    runs: list[list[Batch]] = []
    try:
        for run in scan_batch_runs(bytearray(data), start, end, check_crc=check_crc, base=base):
            runs.append(run)
    except KdumpError as err:
        return runs, f"{type(err).__name__}: {err.reason} @ {err.position}"
    return runs, None


@needs_extension
@SETTINGS
@given(parts=st.lists(entries, max_size=8), edits=edits, cut=st.integers(0, 80), padding=st.integers(0, 40),
       start=st.integers(0, 30), end_cut=st.integers(0, 30), check_crc=st.booleans(), base=st.integers(0, 2**40))
def test_same_batches_and_errors_as_python(parts: list[bytes], edits: list[tuple[int, bytes]], cut: int, padding: int,
                                           start: int, end_cut: int, check_crc: bool, base: int) -> None:
    data = bytearray(b"".join(parts))
    for at, blob in edits:
        if data:
            at %= len(data)
            data[at:at + len(blob)] = blob[:len(data) - at]
    data = bytes(data[:max(0, len(data) - cut)]) + bytes(padding)
    start = min(start, len(data)) if start % 3 == 0 else 0   # mostly from the start, sometimes mid-entry
    end = None if end_cut % 2 else max(start, len(data) - end_cut)
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast = _walk(data, start, end, check_crc, base, True, monkeypatch)
        slow = _walk(data, start, end, check_crc, base, False, monkeypatch)
    assert [b for run in fast[0] for b in run] == [b for run in slow[0] for b in run]
    assert [type(b) for run in fast[0] for b in run] == [Batch] * sum(map(len, fast[0]))
    assert fast[1] == slow[1]
    assert all(run for run in fast[0])   # never an empty run


@needs_extension
def test_runs_are_bounded_and_cover_every_batch() -> None:
    data = b"".join(_v2(i * 10, 1, 0, 0) for i in range(1000))
    runs = list(scan_batch_runs(data))
    assert max(map(len, runs)) == batch_module._C_SCAN_BATCHES
    assert [b.base_offset for b in scan_batches(data)] == [i * 10 for i in range(1000)]
    assert all(b.is_valid for b in scan_batches(data))


@needs_extension
def test_a_view_the_crc_function_kept_is_released() -> None:
    # The C walk hands the CRC function a view of the caller's buffer; one that outlives the call
    # must not point into a buffer that is later resized or freed.
    kept = []

    def keeping_crc(view: memoryview, value: int = 0) -> int:
        kept.append(view)
        return 0

    buf = bytearray(_v2(0, 3, 0, 0))
    batches, _ = c_scan(buf, 0, len(buf), 0, keeping_crc, Batch, 10)
    assert [b.is_valid for b in batches] == [False]
    with pytest.raises(ValueError, match="released"):
        bytes(kept[0])
    buf.extend(b"resizable again")


@needs_extension
def test_declines_what_python_integers_do_not_wrap() -> None:
    # baseOffset near Long.MAX_VALUE plus lastOffsetDelta: Python's lastOffset is past 2**63 - 1.
    data = bytearray(_v2(0, 2, 0, 0))
    struct.pack_into(">q", data, 0, 2**63 - 1)
    batches, stopped = c_scan(data, 0, len(data), 0, None, Batch, 10)
    assert (batches, stopped) == ([], 0)
    assert next(scan_batches(data, check_crc=False)).last_offset == 2**63
