"""Spark 3.x (no Python Data Source API): a DataFrame of splits, then ``mapInArrow`` over the reader.

Planning runs on the driver exactly as for the data source; each split is pickled into one row of
a one-column DataFrame, spread one split per partition, and every task runs ``read_split`` on the
rows it gets. Same rows, same schema, same bounded memory; no filter pushdown (pass ``pruning``
to plan less when you know the bounds). ``mapInArrow`` needs Spark >= 3.3 and pandas on workers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from kdump.arrow.planning import DEFAULT_SPLIT_BYTES, Pruning, parse_size, plan
from kdump.arrow.reading import DEFAULT_CHUNK_BYTES, DEFAULT_MAX_ROWS, ReadOptions, read_split
from kdump.arrow.schema import arrow_schema, narrow
from kdump.spark.jobs import work_frame, work_items
from kdump.spark.schema import spark_schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType


def load_fallback(spark: SparkSession, paths: str | list[str], *, level: str = "record",
                  schema: StructType | None = None, pruning: Pruning = Pruning(), **options: Any) -> DataFrame:
    """The rows ``spark.read.format("kafka-log")`` gives, built with ``mapInArrow``.

    Options as for the data source (``splitBytes``, ``chunkBytes``, ``maxRowsPerBatch``; any case).
    """
    opts = {k.lower(): v for k, v in options.items()}
    opts.pop("pushdown", None)
    read_options = ReadOptions(level=level, chunk_bytes=parse_size(opts.pop("chunkbytes", DEFAULT_CHUNK_BYTES)),
                               max_rows=int(opts.pop("maxrowsperbatch", DEFAULT_MAX_ROWS)), pruning=pruning)
    split_bytes = parse_size(opts.pop("splitbytes", DEFAULT_SPLIT_BYTES))
    if opts:
        raise ValueError(f"unknown option(s): {', '.join(sorted(opts))}")
    if schema is None:
        target, wanted = spark_schema(level), arrow_schema(level)
    else:
        from pyspark.sql.pandas.types import to_arrow_schema

        target, wanted = schema, narrow(level, to_arrow_schema(schema, timezone="UTC"))
    frame = work_frame(spark, plan([paths] if isinstance(paths, str) else list(paths), split_bytes=split_bytes,
                                   pruning=pruning))

    def read_splits(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for split in work_items(batches):
            yield from read_split(split, wanted, read_options)

    return frame.mapInArrow(read_splits, target)
