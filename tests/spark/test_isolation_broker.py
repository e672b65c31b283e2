"""read_committed against a real broker and a real consumer.

A kafka-python transactional producer writes to a real Kafka broker (tests/kafka's harness), some
transactions aborted, with a plain producer's records in between, across several segments; a
kafka-python consumer with isolation_level=read_committed reads the partition back. The broker is
then stopped and its log dir read with Spark: the rows must be exactly the consumer's records.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kdump[spark]'")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kafka"))

from broker import RELEASES, Broker
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from real_jars import kafka_lib

pytestmark = pytest.mark.spark
TOPIC = "tx"


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[tuple], int]]:
    """(partition dir, the read_committed consumer's (offset, key, value) records, aborted record count)."""
    root = tmp_path_factory.mktemp("broker")
    broker = Broker(kafka_lib(RELEASES[0]), root / "logs", root / "work", RELEASES[0]).start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
        admin.close()
        txn = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id="kdump-spark-isolation",
                            compression_type="gzip", linger_ms=5)
        plain = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
        txn.init_transactions()
        aborted = 0
        noise = random.Random(7)               # incompressible values: ~2 MB rolls the 1 MiB segments
        for t in range(36):
            txn.begin_transaction()
            for i in range(25):
                txn.send(TOPIC, key=f"t{t}-{i}".encode(), value=noise.randbytes(2000))
                if i % 10 == 0:
                    plain.send(TOPIC, key=None, value=f"plain {t}-{i}".encode()).get(timeout=30)
            txn.flush()  # an abort drops what the client still holds: send it, so every transaction has data here
            if t % 3 == 1:
                txn.abort_transaction()
                aborted += 25
            else:
                txn.commit_transaction()
        txn.close()
        plain.close()
        consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, isolation_level="read_committed",
                                 enable_auto_commit=False, auto_offset_reset="earliest")
        partition = TopicPartition(TOPIC, 0)
        consumer.assign([partition])
        end = consumer.end_offsets([partition])[partition]        # the last stable offset
        seen: list[tuple] = []
        deadline = time.monotonic() + 120
        while consumer.position(partition) < end and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=1000).values():
                seen.extend((r.offset, r.key, r.value) for r in records)
        consumer.close()
        assert consumer_done(seen, end)
    finally:
        broker.stop()
    yield root / "logs" / f"{TOPIC}-0", seen, aborted


def consumer_done(seen: list[tuple], end: int) -> bool:
    return bool(seen) and seen[-1][0] < end


def test_the_broker_rolled_segments_and_aborted_transactions(produced: tuple[Path, list[tuple], int]) -> None:
    pdir, seen, aborted = produced
    assert len(list(pdir.glob("*.log"))) >= 2 and list(pdir.glob("*.txnindex"))
    assert len(seen) == 36 * 25 - aborted + 36 * 3


@pytest.mark.parametrize("split_bytes", ["128m", "64k"])
def test_read_committed_rows_are_the_consumers_records(spark, produced, split_bytes: str) -> None:  # type: ignore[no-untyped-def]
    pdir, seen, _ = produced
    df = (spark.read.format("kafka-log").option("isolation", "read_committed").option("splitBytes", split_bytes)
          .load(str(pdir)))
    rows = sorted((r.offset, r.key, r.value) for r in df.select("offset", "key", "value").collect())
    assert [(o, None if k is None else bytes(k), bytes(v)) for o, k, v in rows] == seen
    everything = spark.read.format("kafka-log").option("splitBytes", split_bytes).load(str(pdir))
    kept = everything.filter("NOT aborted AND NOT isControl").select("offset").collect()
    assert sorted(r.offset for r in kept) == [t[0] for t in seen]
