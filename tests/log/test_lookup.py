"""Kafka's lookups (LogSegment.translateOffset, findOffsetByTimestamp) agree with a brute-force scan and read O(index.interval.bytes)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdump.format.batch import scan_batches
from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record, decode_records
from kdump.log.index_builder import SegmentIndexBuilder
from kdump.log.logdir import PartitionDir, read_partition_dir
from kdump.log.lookup import find_offset, find_timestamp

INTERVAL = 512
T0 = 1_600_000_000_000


def build_partition(directory: Path, *, seed: int, segments: int = 3, batches: int = 60,
                    start: int = 100, monotonic: bool = True) -> list[Record]:
    """Segments of random-sized v2 batches, with compacted gaps; indexes by the broker's rules."""
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    offset, ts = start, T0
    every: list[Record] = []
    for _ in range(segments):
        base = offset
        log = bytearray()
        builder = SegmentIndexBuilder(base, INTERVAL)
        for _ in range(batches):
            recs = []
            for _ in range(rng.randint(1, 6)):
                ts += rng.randint(0, 40) if monotonic else rng.randint(-30, 40)
                recs.append(Record(offset, ts, b"k%d" % offset, b"v" * rng.randint(0, 120)))
                offset += rng.choice((1, 1, 1, 2))   # gaps, as compaction leaves them
            data = encode_batch_v2(recs, base_offset=recs[0].offset)
            batch = next(scan_batches(data, check_crc=False))
            builder.add_batch(batch.last_offset, len(log), batch.size, batch.max_timestamp)
            log += data
            every.extend(recs)
        builder.close()
        stem = directory / f"{base:020d}"
        stem.with_suffix(".log").write_bytes(bytes(log))
        stem.with_suffix(".index").write_bytes(builder.offset_index_bytes())
        stem.with_suffix(".timeindex").write_bytes(builder.time_index_bytes())
        offset += rng.randint(0, 3)   # the next segment may start above the last offset
    return every


def max_batch_size(partition: PartitionDir) -> int:
    sizes = [b.size for seg in partition.segments for b in scan_batches(Path(seg.log).read_bytes(), check_crc=False)]
    return max(sizes)


@pytest.fixture(scope="module")
def partition(tmp_path_factory: pytest.TempPathFactory) -> tuple[PartitionDir, list[Record], int]:
    directory = tmp_path_factory.mktemp("lookup") / "topic-0"
    records = build_partition(directory, seed=7)
    part = read_partition_dir(str(directory))
    return part, records, max_batch_size(part)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_offset_lookup_agrees_with_brute_force(partition, data) -> None:  # type: ignore[no-untyped-def]
    part, records, biggest = partition
    target = data.draw(st.integers(records[0].offset - 3, records[-1].offset + 3))
    result = find_offset(part, target)
    expected = next((r for r in records if r.offset >= target), None)
    if target < part.segments[0].base_offset or expected is None:
        assert not result.found
        return
    assert result.record is not None and result.record.offset == expected.offset
    assert result.record.timestamp == expected.timestamp and result.record.value == expected.value
    # one index interval, plus the indexed batch and the answer
    assert result.bytes_read <= INTERVAL + 2 * biggest


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_timestamp_lookup_agrees_with_brute_force(partition, data) -> None:  # type: ignore[no-untyped-def]
    part, records, biggest = partition
    target = data.draw(st.integers(records[0].timestamp - 5, records[-1].timestamp + 5))
    result = find_timestamp(part, target)
    expected = next((r for r in records if r.timestamp >= target), None)
    if expected is None:
        assert not result.found
        return
    assert result.record is not None and (result.record.offset, result.record.timestamp) == \
        (expected.offset, expected.timestamp)
    assert result.bytes_read <= 2 * (INTERVAL + 2 * biggest)


def test_out_of_order_timestamps_still_find_the_first_record(tmp_path: Path) -> None:
    records = build_partition(tmp_path / "t-0", seed=3, monotonic=False, segments=2)
    part = read_partition_dir(str(tmp_path / "t-0"))
    rng = random.Random(1)
    for _ in range(200):
        target = rng.randint(records[0].timestamp - 5, max(r.timestamp for r in records) + 5)
        expected = next((r for r in records if r.timestamp >= target), None)
        result = find_timestamp(part, target)
        assert (result.record.offset if result.record else None) == (expected.offset if expected else None)


def test_bytes_read_do_not_grow_with_the_segment(tmp_path: Path) -> None:
    build_partition(tmp_path / "big-0", seed=5, segments=1, batches=2000)
    part = read_partition_dir(str(tmp_path / "big-0"))
    size = os.path.getsize(part.segments[0].log)  # type: ignore[arg-type]
    result = find_offset(part, part.segments[0].base_offset + 5000)
    assert result.found
    assert result.bytes_read <= INTERVAL + 2 * max_batch_size(part) < size // 50


def test_explain_steps_name_segment_slot_start_scan_and_bytes(partition) -> None:  # type: ignore[no-untyped-def]
    part, records, _ = partition
    target = records[len(records) // 2].offset
    result = find_offset(part, target)
    kinds = [s.kind for s in result.steps]
    assert kinds[0] == "segment" and "index" in kinds and "start" in kinds and kinds[-1] == "read"
    index_step = next(s for s in result.steps if s.kind == "index")
    assert index_step.fields["offset"] <= target
    start = next(s for s in result.steps if s.kind == "start")
    assert start.fields["position"] == index_step.fields["position"]
    assert result.steps[-1].fields == {"batches": result.batches_scanned, "bytes": result.bytes_read}


def test_found_batch_records_are_the_logs(partition) -> None:  # type: ignore[no-untyped-def]
    part, _, _ = partition
    result = find_offset(part, part.segments[1].base_offset)
    assert result.batch is not None and result.batch.is_valid
    data = Path(result.segment.log).read_bytes()  # type: ignore[union-attr, arg-type]
    assert result.records == decode_records(data, result.batch)


def test_below_first_segment_and_beyond_end(partition) -> None:  # type: ignore[no-untyped-def]
    part, records, _ = partition
    assert not find_offset(part, 0).found
    assert "out of range" in find_offset(part, 0).steps[-1].text
    assert not find_offset(part, records[-1].offset + 1).found
    assert not find_timestamp(part, records[-1].timestamp + 1).found
