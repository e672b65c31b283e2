"""``kafka-log`` end to end on a local[2] Spark, compared with kdump's single-process reader."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kdump[spark]'")

from logbuild import as_tuples, corrupt_byte, reference_batches, reference_rows

import kdump.spark

pytestmark = pytest.mark.spark
PUSHDOWN = "spark.sql.python.filterPushdown.enabled"


def collect(df) -> list[dict]:  # type: ignore[no-untyped-def]
    return [r.asDict(recursive=True) for r in df.collect()]


def test_static_registration_and_rows_equal_single_process_reader(spark, log_dirs: Path) -> None:  # type: ignore[no-untyped-def]
    # No register() call before this first use: the pyspark_kafka_log module registers the source.
    df = spark.read.format("kafka-log").load(str(log_dirs))
    rows = collect(df)
    assert as_tuples(rows) == reference_rows(log_dirs)
    assert df.rdd.getNumPartitions() == 1                  # ten small segments packed into one task


def test_splits_inside_segments_give_identical_rows(spark, log_dirs: Path) -> None:  # type: ignore[no-untyped-def]
    from pyspark.testing import assertDataFrameEqual

    whole = spark.read.format("kafka-log").load(str(log_dirs))
    split = spark.read.format("kafka-log").option("splitBytes", "1k").load(str(log_dirs))
    assert split.rdd.getNumPartitions() > 2 * whole.rdd.getNumPartitions()
    assertDataFrameEqual(split, whole)


@pytest.fixture
def pushdown_on(spark) -> Iterator[None]:  # type: ignore[no-untyped-def]
    spark.conf.set(PUSHDOWN, "true")
    yield
    spark.conf.unset(PUSHDOWN)


def test_pushdown_reduces_the_partitions_read(spark, log_dirs: Path, pushdown_on: None) -> None:  # type: ignore[no-untyped-def]
    df = kdump.spark.load(spark, str(log_dirs), splitBytes="2k")
    query = df.filter("topic = 'orders' AND partition = 1 AND offset >= 150 AND offset < 170")
    everything = df.rdd.getNumPartitions()
    read = query.rdd.getNumPartitions()
    assert read < everything / 5, (read, everything)
    expected = [t for t in reference_rows(log_dirs) if t[:2] == ("orders", 1) and 150 <= t[4] < 170]
    assert as_tuples(collect(query)) == expected and len(expected) == 20
    ts = expected[0][5]
    for late in (df.filter(f"timestamp >= timestamp_millis({ts})"), df.filter(f"timestamp_ms >= {ts}")):
        assert late.rdd.getNumPartitions() < everything      # rolled segments wholly before ts are skipped
    listed = df.filter("offset IN (5, 230)")
    assert listed.rdd.getNumPartitions() <= 2 * 5 < everything
    assert sorted(r.offset for r in listed.collect()) == sorted(t[4] for t in reference_rows(log_dirs) if t[4] in (5, 230))


def test_reading_works_with_pushdown_disabled(spark, log_dirs: Path) -> None:  # type: ignore[no-untyped-def]
    assert spark.conf.get(PUSHDOWN, "false") == "false"
    df = kdump.spark.load(spark, str(log_dirs))             # picks the reader without pushFilters
    assert df.filter("topic = 'payments'").count() == sum(1 for t in reference_rows(log_dirs) if t[0] == "payments")


def test_corrupt_batch_surfaces_as_isvalid_false(spark, log_dirs: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    copy = tmp_path / "logs"
    shutil.copytree(log_dirs / "orders-2", copy / "orders-2")
    log = sorted((copy / "orders-2").glob("*.log"))[0]
    position = reference_batches(copy)[1][3]
    corrupt_byte(log, position + 80)
    df = spark.read.format("kafka-log").load(str(copy))
    bad = collect(df.filter("NOT isvalid"))
    assert len(bad) == 1
    assert bad[0]["batchPosition"] == position and bad[0]["offset"] is None
    assert "Record is corrupt" in bad[0]["error"]
    assert df.filter("isvalid").count() == len(reference_rows(log_dirs / "orders-2")) - 20


def test_narrower_schema(spark, log_dirs: Path) -> None:  # type: ignore[no-untyped-def]
    df = (spark.read.format("kafka-log").schema("offset long, topic string, key binary")
          .load([str(log_dirs / "orders-0"), str(log_dirs / "payments-*")]))
    assert df.columns == ["offset", "topic", "key"]
    got = sorted((r.topic, r.offset, r.key) for r in df.collect())
    expected = sorted((t[0], t[4], t[6]) for t in reference_rows(log_dirs)
                      if t[0] == "payments" or t[:2] == ("orders", 0))
    assert got == expected


def test_level_batch(spark, log_dirs: Path) -> None:  # type: ignore[no-untyped-def]
    df = spark.read.format("kafka-log").option("level", "batch").load(str(log_dirs))
    got = sorted((r.topic, r.partition, r.segment, r.batchPosition, r.baseOffset, r.lastOffset, r["count"], r.crc)
                 for r in df.collect())
    assert got == reference_batches(log_dirs)


def test_spark3_fallback_gives_the_same_rows(spark, log_dirs: Path) -> None:  # type: ignore[no-untyped-def]
    from kdump.spark.fallback import load_fallback

    df = load_fallback(spark, str(log_dirs), splitBytes="2k")
    assert df.rdd.getNumPartitions() > 10
    assert as_tuples(collect(df)) == reference_rows(log_dirs)
