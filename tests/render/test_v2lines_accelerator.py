"""The optional C formatters write exactly the lines of the Python references (_v2_data_lines, batch lines).

The reference itself is checked against Kafka's templates by the golden tests in tests/cli; here
the C version must agree with it on anything records can hold, or decline (None).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdump.errors import KdumpError
from kdump.format.batch import Batch
from kdump.format.records import Record
from kdump.render import log_text
from kdump.render.decoders import string_decoder
from kdump.render.dialect import parse_kafka_version

try:
    from kdump.render._v2lines import string_lines
except ImportError:
    string_lines = None

ROOT = Path(__file__).resolve().parents[2]

# Arbitrary bytes exercise U+FFFD replacement (truncated and invalid sequences); text exercises valid UTF-8.
payloads = st.one_of(st.none(), st.binary(max_size=40), st.text(max_size=20).map(lambda t: t.encode("utf-8", "surrogatepass")))
header_lists = st.lists(st.tuples(st.one_of(st.binary(max_size=10), st.text(max_size=6).map(str.encode)),
                                  st.one_of(st.none(), st.binary(max_size=5))), max_size=3).map(tuple)
int64 = st.integers(-2**63, 2**63 - 1)
records = st.lists(st.builds(Record, int64, int64, payloads, payloads, header_lists, st.integers(-1, 2**31 - 1)),
                   max_size=12)


def test_line_formatter_is_built():
    if os.environ.get("KDUMP_PURE_PYTHON", "") not in ("", "0"):
        return
    assert string_lines is not None, "kdump/render/_v2lines.c was not compiled (is a C compiler installed?)"


needs_extension = pytest.mark.skipif(string_lines is None, reason="C extension not built (test above fails)")


@needs_extension
@settings(max_examples=300, deadline=None)
@given(records=records, key_for_null_value=st.booleans(), ts_name=st.sampled_from(["CreateTime", "LogAppendTime"]),
       names=st.sampled_from([("keySize", "valueSize"), ("keysize", "valuesize")]))
def test_same_lines_as_python(records, key_for_null_value, ts_name, names):
    head, key_label, value_label = f" {ts_name}: ", f" {names[0]}: ", f" {names[1]}: "
    dialect = parse_kafka_version("4.3" if key_for_null_value else "2.3")
    assert dialect.key_printed_for_null_value is key_for_null_value
    # The Python loop, reached through a decoder that is not the StringDecoder object itself.
    options = log_text.RecordTextOptions(print_contents=True, key_decoder=lambda b: string_decoder(b),
                                         value_decoder=lambda b: string_decoder(b))
    expected = "\n".join(log_text._v2_data_lines(records, options, dialect, ts_name, *names))
    assert string_lines(records, head, key_label, value_label, key_for_null_value) == expected


@needs_extension
def test_declines_what_it_cannot_format():
    too_big = Record(2**63, 0, b"k", b"v")
    not_bytes = Record(1, 0, bytearray(b"k"), b"v")
    for record in (too_big, not_bytes):
        assert string_lines([record], " CreateTime: ", " keySize: ", " valueSize: ", True) is None


def run_with_and_without_accelerators(args: list[str]):  # type: ignore[no-untyped-def]
    """The same command with the C accelerators (when built), then with KDUMP_PURE_PYTHON=1."""
    env = {k: v for k, v in os.environ.items() if k != "KDUMP_PURE_PYTHON"}
    fast = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    slow = subprocess.run(args, env={**env, "KDUMP_PURE_PYTHON": "1"}, capture_output=True, text=True, check=True)
    return fast, slow


def test_cli_output_is_the_same_without_accelerators():
    # The whole --print-data-log path, C and pure Python, on the bundled fixtures.
    args = [sys.executable, "-m", "kdump", "--files", str(ROOT / "fixtures" / "logdirs"), "--print-data-log"]
    fast, slow = run_with_and_without_accelerators(args)
    assert "| offset: " in fast.stdout
    assert fast.stdout == slow.stdout and fast.stderr == slow.stderr


int32 = st.integers(-2**31, 2**31 - 1)
v2_batches = st.builds(Batch, st.integers(0, 2**31), int64, int64, int32, st.just(2), st.integers(0, 2**32 - 1),
                       st.integers(0, 0xFFFF), int32, int64, int64, int64, st.integers(-2**15, 2**15 - 1), int32,
                       int32, st.sampled_from([True, False, None]))


@needs_extension
@settings(max_examples=300, deadline=None)
@given(batch=v2_batches, delta=st.one_of(int32, int64), version=st.sampled_from(["2.2", "2.8", "3.0", "3.1", "3.9", "4.3"]))
def test_same_batch_line_as_python(batch, delta, version):
    batch = batch._replace(last_offset=batch.base_offset + delta)
    from kdump.render._v2lines import batch_line as c_batch_line

    dialect = parse_kafka_version(version)
    fixed = log_text._attribute_text(batch.magic, batch.attributes, dialect)
    if fixed is None:  # codec ids 5-7: Kafka fails; both paths raise before formatting
        return
    expected = log_text._python_batch_line(batch, fixed)
    fast = c_batch_line(batch, fixed.flags, fixed.c_horizon, fixed.ts_name, fixed.codec)
    if -2**31 <= delta < 2**31 and -2**63 <= batch.last_offset < 2**63:  # what a real header can hold
        assert fast == expected
    else:
        assert fast is None
    assert log_text.batch_line_renderer(dialect)(batch) == expected


def test_version_names_the_implementations():
    args = [sys.executable, "-m", "kdump", "--version"]
    fast, slow = (done.stdout.splitlines() for done in run_with_and_without_accelerators(args))
    assert fast[0] == slow[0] == "kdump 0.1.0 (reproduces kafka-dump-log output of Kafka 2.2 to 4.4)"
    built = "C extension" if string_lines is not None else "pure Python"
    assert fast[1].endswith(f"v2 records: {built}; dump lines: {built}")
    assert slow[1].endswith("v2 records: pure Python; dump lines: pure Python")


legacy_batches = st.builds(Batch, st.integers(0, 2**31), int64, int64, int32, st.sampled_from([0, 1]),
                           st.integers(0, 2**32 - 1), st.integers(0, 0xFF), st.just(-1), st.just(-1), int64,
                           st.just(-1), st.just(-1), st.just(-1), st.just(1), st.sampled_from([True, False]))


@needs_extension
@settings(max_examples=300, deadline=None)
@given(batches=st.lists(st.one_of(v2_batches, legacy_batches), max_size=12),
       version=st.sampled_from(["2.2", "2.8", "3.0", "3.1", "3.9", "4.3"]))
def test_same_lines_for_a_run_of_batches(batches, version):
    # _v2lines.batch_lines: the shallow dump's lines of a run, each one the per-batch renderer's, or
    # the same error (codec ids 5-7) with nothing returned.
    batches = [b._replace(last_offset=b.base_offset + (b.last_offset % 1000)) if b.magic == 2 else b for b in batches]
    dialect = parse_kafka_version(version)
    one = log_text.batch_line_renderer(dialect)
    try:
        expected = "".join(one(batch) + "\n" for batch in batches)
    except KdumpError as err:
        expected = f"{type(err).__name__}: {err.reason}"
    try:
        got = log_text.batch_lines_renderer(dialect)(batches)
    except KdumpError as err:
        got = f"{type(err).__name__}: {err.reason}"
    assert got == expected
    from kdump.render._v2lines import batch_lines

    assert log_text._c_batch_lines is batch_lines


def test_a_shallow_dump_stops_at_a_batch_kafka_cannot_print_after_the_lines_before_it(tmp_path: Path) -> None:
    # Three batches, then one whose attributes name codec 7 (Kafka: "Unknown compression type id: 7"),
    # then one more: the three lines come out, then the error, with or without the C formatter.
    from kdump.format.crc import crc32c
    from kdump.format.encode import encode_batch_v2

    def batch(offset: int, codec: int = 0) -> bytes:
        data = bytearray(encode_batch_v2([Record(offset, 1_700_000_000_000, b"k", b"v")], base_offset=offset))
        data[22] |= codec
        data[17:21] = crc32c(bytes(data[21:])).to_bytes(4, "big")
        return bytes(data)

    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes(batch(0) + batch(1) + batch(2) + batch(3, codec=7) + batch(4))
    env = {k: v for k, v in os.environ.items() if k != "KDUMP_PURE_PYTHON"}
    args = [sys.executable, "-m", "kdump", "--files", str(segment)]
    fast = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    slow = subprocess.run(args, env={**env, "KDUMP_PURE_PYTHON": "1"}, capture_output=True, text=True, timeout=120)
    assert (fast.stdout, fast.stderr, fast.returncode) == (slow.stdout, slow.stderr, slow.returncode)
    assert [line.split(" lastOffset")[0] for line in fast.stdout.splitlines()[2:]] == [
        "baseOffset: 0", "baseOffset: 1", "baseOffset: 2"]
    assert "Unknown compression type id: 7" in fast.stderr and fast.returncode != 0


# ---- _v2lines.data_lines: a deep dump's runs of batches in one call ---------------------------------------------

def _control_record(offset: int, commit: bool) -> Record:
    # EndTransactionMarker (Kafka 4.4.0 clients/.../record/EndTransactionMarker.java): key version 0 + type
    # (0 abort, 1 commit), value version 0 + coordinatorEpoch.
    return Record(offset, 1_700_000_000_000, bytes([0, 0, 0, int(commit)]), bytes([0, 0, 0, 0, 0, 7]))


batch_kinds = st.sampled_from(["plain", "plain", "plain", "log_append", "gzip", "control", "empty", "truncated"])
record_specs = st.lists(st.tuples(st.integers(0, 3), payloads, payloads, header_lists), min_size=1, max_size=6)


def _segment(specs: list[tuple[str, list[tuple[int, bytes | None, bytes | None, tuple]]]]) -> bytes:
    """Batches of each kind: uncompressed data batches (which data_lines writes) between ones it declines."""
    from kdump.format.batch import TimestampType
    from kdump.format.codecs import Codec
    from kdump.format.encode import encode_batch_v2

    out, offset = [], 5
    for kind, spec in specs:
        records = []
        for gap, key, value, headers in spec:
            offset += gap   # a gap: DumpLogSegments' "Non-consecutive offsets" (and its first-offset rule)
            records.append(Record(offset, 1_700_000_000_000 + offset, key, value, headers))
            offset += 1
        base = records[0].offset
        if kind == "control":
            records = [_control_record(base, commit=True)]
        if kind == "empty":
            records = []
        extra: dict = {}
        if kind == "log_append":
            extra = {"timestamp_type": TimestampType.LOG_APPEND_TIME, "log_append_time": 1_800_000_000_000}
        data = encode_batch_v2(records, base_offset=base, codec=Codec.GZIP if kind == "gzip" else Codec.NONE,
                               is_control=kind == "control", is_transactional=kind == "control",
                               producer_id=7 if kind == "control" else -1, base_sequence=3 if kind == "plain" else -1,
                               **extra)
        if kind == "truncated":   # a record cut short but the batch framed whole: Kafka's error, after the lines before
            data = data[:-1]
            data = (len(data) - 12).to_bytes(4, "big").join([data[:8], data[12:]])
        out.append(data)
    return b"".join(out)


@needs_extension
@settings(max_examples=80, deadline=None)
@given(specs=st.lists(st.tuples(batch_kinds, record_specs), min_size=1, max_size=8),
       version=st.sampled_from(["2.2", "2.4", "2.8", "3.1", "4.3", "4.4"]), contents=st.booleans())
def test_a_deep_dump_writes_the_same_with_and_without_data_lines(tmp_path_factory, specs, version, contents):
    # The runs data_lines writes, and the batches it leaves to the per-batch path (compressed, control, empty,
    # malformed), must give the bytes, offset gaps and errors the per-batch path gives for the whole segment.
    import io

    from kdump.dump import log as dump_log
    from kdump.dump.files import dump_files
    from kdump.dump.run import DumpOptions

    segment = tmp_path_factory.mktemp("seg") / "00000000000000000000.log"
    segment.write_bytes(_segment(specs))
    dialect = parse_kafka_version(version)
    options = DumpOptions(deep=True, records=log_text.RecordTextOptions(print_contents=contents), dialect=dialect)

    def dump() -> tuple[str, str, bool]:
        out, err = io.StringIO(), io.StringIO()
        result = dump_files([str(segment)], options, out=out, err=err)
        return out.getvalue(), err.getvalue(), bool(result.failed)

    with pytest.MonkeyPatch.context() as patch:
        calls = []
        real = dump_log.data_lines_renderer
        patch.setattr(dump_log, "data_lines_renderer", lambda *a: calls.append(a) or real(*a))
        fast = dump()
    assert calls and (real(*calls[0]) is not None) is (not dialect.superset_record_line)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dump_log, "data_lines_renderer", lambda *a: None)
        slow = dump()
    assert fast == slow
