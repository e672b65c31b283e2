"""``kdump spark recover``: the load plans of many log dirs, one Spark task per partition dir.

The driver reads each log dir's own files (the clean-shutdown marker and the offset checkpoints,
``recover_targets``), each task runs ``plan_partition`` on one partition dir with that state, and the
driver puts the plans back in ``kdump recover``'s order. The dirs are read with ordinary file I/O, so
every executor must see them at the same path (one machine, or a shared mount).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from kdump.log.loader import LogDirState, PartitionPlan, plan_partition, recover_targets

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

WORK_SCHEMA = pa.schema([pa.field("work", pa.binary(), nullable=False)])


def run_partition_work(blob: bytes) -> bytes:
    """One task: the plan of one partition dir."""
    key, path, state = pickle.loads(blob)
    return pickle.dumps((key, plan_partition(path, state)))


def plan_log_dirs(spark: SparkSession, paths: list[str]) -> list[tuple[LogDirState, list[PartitionPlan]]]:
    """What ``kdump recover PATHS`` plans, each partition dir planned in its own task."""
    from kdump.spark.schema import spark_struct

    targets = [recover_targets(path) for path in paths]
    work = [(bytearray(pickle.dumps(((t, p), path, state))),)
            for t, (state, dirs) in enumerate(targets) for p, path in enumerate(dirs)]
    done: dict[tuple[int, int], PartitionPlan] = {}
    if work:
        frame = spark.createDataFrame(spark.sparkContext.parallelize(work, len(work)), "work binary")

        def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for batch in batches:
                out = [{"work": run_partition_work(blob)} for blob in batch.column(0).to_pylist()]
                yield pa.RecordBatch.from_pylist(out, schema=WORK_SCHEMA)

        for row in frame.mapInArrow(run, spark_struct(WORK_SCHEMA)).collect():
            key, plan = pickle.loads(row.work)
            done[key] = plan
    return [(state, [done[(t, p)] for p in range(len(dirs))]) for t, (state, dirs) in enumerate(targets)]
