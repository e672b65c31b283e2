"""Parquet written where the records are decoded: the one function that writes a task's splits.

``kdump export`` runs ``write_task`` in its worker processes and ``kdump spark export`` in its Spark
tasks, so both give the same files: the Arrow batches ``reading.read_split`` builds from the C
decoder's columns go straight to ``pyarrow.parquet``, and no row crosses into a JVM. The schema is
the data source's (``schema.arrow_schema``); ``partition_by`` columns become Hive-style directories
(``topic=orders/partition=0/``) and leave the files, as Spark's ``partitionBy`` writes them
(``org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils.escapePathName``, Spark 4.0, for the
escaping of a value in a directory name).

Nothing here publishes anything: files go into a staging directory that ``publish`` renames into
place when every task is done.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kdump.arrow.planning import Split
from kdump.arrow.reading import ReadOptions, read_split
from kdump.arrow.schema import arrow_schema
from kdump.log.arrow_files import filesystem

EXPORT_MAX_ROWS = 65536          # rows per Arrow batch, so per row group: Parquet favours large groups
COMPRESSION = "snappy"           # Spark's default for Parquet (spark.sql.parquet.compression.codec)
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
# Columns that can partition the output written in tasks: their directory names read back as the
# same values (Spark infers int and string; a boolean partition reads back as a string, as Spark's own).
PARTITION_TYPES = (pa.string(), pa.int32(), pa.int64(), pa.bool_())
FOOTER_KEY = b"kdump"             # in each file's key-value metadata: what ``--force`` may replace
FOOTER_VALUE = b"export"
_ESCAPED = set('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(1, 32)}


@dataclass(frozen=True, slots=True)
class Written:
    rows: int
    files: tuple[str, ...]          # paths relative to the directory written into


def export_options(level: str = "record", isolation: str = "read_uncommitted", cluster: bool = False) -> ReadOptions:
    return ReadOptions(level=level, isolation=isolation, max_rows=EXPORT_MAX_ROWS, cluster=cluster)


def data_schema(level: str, partition_by: Sequence[str] = (), cluster: bool = False) -> pa.Schema:
    """The columns inside the files: the level's schema without the partition columns."""
    schema = arrow_schema(level, cluster)
    for name in partition_by:
        schema = schema.remove(schema.get_field_index(name))
    return schema.with_metadata({FOOTER_KEY: FOOTER_VALUE})


def made_by_export(path: str) -> bool:
    """Whether the Parquet file at ``path`` says an export wrote it."""
    try:
        metadata = pq.read_metadata(path).metadata or {}
    except (OSError, pa.ArrowInvalid):
        return False
    return metadata.get(FOOTER_KEY) == FOOTER_VALUE


def unsupported_partition(level: str, partition_by: Sequence[str]) -> str | None:
    """The first ``partition_by`` column tasks cannot write a directory for (None: all can)."""
    schema = arrow_schema(level)
    for name in partition_by:
        if schema.get_field_index(name) < 0 or schema.field(name).type not in PARTITION_TYPES:
            return name
    return None


def escape_value(value: object) -> str:
    """A partition value as Spark writes it into a directory name."""
    if value is None:
        return NULL_PARTITION
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text) or NULL_PARTITION


def _split_by(batch: pa.RecordBatch, columns: Sequence[str]) -> Iterator[tuple[str, pa.RecordBatch]]:
    """(relative directory, rows) for each distinct value of ``columns`` in ``batch``, partition columns dropped."""
    if not columns:
        yield "", batch
        return
    table = pa.Table.from_batches([batch])
    keys = table.select(list(columns)).group_by(list(columns), use_threads=False).aggregate([]).to_pylist()
    rest = [n for n in batch.schema.names if n not in columns]
    for key in keys:
        mask = None
        for name in columns:
            value = key[name]
            test = pc.is_null(table[name]) if value is None else pc.equal(table[name], value)
            mask = test if mask is None else pc.and_(mask, test)
        rows = table.filter(mask).select(rest) if len(keys) > 1 else table.select(rest)
        directory = "/".join(f"{name}={escape_value(key[name])}" for name in columns)
        for part in rows.combine_chunks().to_batches():
            yield directory, part


def write_batches(batches: Iterable[pa.RecordBatch], directory: str, name: str, schema: pa.Schema,
                  partition_by: Sequence[str] = ()) -> Written:
    """Write ``batches`` under ``directory`` (a local path or URI) as ``name`` in each partition directory."""
    fs, root = filesystem(directory)
    writers: dict[str, pq.ParquetWriter] = {}
    rows = 0
    try:
        for batch in batches:
            rows += batch.num_rows
            for sub, part in _split_by(batch, partition_by):
                writer = writers.get(sub)
                if writer is None:
                    folder = posixpath.join(root, sub) if sub else root
                    fs.create_dir(folder, recursive=True)
                    writer = pq.ParquetWriter(posixpath.join(folder, name), schema, filesystem=fs,
                                              compression=COMPRESSION)
                    writers[sub] = writer
                writer.write_batch(part)
    finally:
        for writer in writers.values():
            writer.close()
    return Written(rows, tuple(posixpath.join(sub, name) if sub else name for sub in writers))


def task_batches(splits: Iterable[Split], options: ReadOptions) -> Iterator[pa.RecordBatch]:
    schema = arrow_schema(options.level)
    for split in splits:
        if options.cluster:             # a cluster's history: the split's fated offsets only (arrow.cluster_plan)
            from kdump.arrow.cluster_plan import fated_rows

            yield from fated_rows(read_split(split, schema, options), split.fates, arrow_schema(options.level, True))
        else:
            yield from read_split(split, schema, options)


def write_task(splits: Sequence[Split], directory: str, name: str, options: ReadOptions,
               partition_by: Sequence[str] = ()) -> Written:
    """The one function both exports run per task: decode ``splits`` and write their Parquet file(s)."""
    return write_batches(task_batches(splits, options), directory, name,
                         data_schema(options.level, partition_by, options.cluster), partition_by)


def write_empty(directory: str, name: str, level: str, partition_by: Sequence[str] = (), cluster: bool = False) -> None:
    """A file with the schema and no rows: what Spark writes for an empty result, so it reads back."""
    fs, root = filesystem(directory)
    with pq.ParquetWriter(posixpath.join(root, name), data_schema(level, partition_by, cluster), filesystem=fs,
                          compression=COMPRESSION):
        pass


def part_name(task: int, job: str) -> str:
    """Spark's file naming (``part-<task>-<job uuid>``), so appends from several runs never collide."""
    return f"part-{task:05d}-{job}.{COMPRESSION}.parquet"


__all__ = ["Written", "data_schema", "export_options", "made_by_export", "part_name", "write_empty", "write_task"]
