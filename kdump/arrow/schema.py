"""Row layouts of the ``kafka-log`` data source, written once in Arrow and converted to Spark.

Spark checks every Arrow batch a Python data source yields against ``to_arrow_schema`` of the
requested Spark schema: names, types *and* nullability must match (pyspark's
DataSourceReader.read contract). So the Arrow
schema here is the source of truth and ``kdump.spark.schema.spark_schema`` is derived from it
mechanically; a test asserts that Spark's own conversion gives back exactly the Arrow schema.

A record's ``timestamp`` is a Spark TIMESTAMP, as in Spark's own Kafka source, null where Kafka
has -1 ("no timestamp", v0 messages) rather than 1969-12-31; ``timestamp_ms`` keeps Kafka's int64
milliseconds. Batch-level timestamps (``baseTimestamp``, ``maxTimestamp``) stay milliseconds.
Only the location columns and ``isvalid`` are NOT NULL: a corrupt entry may have no readable header.
"""

from __future__ import annotations

import pyarrow as pa

LEVELS = ("record", "batch")
TIMESTAMP = pa.timestamp("us", tz="UTC")      # what Spark's TimestampType becomes in Arrow

HEADER_TYPE = pa.list_(pa.field("element", pa.struct([
    pa.field("key", pa.string(), nullable=False),    # Kafka header keys are Java Strings
    pa.field("value", pa.binary()),
]), nullable=False))

# Where a row comes from: present on every row, even for unreadable bytes.
_LOCATION = [
    pa.field("topic", pa.string(), nullable=False),
    pa.field("partition", pa.int32(), nullable=False),
    pa.field("segment", pa.int64(), nullable=False),          # the segment's base offset (file name)
    pa.field("batchPosition", pa.int64(), nullable=False),    # byte position of the entry in the .log
    pa.field("path", pa.string(), nullable=False),            # the .log file
    pa.field("log_dir", pa.string(), nullable=False),         # the directory holding the partition dir
    pa.field("broker", pa.int32()),                           # node.id / broker.id of log_dir/meta.properties
]

# Per-record columns (level=record only).
RECORD_ONLY = [
    pa.field("offset", pa.int64()),
    pa.field("timestamp", TIMESTAMP),                          # as Spark's Kafka source; null for -1
    pa.field("timestamp_ms", pa.int64()),                      # Kafka's epoch milliseconds, -1 kept
    pa.field("timestampType", pa.string()),
    pa.field("key", pa.binary()),
    pa.field("value", pa.binary()),
    pa.field("headers", HEADER_TYPE),
    pa.field("sequence", pa.int32()),
]

# Header fields of the entry; repeated on each of its records at level=record.
_BATCH_HEADER = [
    pa.field("baseOffset", pa.int64()),
    pa.field("lastOffset", pa.int64()),
    pa.field("partitionLeaderEpoch", pa.int32()),
    pa.field("producerId", pa.int64()),
    pa.field("producerEpoch", pa.int32()),
    pa.field("baseSequence", pa.int32()),
    pa.field("isTransactional", pa.bool_()),
    pa.field("isControl", pa.bool_()),
    pa.field("aborted", pa.bool_()),                           # in a transaction its ABORT marker ended
    pa.field("codec", pa.string()),
    pa.field("magic", pa.int32()),
    pa.field("crc", pa.int64()),                               # unsigned 32-bit, as stored
]

# Only at level=batch: what a shallow scan knows without decoding records.
BATCH_ONLY = [
    pa.field("count", pa.int32()),                             # recordsCount (null for v0/v1)
    pa.field("size", pa.int32()),                              # whole entry, framing included
    pa.field("baseTimestamp", pa.int64()),
    pa.field("maxTimestamp", pa.int64()),
    pa.field("timestampType", pa.string()),
]

_VALIDITY = [
    pa.field("isvalid", pa.bool_(), nullable=False),
    pa.field("error", pa.string()),                            # why isvalid is false; null otherwise
]

RECORD_SCHEMA = pa.schema(_LOCATION + RECORD_ONLY + _BATCH_HEADER + _VALIDITY)

# Only under ``kdump export --cluster`` (kdump.arrow.cluster_plan): what the restarted cluster does with the row.
CLUSTER_ONLY = [
    pa.field("fate", pa.string()),            # kept, aborted, lost-committed, lost-uncommitted, deleted
    pa.field("fateReason", pa.string()),                       # why, when the fate is not plain kept
]
CLUSTER_SCHEMA = pa.schema(RECORD_SCHEMA.append(CLUSTER_ONLY[0]).append(CLUSTER_ONLY[1]))
BATCH_SCHEMA = pa.schema(_LOCATION + _BATCH_HEADER[:2] + BATCH_ONLY + _BATCH_HEADER[2:] + _VALIDITY)


def arrow_schema(level: str, cluster: bool = False) -> pa.Schema:
    if cluster:
        if level != "record":
            raise ValueError("a cluster's history is exported at level=record only")
        return CLUSTER_SCHEMA
    if level == "record":
        return RECORD_SCHEMA
    if level == "batch":
        return BATCH_SCHEMA
    raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")


def narrow(level: str, wanted: pa.Schema, cluster: bool = False) -> pa.Schema:
    """Check an explicit (narrower) schema against the level's columns; returns it unchanged.

    Columns are built by name, so any subset in any order works. Types must match the full schema
    (Spark would reject a batch otherwise); nullability is the caller's choice, because a DDL string
    such as "topic string, offset long" declares every column nullable.
    """
    full = arrow_schema(level, cluster)
    for field in wanted:
        index = full.get_field_index(field.name)
        if index < 0:
            raise ValueError(f"column {field.name!r} does not exist at level={level}; "
                             f"columns: {', '.join(full.names)}")
        if not _same_type(full.field(index).type, field.type):
            raise ValueError(f"column {field.name!r} must have type {full.field(index).type}, "
                             f"not {field.type}")
    return wanted


def _same_type(a: pa.DataType, b: pa.DataType) -> bool:
    """Equal ignoring nested nullability (a user's DDL cannot say `containsNull = false`)."""
    if pa.types.is_list(a) and pa.types.is_list(b):
        return _same_type(a.value_type, b.value_type)
    if pa.types.is_struct(a) and pa.types.is_struct(b):
        return a.num_fields == b.num_fields and all(
            a.field(i).name == b.field(i).name and _same_type(a.field(i).type, b.field(i).type)
            for i in range(a.num_fields))
    return a.equals(b)
