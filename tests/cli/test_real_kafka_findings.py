"""Differences the diff against the real tools (tests/kafka/test_real_dump.py) found, pinned here so
they are checked without Java too. Expected lines are the real tools' output for the fixtures."""

from __future__ import annotations

import os
from pathlib import Path

from kdump_testing import run_kdump

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SEG = "00000000000000000000"


def test_kafka_22_lists_a_files_mismatches_newest_first_repeats_included() -> None:
    index = FIXTURES / "corrupt-index" / "bad-offset-not-increasing-0" / f"{SEG}.index"
    result = run_kdump("--files", str(index), "--verify-index-only", "--kafka-version", "2.2.2")
    pairs = [(68, 66), (62, 60), (56, 54), (50, 48), (44, 42), (38, 36), (32, 30), (26, 24), (14, 18), (14, 12),
             (8, 6)]
    assert result.stderr.splitlines() == [f"Mismatches in :{os.path.abspath(index)}"] + \
        [f"  Index offset: {i}, log offset: {o}" for i, o in pairs]


def test_java_tool_keeps_one_mismatch_per_index_offset() -> None:
    index = FIXTURES / "corrupt-index" / "bad-offset-not-increasing-0" / f"{SEG}.index"
    result = run_kdump("--files", str(index), "--verify-index-only", "--kafka-version", "4.3.0")
    assert result.stderr.splitlines() == [f"Mismatches in :{os.path.abspath(index)}",
                                          "  Index offset: 14, log offset: 20"]


def test_kafka_28_legacy_base_offset_is_the_first_inner_record() -> None:
    log = FIXTURES / "logdirs" / "v1-snappy-0" / f"{SEG}.log"
    result = run_kdump("--files", str(log), "--deep-iteration", "--kafka-version", "2.8.2")
    line = result.stdout.splitlines()[3]
    assert line.startswith("| offset: 0 isValid: true crc: 1222858701 keySize: 5 valueSize: 78 "
                           "LogAppendTime: 1700000002831 baseOffset: 0 lastOffset: 4 ")


def test_kafka_40_snapshot_schema_errors_are_the_generated_readers(tmp_path: Path) -> None:
    """4.0+ read producer snapshots with a generated class; 3.x with a Struct schema."""
    cases = {
        b"\x00\x01" + b"\x00" * 7: ("Error reading field 'producer_entries': java.nio.BufferUnderflowException", "null"),
        b"\x00\x01" + b"\x00" * 4 + b"\xff\xff\xff\xff": (
            "Error reading field 'producer_entries': Array size -1 cannot be negative",
            "non-nullable field producerEntries was serialized as null"),
        b"\x00\x01" + b"\x00" * 4 + (1000).to_bytes(4, "big") + b"\x00" * 20: (
            "Error reading field 'producer_entries': Error reading array of size 1000, only 20 bytes available",
            "Tried to allocate a collection of size 1000, but there are only 20 bytes remaining."),
    }
    for i, (data, (scala, generated)) in enumerate(cases.items()):
        path = tmp_path / f"{i:020d}.snapshot"
        path.write_bytes(data)
        for version, detail in (("3.9.2", scala), ("4.0.2", generated), ("4.3.0", generated)):
            result = run_kdump("--files", str(path), "--kafka-version", version)
            assert result.stderr == f"Snapshot failed schema validation: {detail}\n", (version, data)


def test_a_name_without_a_dot_is_ignored_by_the_java_tool(tmp_path: Path) -> None:
    path = tmp_path / "notes"
    path.write_text("not a Kafka file\n")
    result = run_kdump("--files", str(path), "--kafka-version", "4.3.0")
    assert (result.exit_code, result.stdout, result.stderr) == (0, f"Dumping {path}\n", f"Ignoring unknown file {path}\n")
    older = run_kdump("--files", str(path), "--kafka-version", "4.2.1")  # Kafka crashes: one error line
    assert older.exit_code == 1 and older.stderr.startswith(f"Error: {path}: ")


def test_a_key_the_decoder_cannot_read_leaves_the_metadata_kafka_printed(tmp_path: Path) -> None:
    """Kafka prints a record's metadata, then decodes key and value: IntegerDecoder on a 2-byte key
    dies after `... headerKeys: []` (BufferUnderflowException). kdump prints the same, then its error."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    builder.append(0, timestamp=1700000000000, key=b"\x00\x00\x00\x07", value=b"v", headers=[])
    builder.append(1, timestamp=1700000000001, key=b"ab", value=b"w", headers=[])
    path = tmp_path / f"{SEG}.log"
    path.write_bytes(bytes(builder.build()))
    result = run_kdump("--files", str(path), "--key-decoder-class", "org.apache.kafka.tools.api.IntegerDecoder",
                       "--kafka-version", "4.3.0")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[3:] == [
        "| offset: 0 CreateTime: 1700000000000 keySize: 4 valueSize: 1 sequence: -1 headerKeys: [] key: 7 payload: v",
        "| offset: 1 CreateTime: 1700000000001 keySize: 2 valueSize: 1 sequence: -1 headerKeys: []"]
    assert result.stderr.startswith(f"Error: {path}: ")


def test_a_missing_log_still_gets_its_header_line(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000099.log"
    result = run_kdump("--files", str(path), "--kafka-version", "4.3.0")
    assert result.stdout == f"Dumping {path}\nLog starting offset: 99\n"
    assert result.exit_code == 1


def test_internal_topic_texts_of_24_to_28() -> None:
    from kdump.format.messages import tables
    from kdump.format.messages.encode import coordinator_key, coordinator_value, metadata_record
    from kdump.render.dialect import LATEST_RELEASE
    from kdump.render.internal_topics import ClusterMetadataDecoder, TransactionLogDecoder

    topic = metadata_record(tables.metadata(LATEST_RELEASE)[2], 0, {"name": "t", "topicId": "Uj5wn_FqTXirEASvVZRY1w"})
    assert ClusterMetadataDecoder((2, 8)).decode(0, None, topic) == (None, (
        "Error at 0, skipping. Could not deserialize metadata record due to unknown frame version 1"
        "(only frame version 0 is supported)"))
    key_schema, value_schema = tables.transaction_log(LATEST_RELEASE)[0]
    key = coordinator_key(key_schema, 0, {"TransactionalId": "tx"})
    value = coordinator_value(value_schema, 0, {"ProducerId": 5, "ProducerEpoch": 1, "TransactionTimeoutMs": 60000,
                                                "TransactionStatus": 0, "TransactionPartitions": [],
                                                "TransactionLastUpdateTimestampMs": 1700000000000,
                                                "TransactionStartTimestampMs": -1})
    expected = ("producerId:5,producerEpoch:1,state=Empty,partitions={},txnLastUpdateTimestamp=1700000000000,"
                "txnTimeoutMs=60000")
    assert TransactionLogDecoder((2, 4)).decode(0, key, value)[1] == expected.format("Set()")
    assert TransactionLogDecoder((2, 7)).decode(0, key, value)[1] == expected.format("[]")


def test_internal_topic_texts_before_24() -> None:
    """2.2-2.3 DumpLogSegments had its own parsers (seen with the real 2.2.2 and 2.3.1 tools)."""
    import pytest

    from kdump.errors import InvalidRecordError
    from kdump.format.messages import tables
    from kdump.format.messages.encode import coordinator_key, coordinator_value
    from kdump.render.dialect import LATEST_RELEASE
    from kdump.render.internal_topics import OffsetsDecoder, TransactionLogDecoder

    gc = tables.group_coordinator(LATEST_RELEASE)
    commit_key = coordinator_key(gc[1][0], 1, {"group": "g", "topic": "t", "partition": 0})
    commit = coordinator_value(gc[1][1], 1, {"offset": 42, "metadata": "m", "commitTimestamp": 1, "expireTimestamp": -1})
    bare = coordinator_value(gc[1][1], 3, {"offset": 7, "leaderEpoch": 2, "metadata": "", "commitTimestamp": 1})
    group = coordinator_value(gc[2][1], 3, {"protocolType": "consumer", "generation": 1, "protocol": "range",
                                           "leader": None, "currentStateTimestamp": -1, "members": []})
    for version in ((2, 2), (2, 3)):
        d = OffsetsDecoder(version)
        assert d.decode(0, commit_key, commit) == ("offset::g:t:0", "42:m")
        assert d.decode(1, commit_key, bare) == ("offset::g:t:0", "7")
        assert d.decode(3, commit_key, None) == (None, None)
    assert OffsetsDecoder((2, 3)).decode(2, coordinator_key(gc[2][0], 2, {"group": "g"}), group) == (
        '{"metadata":"g"}', '{"protocolType":"consumer","protocol":"range","generationId":1,"assignment":"{}"}')
    with pytest.raises(InvalidRecordError, match="Unknown group metadata version 3"):
        OffsetsDecoder((2, 2)).decode(2, coordinator_key(gc[2][0], 2, {"group": "g"}), group)
    txn_key = coordinator_key(tables.transaction_log(LATEST_RELEASE)[0][0], 0, {"TransactionalId": "tx"})
    assert TransactionLogDecoder((2, 3)).decode(0, txn_key, coordinator_value(
        tables.transaction_log(LATEST_RELEASE)[0][1], 0, {"ProducerId": 5, "ProducerEpoch": 1, "TransactionTimeoutMs": 60000,
                                          "TransactionStatus": 0, "TransactionPartitions": [],
                                          "TransactionLastUpdateTimestampMs": 1, "TransactionStartTimestampMs": -1})
    )[0] == "transactionalId=tx"
