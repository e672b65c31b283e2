"""Legacy (v0/v1) record lines across dialects, and the JSON Lines output (lossless, one line per record).

Expected record tails follow docs/dialects-research.md (from DumpLogSegments.scala at each release
tag) and Kafka's testLegacyRecordBatchOutputFormat; CRCs come from kafka-python reading the bytes.
"""

from __future__ import annotations

import base64
import json
import struct

from kafka.record.legacy_records import LegacyRecordBatch

from kdump.format.batch import TimestampType
from kdump.format.codecs import Codec
from kdump.format.encode import encode_batch_v2, encode_legacy_wrapper
from kdump.format.messages import tables
from kdump.format.messages.encode import coordinator_key, coordinator_value
from kdump.format.records import Record
from kdump_testing import run_kdump

T0 = 1_500_000_000_000


def v1_wrapper() -> bytes:
    return encode_legacy_wrapper([Record(1000, T0, b"k1", b"v1"), Record(1001, T0 + 5, None, b"v2")], magic=1,
                                 codec=Codec.GZIP)


def inner_crcs(data: bytes) -> list[int]:
    return [r.checksum for r in LegacyRecordBatch(data, 1)]


def record_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("|")]


def test_legacy_record_lines_per_dialect(tmp_path):
    data = v1_wrapper()
    path = tmp_path / "00000000000000001000.log"
    path.write_bytes(data)
    c1, c2 = inner_crcs(data)
    java = record_lines(run_kdump("--files", str(path), "--deep-iteration").stdout)
    assert java == [f"| offset: 1000 CreateTime: {T0} keySize: 2 valueSize: 2 isValid: true crc: {c1}",
                    f"| offset: 1001 CreateTime: {T0 + 5} keySize: -1 valueSize: 2 isValid: true crc: {c2}"]
    full = run_kdump("--files", str(path), "--deep-iteration").stdout
    assert full.count("{") == full.count("}")  # Kafka's testLegacyRecordBatchOutputFormat
    scala = record_lines(run_kdump("--files", str(path), "--deep-iteration", "--kafka-version", "3.9").stdout)
    assert scala[0].endswith(f" isValid: true crc: {c1}}}")
    old = record_lines(run_kdump("--files", str(path), "--deep-iteration", "--kafka-version", "2.4").stdout)
    assert old[0] == f"| offset: 1000 CreateTime: {T0} keysize: 2 valuesize: 2 crc: {c1} isvalid: true"
    v28 = run_kdump("--files", str(path), "--print-data-log", "--kafka-version", "2.8.1").stdout.splitlines()
    batch_line = v28[2]
    size = len(data)
    assert batch_line.startswith("offset: 1001 position: 0 CreateTime: ") and "compresscodec: GZIP" in batch_line
    # baseOffset is the first inner record's offset (the real 2.8.2 tool, tests/kafka/test_real_dump.py).
    assert record_lines("\n".join(v28))[0] == (
        f"| offset: 1000 isValid: true crc: {c1} keySize: 2 valueSize: 2 CreateTime: {T0} baseOffset: 1000 "
        f"lastOffset: 1001 baseSequence: -1 lastSequence: -1 producerEpoch: -1 partitionLeaderEpoch: -1 "
        f"batchSize: {size} magic: 1 compressType: GZIP position: 0 crc: {c1} isvalid: true key: k1 payload: v1")


def test_log_append_time_overrides_inner_timestamps(tmp_path):
    data = encode_legacy_wrapper([Record(5, T0, b"a", b"1"), Record(6, T0 + 9, b"b", b"2")], magic=1,
                                 codec=Codec.SNAPPY, timestamp_type=TimestampType.LOG_APPEND_TIME,
                                 log_append_time=T0 + 1000)
    path = tmp_path / "00000000000000000005.log"
    path.write_bytes(data)
    lines = record_lines(run_kdump("--files", str(path), "--deep-iteration").stdout)
    assert [line.split()[3:5] for line in lines] == [["LogAppendTime:", str(T0 + 1000)]] * 2


def test_null_value_keys_before_and_after_kafka_2_4(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(encode_batch_v2([Record(0, T0, b"gone", None)], base_offset=0))
    new = record_lines(run_kdump("--files", str(path), "--print-data-log").stdout)
    assert new[0].endswith("headerKeys: [] key: gone")
    old = record_lines(run_kdump("--files", str(path), "--print-data-log", "--kafka-version", "2.3").stdout)
    assert old[0].endswith("headerKeys: []")


def json_lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_json_lines_are_lossless(tmp_path):
    key, value = b"\x00\xffbinary", "caf\u00e9 \U0001F680".encode()
    headers = ((b"trace", b"\x01\x02"), (b"none", None))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(encode_batch_v2([Record(0, T0, key, value, headers), Record(1, T0 + 1, None, None)],
                                     base_offset=0, codec=Codec.ZSTD))
    result = run_kdump("--files", str(path), "--json", "--deep-iteration")
    assert result.exit_code == 0
    file_obj, batch_obj, first, second = json_lines(result.stdout)
    assert file_obj == {"type": "file", "schemaVersion": 2, "path": str(path), "fileType": "log",
                        "size": path.stat().st_size, "logStartingOffset": 0}
    assert (batch_obj["type"], batch_obj["compressCodec"], batch_obj["isValid"], batch_obj["count"]) == \
        ("batch", "zstd", True, 2)
    assert "records" not in batch_obj and "error" not in batch_obj
    assert [(r["type"], r["path"], r["batchPosition"], r["offset"]) for r in (first, second)] == \
        [("record", str(path), 0, 0), ("record", str(path), 0, 1)]
    assert base64.b64decode(first["key"]) == key and base64.b64decode(first["value"]) == value
    assert [(base64.b64decode(h["key"]), h["value"] and base64.b64decode(h["value"])) for h in first["headers"]] == \
        [(b"trace", b"\x01\x02"), (b"none", None)]
    assert (second["key"], second["value"], second["keySize"], second["valueSize"]) == (None, None, -1, -1)
    assert "keyDecoded" not in first  # only with --print-data-log or a decoder, as in the text dump


def test_no_json_line_grows_with_the_batch(tmp_path):
    """A batch is one line and each record another: the longest line hardly changes from 10 to 2000 records."""
    longest = []
    for count in (10, 2000):
        path = tmp_path / f"{count}" / "00000000000000000000.log"
        path.parent.mkdir()
        path.write_bytes(encode_batch_v2([Record(i, T0, b"k", b"v" * 20) for i in range(count)], base_offset=0,
                                         codec=Codec.GZIP))
        lines = run_kdump("--files", str(path), "--json", "--print-data-log").stdout.splitlines()
        assert len(lines) == 2 + count
        longest.append(max(len(line) for line in lines))
    # Only digits differ: the path's directory, lastOffset, count, size and crc (20 records' worth is ~2 KB).
    assert longest[1] <= longest[0] + 12


def test_json_keeps_a_batch_whose_records_fail_to_decode(tmp_path):
    """The text dump prints such a batch's line before the error; JSON keeps the batch with an ``error``."""
    bad = bytearray(encode_batch_v2([Record(0, T0, b"k", b"v"), Record(1, T0 + 1, b"k", b"v")], base_offset=0))
    bad[57:61] = (3).to_bytes(4, "big")  # recordsCount 3 where the batch holds 2
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(bad))
    text = run_kdump("--files", str(path), "--deep-iteration")
    result = run_kdump("--files", str(path), "--deep-iteration", "--json")
    assert text.exit_code == result.exit_code == 1
    assert text.stdout.splitlines()[2].startswith("baseOffset: 0 lastOffset: 1 count: 3 ")
    _, batch_obj = json_lines(result.stdout)
    assert (batch_obj["position"], batch_obj["baseOffset"], batch_obj["lastOffset"], batch_obj["count"]) == (0, 0, 1, 3)
    assert result.stderr == text.stderr == f"Error: {path}: position 0: {batch_obj['error']}\n"


def test_json_keeps_a_batch_that_fails_to_decompress(tmp_path):
    data = bytearray(encode_batch_v2([Record(0, T0, b"k" * 50, b"v" * 100)], base_offset=0, codec=Codec.GZIP))
    data[70:80] = b"\xff" * 10  # inside the gzip stream
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    result = run_kdump("--files", str(path), "--deep-iteration", "--json")
    assert result.exit_code == 1
    _, batch_obj = json_lines(result.stdout)
    assert (batch_obj["compressCodec"], batch_obj["isValid"]) == ("gzip", False)
    assert batch_obj["error"].startswith("gzip: invalid compressed data")
    assert result.stderr == f"Error: {path}: position 0: {batch_obj['error']}\n"


def test_json_adds_the_decoders_text_beside_the_bytes(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(encode_batch_v2([Record(0, T0, struct.pack(">q", -5), struct.pack(">i", 42)),
                                      Record(1, T0, None, b"\x00\x00\x01\x00")], base_offset=0))
    result = run_kdump("--files", str(path), "--json", "--key-decoder-class", "LongDecoder",
                       "--value-decoder-class", "org.apache.kafka.tools.api.IntegerDecoder")
    assert result.exit_code == 0, result.stderr
    first, second = json_lines(result.stdout)[2:]
    assert (first["keyDecoded"], first["valueDecoded"]) == ("-5", "42")
    assert (second["keyDecoded"], second["valueDecoded"]) == (None, "256")
    assert base64.b64decode(first["value"]) == struct.pack(">i", 42)


def test_json_offsets_decoder_text(tmp_path):
    registry = tables.group_coordinator((4, 3))
    key = coordinator_key(registry[3][0], 3, {"groupId": "group"})
    value = coordinator_value(registry[3][1], 0, {"epoch": 10})
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(encode_batch_v2([Record(0, T0, key, value)], base_offset=0))
    result = run_kdump("--files", str(path), "--json", "--offsets-decoder")
    record = json_lines(result.stdout)[2]
    # Kafka's GroupCoordinatorRecordSerde JSON for a ConsumerGroupMetadata record (tests/render).
    assert (record["keyDecoded"], record["valueDecoded"]) == \
        ('{"type":"3","data":{"groupId":"group"}}', '{"version":"0","data":{"epoch":10}}')


def test_json_reports_non_consecutive_offsets_on_stdout(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(encode_batch_v2([Record(0, T0, b"k", b"v"), Record(1, T0, b"k", b"v")], base_offset=0)
                     + encode_batch_v2([Record(5, T0, b"k", b"v")], base_offset=5))
    text = run_kdump("--files", str(path), "--deep-iteration")
    assert text.stderr.splitlines()[1:] == ["  1 is followed by 5"]  # Kafka's summary, on stderr
    result = run_kdump("--files", str(path), "--deep-iteration", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json_lines(result.stdout)[-1] == {"type": "nonConsecutiveOffsets", "path": str(path.resolve()),
                                             "previousOffset": 1, "offset": 5}


def test_json_reports_index_mismatches_on_stdout(tmp_path):
    from kdump_testing import index_fixtures

    fx = index_fixtures()
    fx.make_case("healthy-follower-pre41", str(tmp_path))
    index = tmp_path / "healthy-follower-pre41-0" / "00000000000000000000.index"
    log = fx.leader_log()
    by_pos = {b.position: b.last_offset for b in fx.batches_of(log)}
    pairs = sorted(((o, by_pos[p]) for o, p in fx.chunked_indexes(log).offset_entries), reverse=True)
    result = run_kdump("--files", str(index), "--verify-index-only", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    mismatches = [obj for obj in json_lines(result.stdout) if obj["type"] == "indexMismatch"]
    assert mismatches == [{"type": "indexMismatch", "path": str(index), "indexOffset": o, "logOffset": lo}
                          for o, lo in pairs]
