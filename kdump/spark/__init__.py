"""Kafka log directories as Spark DataFrames (optional extra: ``pip install 'kdump[spark]'``).

A thin layer over ``kdump.log``/``kdump.format``: ``planning`` turns paths into byte-range splits,
``reading`` turns one split into Arrow batches, ``datasource`` wires both into Spark 4's Python
Data Source API as ``kafka-log``, ``fallback`` does the same for Spark 3 with ``mapInArrow``,
``jobs`` holds the ``kdump spark`` verify/export jobs. Nothing here is imported by the rest of
kdump, and pyspark is imported only by the modules that need it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def register(spark: SparkSession) -> None:
    """Register ``kafka-log`` explicitly (static registration covers installed copies of kdump)."""
    from kdump.spark.datasource import KafkaLogDataSource

    spark.dataSource.register(KafkaLogDataSource)


def load(spark: SparkSession, paths: str | list[str], **options: Any) -> DataFrame:
    """``spark.read.format("kafka-log")`` with ``pushdown`` set from the session's configuration.

    Spark 3.x sessions have no Python Data Source API: there the ``mapInArrow`` fallback is used.
    """
    if not hasattr(spark, "dataSource"):
        from kdump.spark.fallback import load_fallback

        return load_fallback(spark, paths, **options)
    register(spark)
    if "pushdown" not in options:
        enabled = spark.conf.get("spark.sql.python.filterPushdown.enabled", "false")
        options["pushdown"] = str(enabled).lower() == "true"
    reader = spark.read.format("kafka-log")
    for key, value in options.items():
        reader = reader.option(key, str(value).lower() if isinstance(value, bool) else str(value))
    return reader.load(paths)
