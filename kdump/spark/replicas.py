"""``kdump spark replicas``: ``kdump replicas`` with each partition's replicas analysed in a Spark task.

The driver discovers the replicas and replays the cluster metadata (``plan_partitions``), each task
runs ``analyze_partition`` on one partition's replicas, and the reports come back in the CLI's order
to be printed by the CLI's own function, so the JSON is the same. The dirs are read through
``kdump.log.locations`` as the CLI reads them: every executor must see them at the same path (one machine,
a shared mount) or URI (s3://, gs://, hdfs://).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdump.broker.replica_report import PartitionReport, ReplicasOptions, analyze_partition, plan_partitions
from kdump.spark.jobs import run_tasks

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def analyze_on_spark(spark: SparkSession, paths: list[str], options: ReplicasOptions) -> list[PartitionReport]:
    """What ``kdump replicas PATHS`` reports, one Spark task per partition."""
    work = plan_partitions(paths, options)
    done = run_tasks(spark, analyze_partition, dict(enumerate(work)))
    return [done[index] for index in range(len(work))]
