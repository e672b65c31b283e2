"""The data source's planning and reading without a JVM: partitions() and read() called directly."""

from __future__ import annotations

import datetime
import json
import shutil
from itertools import pairwise
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow", reason="pyarrow not installed: pip install 'kdump[spark]'")
pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kdump[spark]'")

from logbuild import as_tuples, corrupt_byte, reference_batches, reference_rows, write_partition  # noqa: E402
from pyspark.sql.datasource import (  # noqa: E402
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    LessThan,
    LessThanOrEqual,
    Not,
)
from pyspark.sql.pandas.types import to_arrow_schema  # noqa: E402

from kdump.arrow.discovery import find_segments  # noqa: E402
from kdump.arrow.planning import Pruning, offset_index, plan, split_segment  # noqa: E402
from kdump.arrow.reading import ReadOptions, read_split  # noqa: E402
from kdump.arrow.schema import arrow_schema  # noqa: E402
from kdump.spark.datasource import KafkaLogDataSource, pruning_from_filters  # noqa: E402
from kdump.spark.schema import spark_schema  # noqa: E402


def read_all(splits, schema=None, **options) -> list[dict]:  # type: ignore[no-untyped-def]
    opts = ReadOptions(**options)
    return [row for s in splits for b in read_split(s, schema, opts) for row in b.to_pylist()]


@pytest.mark.parametrize("level", ["record", "batch"])
def test_spark_conversion_gives_back_the_arrow_schema(level: str) -> None:
    # Spark rejects Arrow batches unless this holds exactly (names, types, nullability).
    assert to_arrow_schema(spark_schema(level), timezone="UTC").equals(arrow_schema(level))


def test_discovery_skips_deleted_dirs_and_other_files(log_dirs: Path) -> None:
    segments = find_segments([str(log_dirs)])
    assert [(s.topic, s.partition) for s in segments][::2] == [("orders", 0), ("orders", 1), ("orders", 2),
                                                              ("payments", 0), ("payments", 1)]
    first = segments[0]
    assert first.index and first.time_index and first.next_base_offset == segments[1].base_offset
    assert segments[1].next_base_offset is None


def test_rows_equal_the_single_process_reader(log_dirs: Path) -> None:
    rows = read_all(plan([str(log_dirs)]))
    assert as_tuples(rows) == reference_rows(log_dirs)
    assert all(r["isvalid"] and r["error"] is None for r in rows)


@pytest.mark.parametrize("split_bytes,chunk_bytes", [(1024, 8 << 20), (2048, 64), (1 << 30, 100)])
def test_splits_and_small_chunks_give_identical_rows(log_dirs: Path, split_bytes: int, chunk_bytes: int) -> None:
    splits = plan([str(log_dirs)], split_bytes=split_bytes)
    assert as_tuples(read_all(splits, chunk_bytes=chunk_bytes)) == reference_rows(log_dirs)


def test_splits_are_cut_at_index_positions_and_cover_the_segment(log_dirs: Path) -> None:
    segment = find_segments([str(log_dirs)])[0]
    index = offset_index(segment)
    splits = split_segment(segment, 1024, index)
    assert len(splits) > 2
    assert splits[0].start == 0 and splits[-1].end == segment.size
    assert all(a.end == b.start for a, b in pairwise(splits))
    positions = {p for _, p in index}
    assert all(s.start in positions for s in splits[1:])


def test_level_batch_rows(log_dirs: Path) -> None:
    rows = read_all(plan([str(log_dirs)], split_bytes=1500), level="batch")
    got = sorted((r["topic"], r["partition"], r["segment"], r["batchPosition"], r["baseOffset"], r["lastOffset"],
                  r["count"], r["crc"]) for r in rows)
    assert got == reference_batches(log_dirs)
    assert {r["codec"] for r in rows} == {"none", "gzip", "lz4", "zstd", "snappy"}


def test_narrower_schema_builds_only_those_columns(log_dirs: Path) -> None:
    narrow = pa.schema([pa.field("value", pa.binary()), pa.field("offset", pa.int64())])
    batches = [b for s in plan([str(log_dirs)]) for b in read_split(s, narrow, ReadOptions())]
    assert all(b.schema.equals(narrow) for b in batches)
    assert sum(b.num_rows for b in batches) == len(reference_rows(log_dirs))


def test_corrupt_batch_becomes_an_invalid_row(tmp_path: Path) -> None:
    pdir = write_partition(tmp_path / "logs", "t", 0, segments=1, batches=4)
    log = next(pdir.glob("*.log"))
    clean = read_all(plan([str(pdir)]))
    second = sorted({r["batchPosition"] for r in clean})[1]
    corrupt_byte(log, second + 70)                       # inside the first record of batch 2
    rows = read_all(plan([str(pdir)]))
    bad = [r for r in rows if not r["isvalid"]]
    assert len(bad) == 1 and bad[0]["batchPosition"] == second and bad[0]["offset"] is None
    assert bad[0]["error"].startswith("Record is corrupt (stored crc = ")
    assert len(rows) == len(clean) - 20 + 1


def test_broken_framing_and_truncated_tail_become_invalid_rows(tmp_path: Path) -> None:
    pdir = write_partition(tmp_path / "logs", "t", 0, segments=1, batches=3)
    log = next(pdir.glob("*.log"))
    data = log.read_bytes()
    log.write_bytes(data[:-10])                           # a crash mid-append
    rows = read_all(plan([str(pdir)]), level="batch")
    assert [r["isvalid"] for r in rows] == [True, True, False]
    assert rows[-1]["error"].startswith("truncated: entry of ")
    size_field = rows[1]["batchPosition"] + 8
    log.write_bytes(data[:size_field] + (5).to_bytes(4, "big") + data[size_field + 4:])
    rows = read_all(plan([str(pdir)]), level="batch")
    assert [r["isvalid"] for r in rows] == [True, False]
    assert "smaller than minimum record overhead" in rows[1]["error"]


def test_an_entry_after_a_chunk_boundary_near_the_range_end_is_read_whole(tmp_path: Path) -> None:
    # The last chunk ends 5 bytes into the second (complete) batch: those bytes are not "truncated".
    pdir = write_partition(tmp_path / "logs", "t", 0, segments=1, batches=2)
    data = next(pdir.glob("*.log")).read_bytes()
    second = 12 + int.from_bytes(data[8:12], "big")       # the first batch's offset and size fields, then its size
    assert len(data) > second + 61                        # a whole v2 batch follows
    rows = read_all(plan([str(pdir)]), level="batch", chunk_bytes=second + 5)
    assert [(r["batchPosition"], r["isvalid"], r["error"]) for r in rows] == [(0, True, None), (second, True, None)]


def test_pushed_filters_become_pruning() -> None:
    filters = [EqualTo(("topic",), "orders"), In(("partition",), (1, 2)), GreaterThanOrEqual(("offset",), 50),
               LessThan(("offset",), 90), GreaterThanOrEqual(("timestamp_ms",), 7), Not(EqualTo(("offset",), 3))]
    assert pruning_from_filters(filters, "record") == Pruning(frozenset({"orders"}), frozenset({1, 2}), 50, 89, 7)
    utc = datetime.UTC
    stamps = [GreaterThan(("timestamp",), datetime.datetime(2023, 11, 14, 22, 13, 20, 1500, tzinfo=utc)),
              LessThanOrEqual(("timestamp",), datetime.datetime(2023, 11, 14, 22, 13, 21, 1500, tzinfo=utc)),
              In(("offset",), (7, 70, 700))]
    assert pruning_from_filters(stamps, "record") == Pruning(offset_min=7, offset_max=700, timestamp_min=1700000000001,
                                                             offsets=frozenset({7, 70, 700}),
                                                             timestamp_max=1700000001002)


def test_offset_in_prunes_to_the_listed_offsets_segments(log_dirs: Path) -> None:
    everything = plan([str(log_dirs)], split_bytes=1024)
    pruning = pruning_from_filters([In(("offset",), (5, 230))], "record")
    splits = plan([str(log_dirs)], split_bytes=1024, pruning=pruning)
    # [min, max] would keep every split in between; the listed offsets need two per partition at most.
    assert len(splits) <= 2 * 5 < len(everything)
    rows = read_all(splits, pruning=pruning)
    assert sorted((r["topic"], r["partition"], r["offset"]) for r in rows if r["offset"] in (5, 230)) == sorted(
        (t[0], t[1], t[4]) for t in reference_rows(log_dirs) if t[4] in (5, 230))


def test_partitions_and_read_without_spark(log_dirs: Path) -> None:
    options = {"path": str(log_dirs), "splitbytes": "1k", "pushdown": "true"}
    source = KafkaLogDataSource(options)
    reader = source.reader(source.schema())
    everything = reader.partitions()
    remaining = list(reader.pushFilters([EqualTo(("topic",), "orders"), EqualTo(("partition",), 1),
                                         GreaterThanOrEqual(("offset",), 150)]))
    assert len(remaining) == 3                            # coarse pruning: Spark re-checks each row
    pruned = reader.partitions()
    assert 0 < len(pruned) < len(everything) // 4
    rows = [r for p in pruned for b in reader.read(p) for r in b.to_pylist()]
    expected = [t for t in reference_rows(log_dirs) if t[0] == "orders" and t[1] == 1 and t[4] >= 150]
    assert [t for t in as_tuples(rows) if t[0] == "orders" and t[1] == 1 and t[4] >= 150] == expected
    list(reader.pushFilters([EqualTo(("topic",), "payments")]))    # another query's filters: nothing kept
    assert {s.segment.topic for p in reader.partitions() for s in p.splits} == {"payments"}
    list(reader.pushFilters([]))
    assert len(reader.partitions()) == len(everything)


@pytest.mark.parametrize("lo,hi", [(0, 0), (37, 61), (100, 139), (119, 120), (200, 239), (5, 500)])
def test_offset_pruning_never_loses_rows(log_dirs: Path, lo: int, hi: int) -> None:
    pruning = Pruning(offset_min=lo, offset_max=hi)
    rows = read_all(plan([str(log_dirs)], split_bytes=1024, pruning=pruning), pruning=pruning)
    keep = [t for t in as_tuples(rows) if lo <= t[4] <= hi]
    assert keep == [t for t in reference_rows(log_dirs) if lo <= t[4] <= hi]


def test_paths_as_list_glob_and_single_segment(log_dirs: Path, tmp_path: Path) -> None:
    paths = json.dumps([str(log_dirs / "orders-0"), str(log_dirs / "pay*")])
    reader = KafkaLogDataSource({"paths": paths}).reader(spark_schema("record"))
    topics = {(s.segment.topic, s.segment.partition) for p in reader.partitions() for s in p.splits}
    assert topics == {("orders", 0), ("payments", 0), ("payments", 1)}
    single = tmp_path / "orders-0"
    shutil.copytree(log_dirs / "orders-0", single)
    log = sorted(single.glob("*.log"))[0]
    splits = plan([str(log)], split_bytes=1024)
    assert len(splits) > 1 and {s.segment.log for s in splits} == {str(log)}
