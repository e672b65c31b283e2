"""The ``kafka-log`` Spark 4 Python Data Source.

    spark.read.format("kafka-log").load("/var/lib/kafka/data")
    spark.read.format("kafka-log").option("level", "batch").load(["/a/orders-0", "s3://bkp/logs/*"])

Options (Spark lower-cases option names and passes values as strings):
    level       record (default) | batch
    splitBytes  cut segments larger than this into byte ranges at .index positions (default 128m)
    chunkBytes  bytes a task reads at a time (default 8m): bounds worker memory
    maxRowsPerBatch  rows per Arrow batch handed to Spark (default 8192)
    isolation   read_uncommitted (default: every record, control records too) | read_committed (what a
                read_committed consumer returns: no aborted transactions, no control records)
    packBytes   consecutive splits smaller than this (and than splitBytes) share a task (default 16m)
    cluster     true: PATHS are every broker's log dirs; each partition's history once, as consumers read it
                after restart (kdump.arrow.cluster_plan), with columns fate and fateReason; isolation then
                defaults to read_committed. includeLost: true adds the records a truncation destroys;
                ifLeader: a broker id, as if it led every partition after restart.
    pushdown    true to use pushed filters on topic/partition/offset/timestamp to skip work. Needs
                ``spark.sql.python.filterPushdown.enabled=true``: Spark refuses every read of a
                reader that defines ``pushFilters`` while that setting is off, so the plain reader
                class does not define it (``kdump.spark.load`` sets this option from the session).

One InputPartition per task of packed splits; ``read`` yields Arrow batches built by ``kdump.arrow.reading``.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    LessThan,
    LessThanOrEqual,
)
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from kdump.arrow.cluster_plan import ClusterOptions, cluster_splits
from kdump.arrow.parquet import task_batches
from kdump.arrow.planning import DEFAULT_PACK_BYTES, DEFAULT_SPLIT_BYTES, Pruning, Split, pack, parse_size, plan
from kdump.arrow.reading import DEFAULT_CHUNK_BYTES, DEFAULT_MAX_ROWS, ReadOptions, read_split
from kdump.arrow.schema import LEVELS, arrow_schema, narrow
from kdump.broker.isolation import ISOLATION_LEVELS, READ_COMMITTED, READ_UNCOMMITTED
from kdump.spark.schema import spark_struct

NAME = "kafka-log"


class SplitPartition(InputPartition):
    """A picklable wrapper around the planned ``Split``s of one task (Spark wants InputPartition instances)."""

    def __init__(self, splits: tuple[Split, ...]) -> None:
        super().__init__(splits)
        self.splits = splits


def paths_from_options(options: Mapping[str, str]) -> list[str]:
    """``load(path)`` arrives as options["path"], ``load([a, b])`` as a JSON list in options["paths"]."""
    found: list[str] = []
    if options.get("path"):
        found.append(options["path"])
    if options.get("paths"):
        found.extend(json.loads(options["paths"]))
    if not found:
        raise ValueError("kafka-log needs a path: spark.read.format('kafka-log').load('/path/to/log.dirs')")
    return found


class KafkaLogDataSource(DataSource):
    """Kafka log directories (log.dirs, partition dirs, segments, globs, lists) as a DataFrame."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def _choice(self, name: str, default: str, allowed: tuple[str, ...]) -> str:
        value = str(self.options.get(name, default)).lower()
        if value not in allowed:
            raise ValueError(f"option {name} must be one of {', '.join(allowed)}, not {value!r}")
        return value

    def schema(self) -> StructType:
        check_option_names(self.options)
        level = self._choice("level", "record", LEVELS)
        return spark_struct(arrow_schema(level, cluster_options(self.options) is not None))

    def reader(self, schema: StructType) -> DataSourceReader:
        check_option_names(self.options)
        level = self._choice("level", "record", LEVELS)
        cluster = cluster_options(self.options)
        arrow = narrow(level, to_arrow_schema(schema, timezone="UTC"), cluster is not None)
        default_isolation = READ_COMMITTED if cluster is not None else READ_UNCOMMITTED
        options = ReadOptions(level=level,
                              chunk_bytes=parse_size(self.options.get("chunkbytes", DEFAULT_CHUNK_BYTES)),
                              max_rows=int(self.options.get("maxrowsperbatch", DEFAULT_MAX_ROWS)),
                              isolation=self._choice("isolation", default_isolation, ISOLATION_LEVELS),
                              cluster=cluster is not None)
        split_bytes = parse_size(self.options.get("splitbytes", DEFAULT_SPLIT_BYTES))
        pack_bytes = min(split_bytes, parse_size(self.options.get("packbytes", DEFAULT_PACK_BYTES)))
        pushdown = str(self.options.get("pushdown")).strip().lower() in ("true", "1", "yes")
        cls = KafkaLogPushdownReader if pushdown else KafkaLogReader
        return cls(paths_from_options(self.options), arrow, options, split_bytes, pack_bytes, cluster)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from kdump.spark.streaming import KafkaLogStreamReader

        batch_reader = self.reader(schema)
        assert isinstance(batch_reader, KafkaLogReader)
        return KafkaLogStreamReader(batch_reader)


# Spark lower-cases option names; "path"/"paths" are how load() passes its argument.
OPTION_NAMES = ("level", "splitBytes", "chunkBytes", "maxRowsPerBatch", "packBytes", "pushdown", "isolation",
                "cluster", "includeLost", "ifLeader")


def _true(value: object) -> bool:
    return str(value).strip().lower() in ("true", "1", "yes")


def cluster_options(options: Mapping[str, str]) -> ClusterOptions | None:
    """The ``cluster``, ``includeLost`` and ``ifLeader`` options (None: not a cluster read)."""
    given = {k.lower(): v for k, v in options.items()}
    if not _true(given.get("cluster", "false")):
        if "includelost" in given or "ifleader" in given:
            raise ValueError("options includeLost and ifLeader go with cluster=true")
        return None
    leader = given.get("ifleader")
    return ClusterOptions(_true(given.get("includelost", "false")), None if leader in (None, "") else int(leader))


def check_option_names(options: Mapping[str, str]) -> None:
    """A misspelt option is an error, not a silent default."""
    known = {name.lower() for name in OPTION_NAMES} | {"path", "paths"}
    unknown = sorted(name for name in options if name.lower() not in known)
    if unknown:
        raise ValueError(f"kafka-log has no option {unknown[0]!r}; options: {', '.join(OPTION_NAMES)}")


class KafkaLogReader(DataSourceReader):
    def __init__(self, paths: list[str], schema: pa.Schema, options: ReadOptions, split_bytes: int,
                 pack_bytes: int = DEFAULT_PACK_BYTES, cluster: ClusterOptions | None = None) -> None:
        self.paths = paths
        self.arrow_schema = schema
        self.options = options
        self.split_bytes = split_bytes
        self.pack_bytes = pack_bytes
        self.cluster = cluster

    @property
    def needs_aborts(self) -> bool:
        return self.options.isolation == READ_COMMITTED or "aborted" in self.arrow_schema.names

    def partitions(self) -> Sequence[InputPartition]:
        if self.cluster is not None:
            splits = cluster_splits(self.paths, self.cluster, self.options.isolation, self.split_bytes)
        else:
            splits = plan(self.paths, split_bytes=self.split_bytes, pruning=self.options.pruning,
                          with_aborts=self.needs_aborts)
        return [SplitPartition(task) for task in pack(splits, self.pack_bytes)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, SplitPartition):
            return                     # Spark's stand-in InputPartition(None) when everything was pruned
        if self.options.cluster:       # the export's own task path, then the columns asked for
            names = self.arrow_schema.names
            for batch in task_batches(partition.splits, self.options):
                yield pa.RecordBatch.from_arrays([batch.column(n) for n in names], schema=self.arrow_schema)
            return
        for split in partition.splits:
            yield from read_split(split, self.arrow_schema, self.options)


class KafkaLogPushdownReader(KafkaLogReader):
    """Defined separately: Spark fails any read of a reader with ``pushFilters`` when pushdown is off."""

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
        # From the options as built, not as a previous pushFilters left them: Spark may push another
        # query's filters to the same reader, and bounds kept from that query would drop rows.
        base = getattr(self, "_unpushed", self.options)
        self._unpushed = base
        self.options = replace(base, pruning=pruning_from_filters(filters, base.level, base.pruning))
        # Pruning is coarse (whole splits, byte ranges, batches), so Spark must still check every row:
        # each filter is handed back as "not fully handled".
        return filters


# Which columns bound what, per level. Record offsets lie inside [baseOffset, lastOffset].
_OFFSET_LOW = {"record": ("offset",), "batch": ("lastOffset",)}
_OFFSET_HIGH = {"record": ("offset",), "batch": ("baseOffset",)}
_TIMESTAMP_LOW = {"record": ("timestamp", "timestamp_ms"), "batch": ("maxTimestamp",)}
_TIMESTAMP_HIGH = {"record": ("timestamp", "timestamp_ms"), "batch": ()}


def pruning_from_filters(filters: Iterable[Filter], level: str, start: Pruning = Pruning()) -> Pruning:
    """Fold the filters kdump can use into bounds (filters are ANDed, so bounds only tighten).

    Spark 4.3 pushes no disjunction to a Python data source (its filter API has no OR; measured:
    ``offset = 5 OR offset = 230`` reaches the reader as no filter at all), so ``IN`` is the form to use.
    """
    p = start
    for f in filters:
        column = getattr(f, "attribute", ("",))         # Not(...) has .child, no .attribute: ignored
        if len(column) != 1:
            continue
        name = column[0]
        values: tuple = ()
        if isinstance(f, EqualTo):
            values = (f.value,)
        elif isinstance(f, In):
            values = tuple(f.value)
        if name in ("topic", "partition") and values:
            kind = str if name == "topic" else int
            if not all(isinstance(v, kind) and not isinstance(v, bool) for v in values):
                continue
            current = p.topics if name == "topic" else p.partitions
            chosen: frozenset[Any] = frozenset(values) if current is None else current & frozenset(values)
            p = replace(p, topics=chosen) if name == "topic" else replace(p, partitions=chosen)
            continue
        low, high = _bounds(f, values)
        if name in _OFFSET_LOW[level] and low is not None:
            p = replace(p, offset_min=_tighter(p.offset_min, low, max))
        if name in _OFFSET_HIGH[level] and high is not None:
            p = replace(p, offset_max=_tighter(p.offset_max, high, min))
        if level == "record" and name == "offset" and values and low is not None:
            listed = frozenset(values)
            p = replace(p, offsets=listed if p.offsets is None else p.offsets & listed)
        if name == "timestamp":
            low, high = _millis(f, values)
        if name in _TIMESTAMP_LOW[level] and low is not None:
            p = replace(p, timestamp_min=_tighter(p.timestamp_min, low, max))
        if name in _TIMESTAMP_HIGH[level] and high is not None:
            p = replace(p, timestamp_max=_tighter(p.timestamp_max, high, min))
    return p


def _bounds(f: Filter, values: tuple) -> tuple[int | None, int | None]:
    """Inclusive integer (low, high) implied by a comparison, equality or IN filter."""
    if values:
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return min(values), max(values)
        return None, None
    value = getattr(f, "value", None)
    if not isinstance(value, int) or isinstance(value, bool):
        return None, None
    if isinstance(f, GreaterThan):
        return value + 1, None
    if isinstance(f, GreaterThanOrEqual):
        return value, None
    if isinstance(f, LessThan):
        return None, value - 1
    if isinstance(f, LessThanOrEqual):
        return None, value
    return None, None


def _millis(f: Filter, values: tuple) -> tuple[int | None, int | None]:
    """Millisecond (low, high) bounds, loosened to whole milliseconds, of a filter on the TIMESTAMP column."""
    given = values or (getattr(f, "value", None),)
    if not all(isinstance(v, datetime.datetime) for v in given):
        return None, None
    # A naive value is local time, as pyspark's TimestampType.fromInternal makes it.
    micros = [v.astimezone(datetime.UTC) - _EPOCH for v in given]
    low = min(m // datetime.timedelta(milliseconds=1) for m in micros)
    high = -(-max(micros) // datetime.timedelta(milliseconds=1))
    if values or isinstance(f, EqualTo):
        return low, high
    if isinstance(f, GreaterThan | GreaterThanOrEqual):
        return low, None
    if isinstance(f, LessThan | LessThanOrEqual):
        return None, high
    return None, None


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _tighter(old: int | None, new: int, pick: Callable[[int, int], int]) -> int:
    return new if old is None else pick(old, new)
