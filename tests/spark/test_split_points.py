"""Splits start only at batches the log confirms, whatever the ``.index`` says.

A wrong index entry (one moved into the middle of a batch) used to become a split point: the task
starting there read garbage and stopped, losing every later record of the segment, and the task
before it ended in the middle of a batch. The oracle is kafka-python's own decoding of the files.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

pytest.importorskip("pyarrow", reason="pyarrow not installed: pip install 'kdump[spark]'")
from kafka.record import MemoryRecords
from logbuild import write_partition

from kdump.arrow.discovery import find_segments
from kdump.arrow.planning import Pruning, offset_index, plan
from kdump.arrow.reading import ReadOptions, read_split
from kdump.format.batch import scan_batches


def kafka_python_rows(pdir: Path) -> list[tuple]:
    rows = []
    for log in sorted(pdir.glob("*.log")):
        records = MemoryRecords(log.read_bytes())
        while (batch := records.next_batch()) is not None:
            rows.extend((r.offset, r.key, r.value) for r in batch)
    return rows


def spark_rows(pdir: Path, split_bytes: int, pruning: Pruning = Pruning()) -> list[tuple]:
    out = []
    for split in plan([str(pdir)], split_bytes=split_bytes, pruning=pruning):
        for batch in read_split(split, None, ReadOptions(pruning=pruning)):
            for r in batch.to_pylist():
                assert r["isvalid"], r["error"]
                out.append((r["offset"], r["key"], r["value"]))
    return sorted(out)


@pytest.fixture
def moved_entry(tmp_path: Path) -> tuple[Path, int]:
    """One partition, one segment of 40 batches; one .index entry moved 100 bytes into its batch."""
    pdir = write_partition(tmp_path / "logs", "t", 0, segments=1, batches=40, index_interval=300)
    segment = find_segments([str(pdir)])[0]
    entries = offset_index(segment)
    sizes = {b.position: b.size for b in scan_batches(Path(segment.log).read_bytes())}
    slot = next(i for i, (_, p) in enumerate(entries) if i > len(entries) // 3 and sizes[p] > 200)
    index = Path(segment.index)                      # type: ignore[arg-type]
    data = bytearray(index.read_bytes())
    relative, position = struct.unpack_from(">ii", data, slot * 8)
    struct.pack_into(">ii", data, slot * 8, relative, position + 100)
    index.write_bytes(bytes(data))
    return pdir, position + 100


@pytest.mark.parametrize("split_bytes", [1, 200, 700, 1500, 4000, 1 << 30])
def test_a_moved_index_entry_loses_no_records(moved_entry: tuple[Path, int], split_bytes: int) -> None:
    pdir, bad_position = moved_entry
    expected = kafka_python_rows(pdir)
    assert len(expected) == 40 * 20
    assert spark_rows(pdir, split_bytes) == expected
    assert all(s.start != bad_position for s in plan([str(pdir)], split_bytes=split_bytes))


@pytest.mark.parametrize("lo,hi", [(0, 799), (200, 420), (390, 410), (600, 600)])
def test_offset_pruning_with_a_moved_entry_keeps_the_rows_in_range(moved_entry: tuple[Path, int],
                                                                    lo: int, hi: int) -> None:
    pdir, _ = moved_entry
    pruning = Pruning(offset_min=lo, offset_max=hi)
    got = [t for t in spark_rows(pdir, 500, pruning) if lo <= t[0] <= hi]
    assert got == [t for t in kafka_python_rows(pdir) if lo <= t[0] <= hi]
