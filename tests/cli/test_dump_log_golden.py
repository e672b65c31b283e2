"""Exact `.log` dump text for each option combination and dialect.

Expected lines are built from DumpLogSegments' format strings (dumpLog and its summaries,
per release in docs/dialects-research.md) filled with values that kafka-python reads from the same bytes, so the
oracle shares no parsing or formatting code with kdump.
"""

from __future__ import annotations

import os

import pytest
from kafka.record.memory_records import MemoryRecords

from kdump.format.batch import TimestampType
from kdump.format.codecs import Codec
from kdump.format.control import encode_control_key, encode_end_txn_marker
from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump_testing import run_kdump

T0 = 1_700_000_000_000
CODEC_NAMES = ["none", "gzip", "snappy", "lz4", "zstd"]


def build_segment() -> bytes:
    """The scenario of Kafka's testBatchAndRecordMetadataOutput plus every codec and LogAppendTime."""
    batches = [
        encode_batch_v2([Record(0, T0, b"a", b"1", ((b"h1", b"x"), (b"h2", None))), Record(1, T0 + 1, b"b", b"2")],
                        base_offset=0, partition_leader_epoch=0),
        encode_batch_v2([Record(2, T0 + 2, b"c", b"1"), Record(3, T0 + 3, b"d", b"2")], base_offset=2,
                        codec=Codec.GZIP, partition_leader_epoch=3),
        encode_batch_v2([Record(4, T0 + 4, b"e", None), Record(5, T0 + 5, None, b"3"), Record(6, T0 + 6, b"", b"")],
                        base_offset=4, partition_leader_epoch=3),
        encode_batch_v2([Record(7, T0 + 7, b"k", b"idem")], base_offset=7, producer_id=29342342, producer_epoch=15,
                        base_sequence=234123, partition_leader_epoch=3),
        encode_batch_v2([Record(8, T0 + 8, b"t1", b"v1"), Record(9, T0 + 9, b"t2", b"v2")], base_offset=8,
                        codec=Codec.LZ4, producer_id=98323, producer_epoch=99, base_sequence=266,
                        is_transactional=True, partition_leader_epoch=5),
        encode_batch_v2([Record(10, T0 + 10, encode_control_key(1), encode_end_txn_marker(100))], base_offset=10,
                        producer_id=98323, producer_epoch=99, is_transactional=True, is_control=True,
                        partition_leader_epoch=7),
        encode_batch_v2([Record(11, T0 + 11, b"s", b"snappy"), Record(12, T0 + 12, b"z", b"zstd!")],
                        base_offset=11, codec=Codec.SNAPPY, partition_leader_epoch=7),
        encode_batch_v2([Record(13, T0 + 13, b"q", b"zstd")], base_offset=13, codec=Codec.ZSTD,
                        partition_leader_epoch=7),
        encode_batch_v2([Record(14, T0 + 14, b"l", b"append")], base_offset=14, partition_leader_epoch=7,
                        timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=T0 + 99),
    ]
    return b"".join(batches)


def kafka_python_batches(data: bytes):
    records = MemoryRecords(data)
    position = 0
    while records.has_next():
        batch = records.next_batch()
        yield position, batch
        position += batch.size_in_bytes


def expected_batch_line(position, b, version):
    ts_name = "LogAppendTime" if b.timestamp_type == 1 else "CreateTime"
    codec = CODEC_NAMES[b.compression_type]
    codec = codec.upper() if version < (3, 0) else codec
    horizon = "deleteHorizonMs: OptionalLong.empty " if version >= (3, 2) else ""
    return (f"baseOffset: {b.base_offset} lastOffset: {b.last_offset} count: {b.records_count} "
            f"baseSequence: {b.base_sequence} lastSequence: {b.last_sequence} producerId: {b.producer_id} "
            f"producerEpoch: {b.producer_epoch} partitionLeaderEpoch: {b.leader_epoch} "
            f"isTransactional: {str(b.is_transactional).lower()} isControl: {str(b.is_control_batch).lower()} "
            f"{horizon}position: {position} {ts_name}: {b.max_timestamp} size: {b.size_in_bytes} magic: 2 "
            f"compresscodec: {codec} crc: {b.crc} isvalid: {str(b.validate_crc()).lower()}")


def expected_record_line(b, r, version, *, meta=True, contents=False):
    ts_name = "LogAppendTime" if b.timestamp_type == 1 else "CreateTime"
    sizes = ("keySize", "valueSize") if version >= (2, 8) else ("keysize", "valuesize")
    line = ""
    if meta:
        seq = -1 if b.base_sequence < 0 else b.base_sequence + (r.offset - b.base_offset)
        line = (f"| offset: {r.offset} {ts_name}: {r.timestamp} {sizes[0]}: {-1 if r.key is None else len(r.key)} "
                f"{sizes[1]}: {-1 if r.value is None else len(r.value)} sequence: {seq} "
                f"headerKeys: [{','.join(k for k, _ in r.headers)}]")
        if b.is_control_batch:
            line += f" endTxnMarker: {'COMMIT' if r.commit else 'ABORT'} coordinatorEpoch: 100"
    if contents and not b.is_control_batch:
        if r.key is not None:
            line += (" key: " if meta else "| key: ") + r.key.decode()
        if r.value is not None:
            bar = not meta and r.key is None and version >= (4, 3)
            line += ("| payload: " if bar else " payload: ") + r.value.decode()
    return line


def expected_dump(path, data, version, *, deep=False, meta=True, contents=False):
    header = "Log starting offset: 0" if version >= (3, 3) else "Starting offset: 0"
    lines = [f"Dumping {path}", header]
    for position, b in kafka_python_batches(data):
        lines.append(expected_batch_line(position, b, version))
        if deep:
            lines.extend(expected_record_line(b, r, version, meta=meta, contents=contents) for r in b)
    return lines


VERSIONS = {"4.3": (4, 3), "3.9": (3, 9), "3.2": (3, 2), "3.0": (3, 0), "2.4": (2, 4)}
OPTION_SETS = {
    "shallow": ([], dict()),
    "deep": (["--deep-iteration"], dict(deep=True)),
    "print": (["--print-data-log"], dict(deep=True, contents=True)),
    "skip-meta": (["--deep-iteration", "--skip-record-metadata"], dict(deep=True, meta=False)),
    "skip-meta-print": (["--print-data-log", "--skip-record-metadata"], dict(deep=True, meta=False, contents=True)),
    "decoder-classes": (["--key-decoder-class", "--value-decoder-class=org.apache.kafka.tools.api.StringDecoder"],
                        dict(deep=True, contents=True)),
}


@pytest.fixture(scope="module")
def segment(tmp_path_factory):
    path = tmp_path_factory.mktemp("seg") / "00000000000000000000.log"
    data = build_segment()
    path.write_bytes(data)
    return path, data


# --skip-record-metadata came with Kafka 2.8, so it is not combined with older dialects.
# org.apache.kafka.tools.api.StringDecoder exists from Kafka 3.8 on; older tools fail to load it.
CASES = [(v, o) for v in VERSIONS for o in OPTION_SETS
         if (VERSIONS[v] >= (2, 8) or "--skip-record-metadata" not in OPTION_SETS[o][0])
         and (VERSIONS[v] >= (3, 8) or o != "decoder-classes")]


@pytest.mark.parametrize(("version", "option_set"), CASES)
def test_dump_text(segment, version, option_set):
    path, data = segment
    args, shape = OPTION_SETS[option_set]
    result = run_kdump("--files", str(path), "--kafka-version", version, *args)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == expected_dump(path, data, VERSIONS[version], **shape)
    # Offsets 0..14 are consecutive: no summary (J would report `-1 is followed by 0` only for a
    # segment not starting at 0).
    assert result.stderr == ""


def test_max_bytes_keeps_whole_batches_only(segment):
    """Kafka's testPrintDataLogPartialBatches: --max-bytes of the first two sizes prints exactly two batches."""
    path, data = segment
    sizes = [b.size_in_bytes for _, b in kafka_python_batches(data)]
    result = run_kdump("--files", str(path), "--max-bytes", str(sizes[0] + sizes[1] + sizes[2] - 1))
    assert [line.split()[1] for line in result.stdout.splitlines() if line.startswith("baseOffset")] == ["0", "2"]
    assert "invalid bytes" not in result.stdout  # suppressed whenever --max-bytes is given


def test_non_consecutive_offsets_dialects(tmp_path):
    """A compacted-looking segment starting at 5 with a gap 6 -> 9 (nonConsecutivePairsForLogFilesMap)."""
    path = tmp_path / "00000000000000000005.log"
    path.write_bytes(encode_batch_v2([Record(5, T0, b"a", b"1"), Record(6, T0, b"b", b"2"), Record(9, T0, b"c", b"3"),
                                      Record(12, T0, b"d", b"4")], base_offset=5))
    absolute = os.path.abspath(path)
    java = run_kdump("--files", str(path), "--deep-iteration")
    assert java.stderr.splitlines() == [f"Non-consecutive offsets in {absolute}", "  -1 is followed by 5",
                                        "  6 is followed by 9", "  9 is followed by 12"]
    scala = run_kdump("--files", str(path), "--deep-iteration", "--kafka-version", "3.9")
    assert scala.stderr.splitlines() == [f"Non-consecutive offsets in {absolute}", "  9 is followed by 12",
                                         "  6 is followed by 9"]
    old = run_kdump("--files", str(path), "--deep-iteration", "--kafka-version", "2.2")
    assert old.stderr.splitlines()[0] == f"Non-consecutive offsets in :{absolute}"
    shallow = run_kdump("--files", str(path))
    assert shallow.stderr == ""  # bookkeeping needs deep iteration


def test_delete_horizon_is_the_base_timestamp(tmp_path):
    """Attribute bit 6: baseTimestamp holds the delete horizon (Kafka 3.2+ prints OptionalLong[...])."""
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(encode_batch_v2([Record(0, T0, b"k", None)], base_offset=0, delete_horizon_ms=T0 + 86_400_000))
    line = next(x for x in run_kdump("--files", str(path)).stdout.splitlines() if x.startswith("baseOffset"))
    assert f" isControl: false deleteHorizonMs: OptionalLong[{T0 + 86_400_000}] position: 0 " in line
    old = run_kdump("--files", str(path), "--kafka-version", "3.1").stdout
    assert "deleteHorizonMs" not in old
