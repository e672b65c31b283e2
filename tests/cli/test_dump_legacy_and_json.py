"""Legacy (v0/v1) record lines across dialects, and the lossless JSON Lines output.

Expected record tails follow docs/dialects-research.md (from DumpLogSegments.scala at each release
tag) and Kafka's testLegacyRecordBatchOutputFormat; CRCs come from kafka-python reading the bytes.
"""

from __future__ import annotations

import base64
import json

from kdump_testing import run_kdump
from kafka.record.legacy_records import LegacyRecordBatch

from kdump.format.batch import TimestampType
from kdump.format.codecs import Codec
from kdump.format.encode import encode_batch_v2, encode_legacy_wrapper
from kdump.format.records import Record

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


def test_json_lines_are_lossless(tmp_path):
    key, value = b"\x00\xffbinary", "caf\u00e9 \U0001F680".encode()
    headers = ((b"trace", b"\x01\x02"), (b"none", None))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(encode_batch_v2([Record(0, T0, key, value, headers), Record(1, T0 + 1, None, None)],
                                     base_offset=0, codec=Codec.ZSTD))
    result = run_kdump("--files", str(path), "--json", "--deep-iteration")
    assert result.exit_code == 0
    file_obj, batch_obj = [json.loads(line) for line in result.stdout.splitlines()]
    assert file_obj == {"type": "file", "schemaVersion": 1, "path": str(path), "fileType": "log",
                        "size": path.stat().st_size, "logStartingOffset": 0}
    assert (batch_obj["compressCodec"], batch_obj["isValid"], batch_obj["count"]) == ("zstd", True, 2)
    first, second = batch_obj["records"]
    assert base64.b64decode(first["key"]) == key and base64.b64decode(first["value"]) == value
    assert [(base64.b64decode(h["key"]), h["value"] and base64.b64decode(h["value"])) for h in first["headers"]] == \
        [(b"trace", b"\x01\x02"), (b"none", None)]
    assert (second["key"], second["value"], second["keySize"], second["valueSize"]) == (None, None, -1, -1)
