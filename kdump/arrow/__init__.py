"""Kafka log segments as Arrow tables and Parquet files: the core ``kdump export`` and Spark share.

``discovery`` finds segments under log.dirs, partition dirs, files or globs, local or s3://, gs://,
hdfs:// (``tiers`` puts a tiered partition's remote segments before its local ones); ``planning`` cuts
them into byte-range ``Split``s at index positions the log confirms, prunes and packs them, and hands
each the partition's aborted transactions; ``reading`` turns one split into Arrow batches of the
``schema`` (damaged entries as rows with ``isvalid = false``), ``columns`` filling the record columns
from the C decoder's flat buffers; ``parquet`` writes a task's splits straight to Parquet and
``publish`` makes the dataset appear all at once.

Everything here is plain Python over ``kdump.format``, ``kdump.log`` and ``kdump.broker.isolation``,
with pyarrow (the optional ``kdump[spark]`` extra) and no pyspark: ``kdump export`` runs it in worker
processes, and ``kdump.spark``'s data source and jobs run it in Spark tasks. Nothing below the CLI and
``kdump.spark`` imports it.
"""
