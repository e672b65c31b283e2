"""Where a row comes from (path, log_dir, broker) and the record timestamp as a Spark TIMESTAMP."""

from __future__ import annotations

import datetime
import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyarrow", reason="pyarrow not installed: pip install 'kdump[spark]'")
pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kdump[spark]'")
from logbuild import BASE_TIME, write_partition

from kdump.errors import InputError
from kdump.spark.datasource import KafkaLogDataSource
from kdump.spark.schema import spark_schema

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logdirs"


def read(paths: list[Path], level: str = "record") -> list[dict]:
    source = KafkaLogDataSource({"paths": json.dumps([str(p) for p in paths]), "level": level})
    reader = source.reader(spark_schema(level))
    return [row for p in reader.partitions() for b in reader.read(p) for row in b.to_pylist()]


def test_replicas_of_several_brokers_are_told_apart(tmp_path: Path) -> None:
    kraft, zk, bare = tmp_path / "b1" / "kafka-logs", tmp_path / "b2" / "kafka-logs", tmp_path / "b3" / "data"
    write_partition(kraft, "orders", 0, segments=2, batches=2)
    for other in (zk, bare):
        shutil.copytree(kraft, other)
    (kraft / "meta.properties").write_text("#\nversion=1\nnode.id=1\ncluster.id=abc\n")
    (zk / "meta.properties").write_text("version=0\nbroker.id=2\n")
    rows = read([kraft, zk, bare])
    by_dir = {}
    for r in rows:
        by_dir.setdefault((r["log_dir"], r["broker"]), set()).add((r["offset"], r["path"]))
    assert set(by_dir) == {(str(kraft), 1), (str(zk), 2), (str(bare), None)}
    offsets = {d: sorted(o for o, _ in v) for d, v in by_dir.items()}
    assert offsets[(str(kraft), 1)] == offsets[(str(zk), 2)] == list(range(80))
    assert {p for _, p in by_dir[(str(zk), 2)]} == {str(p) for p in (zk / "orders-0").glob("*.log")}
    batches = read([zk], level="batch")
    assert {(r["log_dir"], r["broker"]) for r in batches} == {(str(zk), 2)}


def test_timestamp_is_a_spark_timestamp_and_timestamp_ms_keeps_kafkas_value(tmp_path: Path) -> None:
    write_partition(tmp_path / "logs", "t", 0, segments=1, batches=1, records_per_batch=3)
    rows = read([tmp_path / "logs"])
    assert [r["timestamp_ms"] for r in rows] == [BASE_TIME, BASE_TIME + 10, BASE_TIME + 20]
    assert rows[1]["timestamp"] == datetime.datetime(2023, 11, 14, 22, 13, 20, 10000, tzinfo=datetime.UTC)
    v0 = read([FIXTURES / "v0-0"])                      # magic 0: Kafka's NO_TIMESTAMP (-1)
    assert v0 and all(r["timestamp"] is None and r["timestamp_ms"] == -1 for r in v0)


def test_schema_names_follow_sparks_kafka_source() -> None:
    fields = {f.name: f.dataType.simpleString() for f in spark_schema("record").fields}
    # Spark's Kafka source: key, value, topic, partition, offset, timestamp, timestampType, headers.
    assert (fields["timestamp"], fields["key"], fields["value"], fields["offset"], fields["partition"]) == \
        ("timestamp", "binary", "binary", "bigint", "int")
    assert fields["headers"] == "array<struct<key:string,value:binary>>"
    assert (fields["timestamp_ms"], fields["path"], fields["log_dir"], fields["broker"]) == \
        ("bigint", "string", "string", "int")


def test_a_path_without_segments_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "orders-0").mkdir()
    with pytest.raises(InputError, match=r"no Kafka segments \(<20-digit offset>\.log\) found here"):
        read([tmp_path])
