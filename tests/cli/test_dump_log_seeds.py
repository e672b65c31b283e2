"""Real Kafka dump outputs (quoted below), reproduced from reconstructed bytes."""

from __future__ import annotations

from kdump.format.batch import scan_batches
from kdump.format.encode import encode_batch_v2, encode_legacy_message
from kdump.format.records import Record
from kdump_testing import run_kdump

# Kafka 2.2.1 output: `kafka-run-class.sh kafka.tools.DumpLogSegments --print-data-log` on Kafka 2.2.1.
SEED_002_BATCH = (
    "baseOffset: 99 lastOffset: 102 count: 4 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
    "partitionLeaderEpoch: 0 isTransactional: false isControl: false position: 0 CreateTime: 1611670759851 "
    "size: 137 magic: 2 compresscodec: NONE crc: 820456027 isvalid: true"
)
SEED_002_RECORDS = [
    "| offset: 99 CreateTime: 1611670759849 keysize: 5 valuesize: 7 sequence: -1 headerKeys: [] key: key-1 payload: value-1",
    "| offset: 100 CreateTime: 1611670759849 keysize: 5 valuesize: 7 sequence: -1 headerKeys: [] key: key-2 payload: value-2",
    "| offset: 101 CreateTime: 1611670759851 keysize: 5 valuesize: 7 sequence: -1 headerKeys: [] key: key-5 payload: value-5",
    "| offset: 102 CreateTime: 1611670759851 keysize: 5 valuesize: 7 sequence: -1 headerKeys: [] key: key-6 payload: value-6",
]


def seed_002_batch() -> bytes:
    records = [
        Record(99, 1611670759849, b"key-1", b"value-1"),
        Record(100, 1611670759849, b"key-2", b"value-2"),
        Record(101, 1611670759851, b"key-5", b"value-5"),
        Record(102, 1611670759851, b"key-6", b"value-6"),
    ]
    return encode_batch_v2(records, base_offset=99, partition_leader_epoch=0)


def test_seed_002_batch_bytes():
    data = seed_002_batch()
    assert len(data) == 137
    (batch,) = scan_batches(data)
    assert batch.crc == 820456027 and batch.is_valid


def test_seed_002_dump_in_kafka_2_2_dialect(tmp_path):
    path = tmp_path / "00000000000000000099.log"
    path.write_bytes(seed_002_batch())
    result = run_kdump("--files", str(path), "--print-data-log", "--kafka-version", "2.2")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [f"Dumping {path}", "Starting offset: 99", SEED_002_BATCH,
                                          *SEED_002_RECORDS]
    assert result.stderr == ""


def test_seed_002_large_batch_size():
    """Kafka 2.2.1's 372-record batch (15-byte keys, 21-byte values, producer batch.size 16384) is 16365 bytes."""
    records = [Record(2476 + i, 1647327649746 + min(i // 70, 5), b"key-key-key%04d" % (4088 + i),
                      b"value-value-value%04d" % (4088 + i)) for i in range(372)]
    data = encode_batch_v2(records, base_offset=2476, partition_leader_epoch=1)
    (batch,) = scan_batches(data)
    assert (batch.size, batch.last_offset, batch.records_count) == (16365, 2847, 372)


def test_seed_000_magic_0_message_crc(tmp_path):
    """A real magic-0 dump line: offset 291178, key `11`, payload `Message_11`, magic 0, no compression: crc 576249152."""
    data = encode_legacy_message(291178, b"11", b"Message_11", magic=0)
    (batch,) = scan_batches(data)
    assert (batch.crc, batch.magic, batch.is_valid) == (576249152, 0, True)
    path = tmp_path / "00000000000000291178.log"
    path.write_bytes(data)
    result = run_kdump("--files", str(path), "--print-data-log")
    assert result.stdout.splitlines()[2:] == [
        f"offset: 291178 position: 0 NoTimestampType: -1 size: {len(data)} magic: 0 compresscodec: none "
        f"crc: 576249152 isvalid: true",
        "| offset: 291178 NoTimestampType: -1 keySize: 2 valueSize: 10 isValid: true crc: 576249152 key: 11 "
        "payload: Message_11",
    ]
