"""The ``kdump spark`` jobs: verify every segment in parallel, export records to Parquet.

``export`` writes Parquet inside the tasks that decode the records (``kdump.arrow.parquet``, the
function ``kdump export`` runs in its worker processes), published all at once by
``kdump.arrow.publish``; other formats go through a DataFrame and Spark's own writer.

``verify`` runs kdump's one verify driver (``kdump.verify.driver.verify_paths``) with Spark as its
worker pool: the driver reads each partition's own files, one task per segment runs ``check_run``
(``mapInArrow`` over pickled work, so it runs on Spark 3.3+ too), and the driver applies the partition
rules to the facts the tasks return. The findings are those of ``kdump verify`` on the same paths, in
the same order.

Local paths are read with ``ReadOnlyFile`` as ``kdump verify`` reads them; s3://, gs:// and hdfs://
locations through ``ArrowFile``, the same bounded reads over ``pyarrow.fs``.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from kdump.arrow.discovery import find_segments
from kdump.findings import Finding
from kdump.log.locations import open_any
from kdump.log.logdir import PartitionDir, SegmentFiles
from kdump.log.state_files import read_if_exists
from kdump.verify.driver import OrderedMap, Report, SegmentChecked, Target, verify_paths
from kdump.verify.engine import ALL, Options, Tally, nothing_checked, plan

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

WORK_SCHEMA = pa.schema([pa.field("work", pa.binary(), nullable=False)])


def plan_any(path: str) -> Iterator[Target]:
    """What ``kdump verify`` would check for ``path``: partitions (local: ``engine.plan``) or single segments.
    Remote locations are grouped into partitions by their parent directory."""
    return plan(path) if "://" not in path else _remote_partitions(path)


def plan_targets(paths: list[str]) -> dict[str, list[Target]]:
    """``plan_any`` of every path, listed once (before Spark starts, so a wrong path fails at once)."""
    return {path: list(plan_any(path)) for path in paths}


def _remote_partitions(location: str) -> Iterator[PartitionDir]:
    for (topic, partition), group in groupby(find_segments([location]), key=lambda s: (s.topic, s.partition)):
        items = list(group)
        files = tuple(SegmentFiles(s.base_offset, s.log, s.index, s.time_index) for s in items)
        yield PartitionDir(items[0].log.rsplit("/", 1)[0], topic, partition, None, files)


def work_frame(spark: SparkSession, items: Sequence[object]) -> DataFrame:
    """One row (``work``: the item pickled) per item, one item per Spark partition."""
    rows = [(bytearray(pickle.dumps(item)),) for item in items]
    # parallelize with one slice per row keeps items apart (hash repartitioning could pair them up).
    return spark.createDataFrame(spark.sparkContext.parallelize(rows, max(1, len(rows))), "work binary")


def work_items(batches: Iterator[pa.RecordBatch]) -> Iterator[Any]:
    """In a task: the items of the ``work_frame`` rows it was given."""
    for batch in batches:
        for blob in batch.column(0).to_pylist():
            yield pickle.loads(blob)


Key = TypeVar("Key", bound=Hashable)
Result = TypeVar("Result")


def run_tasks(spark: SparkSession, func: Callable[..., Result], work: dict[Key, tuple]) -> dict[Key, Result]:
    """``func(*args)`` for every ``key: args`` of ``work``, each in its own Spark task, in ``work``'s order.

    ``mapInArrow`` over pickled work, so it runs on Spark 3.3+ too (no Python Data Source needed).
    """
    from kdump.spark.schema import spark_struct

    if not work:
        return {}
    frame = work_frame(spark, list(work.items()))

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for key, args in work_items(batches):
            yield pa.RecordBatch.from_pylist([{"work": pickle.dumps((key, func(*args)))}], schema=WORK_SCHEMA)

    return dict(pickle.loads(row.work) for row in frame.mapInArrow(run, spark_struct(WORK_SCHEMA)).collect())


def spark_map(spark: SparkSession) -> OrderedMap:
    """An ``ordered_map`` for ``verify_paths`` whose work runs in Spark tasks (all of it in one job)."""

    def ordered_map(func: Callable[[Any], Any], items: Iterable[Any], *, is_work: Callable[[Any], bool] | None = None,
                    weight: Callable[[Any], int] | None = None) -> Iterator[tuple[Any, Any]]:
        listed = list(items)
        done = run_tasks(spark, func, {i: (item,) for i, item in enumerate(listed) if is_work is None or is_work(item)})
        for i, item in enumerate(listed):
            yield item, done.get(i)

    return ordered_map


@dataclass
class SegmentRow:
    topic: str
    partition: int
    segment: int
    bytes: int
    batches: int
    records: int
    problems: int


@dataclass
class VerifyResult:
    groups: list[list[Finding]] = field(default_factory=list)   # per partition (or single segment)
    rows: list[SegmentRow] = field(default_factory=list)
    tally: Tally = field(default_factory=Tally)
    failures: list[tuple[str, str]] = field(default_factory=list)   # (path, why) of paths not checked

    @property
    def findings(self) -> list[Finding]:
        return [f for group in self.groups for f in group]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.is_error and f.check != "unreadable"]

    def exit_code(self) -> int:
        """That of ``kdump verify``: 2 unreadable or nothing checked, 1 problems, 0 clean."""
        if self.tally.unreadable or nothing_checked(self.tally):
            return 2
        return 1 if self.errors else 0

    def to_json(self) -> dict[str, Any]:
        t = self.tally
        return {"segments": t.segments, "batches": t.batches, "records": t.records, "bytes": t.bytes,
                "errors": len(self.errors), "notes": sum(1 for f in self.findings if not f.is_error),
                "unreadable": t.unreadable, "findings": [f.as_dict() for f in self.findings]}


def verify(spark: SparkSession, paths: list[str], options: Options = Options(scope=ALL), *,
           targets: dict[str, list[Target]] | None = None) -> VerifyResult:
    """``kdump verify`` of ``paths`` (``targets``: their ``plan_targets``), one Spark task per segment."""
    result = VerifyResult()
    planned = plan_targets(paths) if targets is None else targets
    for event in verify_paths(paths, options, result.tally, ordered_map=spark_map(spark), planner=planned.__getitem__,
                              read=read_if_exists, open_file=open_any, task_bytes=0):
        if isinstance(event, SegmentChecked):
            part, facts = event.partition, event.facts
            result.rows.append(SegmentRow(part.topic if part else "", part.partition if part else -1,
                                          event.segment.base_offset, facts.size, facts.batches, facts.records,
                                          sum(1 for f in event.findings if f.is_error)))
        elif isinstance(event, Report):
            result.groups.append(event.findings)
        else:
            result.failures.append((event.path, str(event.error)))
    return result


def writes_in_tasks(fmt: str, level: str, partition_by: tuple[str, ...]) -> bool:
    """Whether ``export`` writes in the tasks (no row crosses into the JVM) or hands a DataFrame to Spark."""
    from kdump.arrow.parquet import unsupported_partition

    return fmt.lower() == "parquet" and unsupported_partition(level, partition_by) is None


def export(spark: SparkSession, paths: list[str], out: str, *, fmt: str = "parquet",
           partition_by: tuple[str, ...] = (), level: str = "record", mode: str = "errorifexists",
           options: dict[str, str] | None = None) -> int:
    """Write the ``kafka-log`` rows of ``paths`` to ``out``; returns the number of rows this run wrote.

    Parquet is written inside the tasks (``export_in_tasks``) unless a partition column has no
    directory form there; other formats go through a DataFrame and Spark's writer.
    """
    if writes_in_tasks(fmt, level, partition_by):
        return export_in_tasks(spark, paths, out, partition_by=partition_by, level=level, mode=mode,
                               options=options)
    return export_frame(spark, paths, out, fmt=fmt, partition_by=partition_by, level=level, mode=mode,
                        options=options)


def export_in_tasks(spark: SparkSession, paths: list[str], out: str, *, partition_by: tuple[str, ...] = (),
                    level: str = "record", mode: str = "errorifexists", options: dict[str, str] | None = None) -> int:
    """Parquet written by the tasks that decode the records (``kdump.arrow.parquet.write_task``, as
    ``kdump export``): no row crosses into the JVM. The driver plans and packs the splits as the data
    source does, one Spark task per pack writes its file(s) into a staging directory, and the dataset is
    published when all are done (``kdump.arrow.publish``); the rows are those the tasks wrote."""
    import uuid

    from kdump.arrow.cluster_plan import MANIFEST_NAME, plan_cluster, write_manifest
    from kdump.arrow.parquet import export_options, part_name, write_empty, write_task
    from kdump.arrow.planning import DEFAULT_PACK_BYTES, DEFAULT_SPLIT_BYTES, pack, parse_size, plan
    from kdump.arrow.publish import publication
    from kdump.spark.datasource import check_option_names, cluster_options

    given = {k.lower(): str(v) for k, v in (options or {}).items()}
    check_option_names(given)
    cluster = cluster_options(given)
    isolation = given.get("isolation", "read_uncommitted" if cluster is None else "read_committed")
    read = export_options(level, isolation, cluster is not None)
    split_bytes = parse_size(given.get("splitbytes", DEFAULT_SPLIT_BYTES))
    pack_bytes = min(split_bytes, parse_size(given.get("packbytes", DEFAULT_PACK_BYTES)))
    plans = None if cluster is None else plan_cluster(paths, isolation=isolation, include_lost=cluster.include_lost,
                                                      if_leader=cluster.if_leader, split_bytes=split_bytes)
    splits = plan(paths, split_bytes=split_bytes, with_aborts=True) if plans is None else \
        [s for p in plans for s in p.splits]
    tasks = pack(splits, pack_bytes)
    job = uuid.uuid4().hex
    with publication(out, mode, job) as stage:
        if stage is None:
            return 0
        done = run_tasks(spark, write_task, {i: (task, stage, part_name(i, job), read, partition_by)
                                             for i, task in enumerate(tasks)})
        if not any(w.files for w in done.values()):
            write_empty(stage, part_name(0, job), level, partition_by, cluster is not None)
        if plans is not None and cluster is not None:      # the manifest, as kdump export --cluster writes it
            write_manifest(stage, plans, isolation, cluster.include_lost, stage, MANIFEST_NAME)
        return sum(w.rows for w in done.values())


def export_frame(spark: SparkSession, paths: list[str], out: str, *, fmt: str = "parquet",
                 partition_by: tuple[str, ...] = (), level: str = "record", mode: str = "errorifexists",
                 options: dict[str, str] | None = None) -> int:
    """The DataFrame path: the data source's rows handed to Spark's writer for ``fmt``.

    The rows are counted as they are written (an ``Observation``), not by reading ``out`` back: with
    ``mode="append"`` the output also holds earlier runs' rows, and a second pass would decode twice.
    """
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    from kdump.spark import load

    if mode == "ignore" and _output_exists(spark, out):
        return 0                        # what Spark's "ignore" does; an Observation of no job never completes
    frame = load(spark, paths, level=level, **(options or {}))
    written = Observation("kdump export")
    writer = frame.observe(written, F.count(F.lit(1)).alias("rows")).write.format(fmt).mode(mode)
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.save(out)
    return int(written.get["rows"])


def _output_exists(spark: SparkSession, out: str) -> bool:
    """Whether ``out`` exists, asked of Hadoop's filesystem as Spark's writers ask it."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    path = jvm.org.apache.hadoop.fs.Path(out)
    return bool(path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).exists(path))
