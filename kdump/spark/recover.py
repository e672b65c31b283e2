"""``kdump spark recover``: the load plans of many log dirs, one Spark task per partition dir.

The driver reads each log dir's own files (the clean-shutdown marker and the offset checkpoints,
``recover_targets``), each task runs ``plan_partition`` on one partition dir with that state, and the
driver puts the plans back in ``kdump recover``'s order. The dirs are read with ordinary file I/O, so
every executor must see them at the same path (one machine, or a shared mount).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdump.broker.loader import plan_partition
from kdump.broker.log_manager import LogDirState, recover_targets
from kdump.broker.partition_plan import PartitionPlan
from kdump.spark.jobs import run_tasks

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def plan_log_dirs(spark: SparkSession, paths: list[str]) -> list[tuple[LogDirState, list[PartitionPlan]]]:
    """What ``kdump recover PATHS`` plans, each partition dir planned in its own task."""
    targets = [recover_targets(path) for path in paths]
    done = run_tasks(spark, plan_partition, {(t, p): (path, state) for t, (state, dirs) in enumerate(targets)
                                             for p, path in enumerate(dirs)})
    return [(state, [done[(t, p)] for p in range(len(dirs))]) for t, (state, dirs) in enumerate(targets)]
