"""Kafka log directories as Spark DataFrames (optional extra: ``pip install 'kdump[spark]'``).

Spark adapters over ``kdump.arrow``, where paths become byte-range splits (``planning``) and a split
Arrow batches (``reading``): ``datasource`` wires both into Spark 4's Python Data Source API as
``kafka-log`` (``streaming`` its stream reader), ``fallback`` does the same for Spark 3 with
``mapInArrow``, ``schema`` gives both the Spark types of the Arrow rows, ``jobs`` holds the
``kdump spark`` verify/export jobs, and ``recover`` and ``replicas`` run ``kdump recover``'s and
``kdump replicas``' work in Spark tasks. ``driver_jvm`` chooses a local driver's JVM options and
``hints`` explains Spark failures with a known cause. Nothing here is imported by the rest of kdump
but ``kdump.cli.spark``, and pyspark is imported only by the modules that need it.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from kdump import accelerators

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def warn_once_per_executor() -> bool:
    """On an executor running kdump without its C accelerators, say so once in its stderr log.

    A ``--py-files`` zip cannot load extensions, so its tasks silently run the pure-Python code.
    Executors unpickle the data source (and ``mapInArrow`` functions) from this package, so this
    runs on import; a marker file in the executor's SparkFiles directory keeps its Python workers
    from repeating the warning.
    """
    if "pyspark" not in sys.modules or accelerators.fallback_warning() is None:
        return False
    from pyspark import SparkFiles, TaskContext

    if TaskContext.get() is None:  # the driver, or Spark's planning processes: not an executor
        return False
    marker = os.path.join(SparkFiles.getRootDirectory(), ".kdump-accelerators-warned")
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except OSError:
        return False  # another Python worker of this executor has warned (or the directory is gone)
    return accelerators.warn_once(hint="docs/spark.md: Shipping kdump to a cluster")


warn_once_per_executor()


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
