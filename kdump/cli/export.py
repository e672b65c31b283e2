"""``kdump export``: the records under PATHS as a Parquet dataset (or one file), without Spark.

The same files as ``kdump spark export``: the splits are planned and packed as the ``kafka-log`` data
source plans them, and each pack is written by ``kdump.arrow.parquet.write_task``, the function a
Spark task runs, here in ``--jobs`` worker processes. The output appears all at once
(``kdump.arrow.publish``, ``kdump.log.atomic``): an interrupted or failed run leaves nothing behind.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.parallel import WorkerPool, available_cpus
from kdump.errors import InputError, UsageError
from kdump.log.segment import SPLIT_BYTES

if TYPE_CHECKING:
    from kdump.arrow.parquet import Written

MISSING = "pyarrow is not installed: pip install 'kdump[spark]'"


def _write_one(item: tuple[Any, ...]) -> Written:
    """A worker's task (module level, so it pickles): one pack of splits to its Parquet file(s)."""
    from kdump.arrow.parquet import write_task

    return write_task(*item)


@contextmanager
def _single_file(out: str, force: bool) -> Iterator[str]:
    """A path to write OUT.parquet at; it replaces ``out`` when the block succeeds (``--force``: only a
    file an export wrote, told by its Parquet footer)."""
    from kdump.arrow.parquet import made_by_export
    from kdump.log.atomic import staged_files

    target = os.path.abspath(out)
    if os.path.lexists(target):
        if not force:
            raise UsageError(f"{out} already exists (use --force to replace it)")
        if os.path.islink(target) or not os.path.isfile(target) or not made_by_export(target):
            raise UsageError(f"{out} was not written by kdump export; --force replaces only kdump's own output")
    parent, name = os.path.split(target)
    if not os.path.isdir(parent):
        raise UsageError(f"parent directory {parent} does not exist")
    with staged_files(parent) as stage:
        yield os.path.join(stage, name)
        if os.path.lexists(target):
            os.replace(os.path.join(stage, name), target)   # checked above: an export's file


@click.command("export", cls=KdumpCommand, error_exit=ExitCode.FAILED)
@click.argument("paths", nargs=-1, required=True)
@click.option("--to", "out", required=True, metavar="OUT.parquet|DIR",
              help="A directory to create (a Parquet dataset, a file per task), or a file ending in .parquet.")
@click.option("--partition-by", "partition_by", multiple=True,
              help="Partition the dataset by this column, e.g. topic (repeatable; string, int or boolean columns).")
@click.option("--level", type=click.Choice(["record", "batch"]), default="record", show_default=True,
              help="record: a row per record. batch: a row per batch, from batch headers (no record decoding).")
@click.option("--isolation", type=click.Choice(["read_uncommitted", "read_committed"]), default=None,
              help="read_committed: only what a read_committed consumer returns. [default: read_uncommitted; "
                   "read_committed with --cluster]")
@click.option("--split-bytes", default=f"{SPLIT_BYTES >> 20}m", show_default=True,
              help="Split segments larger than this.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=available_cpus, show_default="CPUs available",
              help="Write this many files at once in worker processes (a directory; one .parquet file is "
                   "written by one process).")
@click.option("--force", is_flag=True, help="Replace OUT if an earlier kdump export wrote it (or it is empty).")
@click.option("--cluster", is_flag=True,
              help="PATHS are every broker's log dirs: write each partition's history once, as consumers read it "
                   "after restart, with columns fate and fateReason and a manifest (_kdump_cluster.json).")
@click.option("--include-lost", is_flag=True,
              help="With --cluster: also the records a truncation or unclean election removes (fate lost-committed "
                   "or lost-uncommitted) and those below the log start offset (deleted).")
@click.option("--if-leader", "if_leader", type=int, default=None, metavar="BROKER",
              help="With --cluster: as if BROKER leads every partition after restart (as kdump replicas).")
def export(paths: tuple[str, ...], out: str, partition_by: tuple[str, ...], level: str, isolation: str | None,
           split_bytes: str, jobs: int, force: bool, cluster: bool, include_lost: bool,
           if_leader: int | None) -> None:
    """Write the records (or batches) under PATHS to OUT as Parquet, with the kafka-log data source's schema.

    \b
    PATHS are log.dirs, partition dirs or segment files, local or s3://, gs://, hdfs://. The output
    is what `kdump spark export` writes (Hive-style directories for --partition-by) and appears all
    at once. Exit status: 0 written; 1 the output could not be written (nothing is left behind);
    2 usage error, pyarrow not installed, no segments under PATHS, OUT exists without --force, or (--cluster)
    a partition's leader after restart has no log dir among PATHS.
    """
    try:
        from kdump.arrow.cluster_plan import MANIFEST_NAME, plan_cluster, write_manifest
        from kdump.arrow.parquet import (
            export_options,
            part_name,
            unsupported_partition,
            write_empty,
            write_task,
        )
        from kdump.arrow.planning import DEFAULT_PACK_BYTES, pack, parse_size, plan
        from kdump.arrow.publish import exists, publication
    except ImportError:
        raise UsageError(MISSING) from None
    try:
        split = parse_size(split_bytes)
    except ValueError as err:
        raise UsageError(str(err)) from None
    bad = unsupported_partition(level, partition_by)
    if bad is not None:
        raise UsageError(f"--partition-by {bad}: not a string, int or boolean column at level={level}")
    if (include_lost or if_leader is not None) and not cluster:
        raise UsageError("--include-lost and --if-leader go with --cluster")
    if cluster and level != "record":
        raise UsageError("--cluster exports records: --level record")
    isolation = isolation or ("read_committed" if cluster else "read_uncommitted")
    single = out.endswith(".parquet") and not partition_by and not os.path.isdir(out)
    plans = None
    try:
        if cluster:
            plans = plan_cluster(list(paths), isolation=isolation, include_lost=include_lost, if_leader=if_leader,
                                 split_bytes=split)
            splits = [s for p in plans for s in p.splits]
        else:
            splits = plan(list(paths), split_bytes=split, with_aborts=True)
        tasks = pack(splits, min(split, DEFAULT_PACK_BYTES))
    except InputError as err:
        raise UsageError(str(err)) from None
    options = export_options(level, isolation, cluster)
    job = uuid.uuid4().hex
    if single:
        with _single_file(out, force) as path:
            written = write_task([s for task in tasks for s in task], os.path.dirname(path),
                                 os.path.basename(path), options)
            if not written.files:
                write_empty(os.path.dirname(path), os.path.basename(path), level, cluster=cluster)
            if plans is not None:
                write_manifest(path, plans, isolation, include_lost, os.path.dirname(path),
                               os.path.basename(path) + ".manifest.json")
        click.echo(f"Wrote {written.rows} {level} rows to {out}")
        return
    if not force and exists(out):
        raise UsageError(f"{out} already exists (use --force to replace it)")
    with publication(out, "overwrite" if force else "errorifexists", job) as stage:
        assert stage is not None
        items = [(task, stage, part_name(i, job), options, partition_by) for i, task in enumerate(tasks)]
        with WorkerPool(min(jobs, max(1, len(items)))) as pool:
            done = [w for _, w in pool.ordered_map(_write_one, items) if w is not None]
        if not any(w.files for w in done):
            write_empty(stage, part_name(0, job), level, partition_by, cluster)
        if plans is not None:
            write_manifest(stage, plans, isolation, include_lost, stage, MANIFEST_NAME)
    files = sum(len(w.files) for w in done) or 1
    click.echo(f"Wrote {sum(w.rows for w in done)} {level} rows to {out} ({files} files)")
