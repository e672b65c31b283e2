"""Small segments share a task: consecutive splits are packed up to packBytes (and never past splitBytes)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyarrow", reason="pyarrow not installed: pip install 'kdump[spark]'")
pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kdump[spark]'")

from logbuild import as_tuples, reference_rows

from kdump.arrow.planning import Segment, Split, pack, plan
from kdump.log.logdir import SegmentFiles
from kdump.spark.datasource import KafkaLogDataSource


def splits_of(*sizes: int) -> list[Split]:
    segment = Segment("t", 0, SegmentFiles(0, "/x/00000000000000000000.log"), sum(sizes))
    out, start = [], 0
    for size in sizes:
        out.append(Split(segment, start, start + size, 0, None))
        start += size
    return out


def test_pack_groups_consecutive_splits_in_order() -> None:
    splits = splits_of(3, 4, 2, 10, 1, 1)
    assert [[s.end - s.start for s in task] for task in pack(splits, 9)] == [[3, 4, 2], [10], [1, 1]]
    assert [s for task in pack(splits, 9) for s in task] == splits
    assert pack([], 9) == []


def partitions(log_dirs: Path, **options: str) -> list:
    source = KafkaLogDataSource({"path": str(log_dirs), **{k.lower(): v for k, v in options.items()}})
    return list(source.reader(source.schema()).partitions())


def test_small_segments_share_a_task_and_give_the_same_rows(log_dirs: Path) -> None:
    source = KafkaLogDataSource({"path": str(log_dirs)})
    reader = source.reader(source.schema())
    tasks = reader.partitions()
    assert len(tasks) == 1 and len(tasks[0].splits) == len(plan([str(log_dirs)])) == 10
    rows = [r for t in tasks for b in reader.read(t) for r in b.to_pylist()]
    assert as_tuples(rows) == reference_rows(log_dirs)


def test_pack_bytes_and_split_bytes_bound_a_task(log_dirs: Path) -> None:
    assert len(partitions(log_dirs, packBytes="1")) == 10           # no packing: a task per segment
    assert len(partitions(log_dirs, splitBytes="2k")) == len(plan([str(log_dirs)], split_bytes=2048))
    assert 1 < len(partitions(log_dirs, packBytes="8k")) < 10
