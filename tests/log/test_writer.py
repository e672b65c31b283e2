"""PartitionLog: rolls at Kafka's thresholds, indexes a reader can check, crash-safe output.

The index oracle here is independent of the writer: it unpacks the index files with struct,
scans the .log with scan_batches and keeps its own running maximum timestamp.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kdump.errors import UsageError
from kdump.format.batch import scan_batches
from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record, decode_records
from kdump.gen.generator import GenSpec, TopicSpec, generate
from kdump.log.atomic import staged_directory
from kdump.log.writer import LogConfig, PartitionLog

BASE_TS = 1_700_000_000_000


def batch(offset: int, n: int = 1, value_size: int = 20, ts: int | None = None) -> bytes:
    t = BASE_TS + offset if ts is None else ts
    return encode_batch_v2([Record(offset + i, t, b"k", bytes(value_size)) for i in range(n)], base_offset=offset)


def segment_bases(directory: Path) -> list[int]:
    return sorted(int(p.name[:20]) for p in directory.glob("*.log"))


def read_entries(path: Path, fmt: str) -> list[tuple[int, ...]]:
    data = path.read_bytes()
    size = struct.calcsize(fmt)
    return [struct.unpack_from(fmt, data, i) for i in range(0, len(data) - len(data) % size, size)]


def check_segment_indexes(log_path: Path, interval: int, *, closed: bool = True) -> None:
    """Every entry points at a batch start and carries its last offset / the running max timestamp,
    and the entries are exactly those Kafka >= 4.1 would write (own bookkeeping, not the writer's)."""
    base = int(log_path.name[:20])
    data = log_path.read_bytes()
    if not closed:  # a preallocated .log: the batches end where the zero padding starts
        end = 0
        while end + 12 <= len(data) and struct.unpack_from(">i", data, end + 8)[0] >= 14:
            end += 12 + struct.unpack_from(">i", data, end + 8)[0]
        data = data[:end]
    batches = list(scan_batches(data))
    by_position = {b.position: b for b in batches}
    expected_offsets: list[tuple[int, int]] = []
    expected_times: list[tuple[int, int]] = []
    running: dict[int, tuple[int, int]] = {}  # last offset -> (max ts so far, offset of earliest max)
    max_ts, max_off, since = -1, base, 0
    for b in batches:
        if b.max_timestamp > max_ts:
            max_ts, max_off = b.max_timestamp, b.last_offset
        running[b.last_offset] = (max_ts, max_off)
        if since > interval:
            expected_offsets.append((b.last_offset - base, b.position))
            if max_ts > (expected_times[-1][0] if expected_times else -1):
                expected_times.append((max_ts, max_off - base))
            since = 0
        since += b.size
    if closed and max_ts > (expected_times[-1][0] if expected_times else -1):
        expected_times.append((max_ts, max_off - base))

    offsets = read_entries(log_path.with_suffix(".index"), ">ii")
    times = read_entries(log_path.with_suffix(".timeindex"), ">qi")
    if not closed:  # zero padding of a live index: stop at the first empty slot
        offsets = [e for i, e in enumerate(offsets) if i == 0 or e[0] != 0]
        times = [e for e in times if e != (0, 0)]
    for relative, position in offsets:
        assert position in by_position, f"{log_path}: index entry at {position} is not a batch start"
        assert by_position[position].last_offset == base + relative
    for timestamp, relative in times:
        assert running[base + relative][1] == base + relative
        assert running[base + relative][0] == timestamp
    assert [t for t, _ in times] == sorted(set(t for t, _ in times))
    assert offsets == expected_offsets
    assert times == expected_times


def test_batch_that_exactly_fills_segment_bytes_stays(tmp_path: Path) -> None:
    size = len(batch(0))
    with PartitionLog(str(tmp_path), LogConfig(segment_bytes=3 * size)) as log:
        for o in range(4):
            log.append(batch(o))
    assert segment_bases(tmp_path) == [0, 3]
    assert (tmp_path / "00000000000000000000.log").stat().st_size == 3 * size


def test_one_byte_over_segment_bytes_rolls(tmp_path: Path) -> None:
    size = len(batch(0))
    with PartitionLog(str(tmp_path), LogConfig(segment_bytes=3 * size - 1)) as log:
        for o in range(4):
            log.append(batch(o))
    assert segment_bases(tmp_path) == [0, 2]


def test_batch_larger_than_a_segment_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError), PartitionLog(str(tmp_path), LogConfig(segment_bytes=50)) as log:
        log.append(batch(0))
    assert list(tmp_path.iterdir()) == []   # the aborted segment's temporary file is gone


@pytest.mark.parametrize("interval_delta, indexed_batch", [(0, 2), (-1, 1)])
def test_index_interval_exactly_reached_vs_exceeded(tmp_path: Path, interval_delta: int, indexed_batch: int) -> None:
    size = len(batch(0))
    with PartitionLog(str(tmp_path), LogConfig(index_interval_bytes=size + interval_delta)) as log:
        for o in range(3):
            log.append(batch(o))
    entries = read_entries(tmp_path / "00000000000000000000.index", ">ii")
    assert entries[0] == (indexed_batch, indexed_batch * size)
    check_segment_indexes(tmp_path / "00000000000000000000.log", size + interval_delta)


def test_segment_ms_by_record_time(tmp_path: Path) -> None:
    with PartitionLog(str(tmp_path), LogConfig(segment_ms=1000)) as log:
        log.append(batch(0, ts=BASE_TS))
        log.append(batch(1, ts=BASE_TS + 1000))   # exactly segment.ms later: no roll
        log.append(batch(2, ts=BASE_TS + 1001))   # one more: roll
        log.append(batch(3, ts=BASE_TS + 2001))
    assert segment_bases(tmp_path) == [0, 2]


def test_full_index_rolls(tmp_path: Path) -> None:
    # 48 bytes: 6 offset slots, 4 time slots of which the last is kept for the roll entry.
    cfg = LogConfig(index_interval_bytes=0, max_index_bytes=48)
    with PartitionLog(str(tmp_path), cfg) as log:
        for o in range(10):
            log.append(batch(o))
    bases = segment_bases(tmp_path)
    assert bases[:2] == [0, 4]
    for b in bases:
        check_segment_indexes(tmp_path / f"{b:020d}.log", 0)
        assert len(read_entries(tmp_path / f"{b:020d}.timeindex", ">qi")) <= 4


def test_relative_offset_overflow_rolls(tmp_path: Path) -> None:
    with PartitionLog(str(tmp_path)) as log:
        log.append(batch(0, ts=BASE_TS))
        log.append(batch(2**31 - 1, ts=BASE_TS))   # relative offset INT32_MAX still fits
        log.append(batch(2**31, ts=BASE_TS))       # does not: new segment at its base offset
    assert segment_bases(tmp_path) == [0, 2**31]


def test_live_close_leaves_preallocated_indexes(tmp_path: Path) -> None:
    size = len(batch(0))
    cfg = LogConfig(index_interval_bytes=size, max_index_bytes=100, segment_bytes=10_000, preallocate=True)
    log = PartitionLog(str(tmp_path), cfg)
    for o in range(4):
        log.append(batch(o))
    log.close(live=True)
    index = (tmp_path / "00000000000000000000.index").read_bytes()
    timeindex = (tmp_path / "00000000000000000000.timeindex").read_bytes()
    assert len(index) == 96 and len(timeindex) == 96
    assert index[:8] == struct.pack(">ii", 2, 2 * size) and index[8:] == bytes(88)
    # no roll/close entry: only the one written with the offset entry
    assert timeindex[:12] == struct.pack(">qi", BASE_TS + 2, 2) and timeindex[12:] == bytes(84)
    logfile = (tmp_path / "00000000000000000000.log").read_bytes()
    assert len(logfile) == 10_000 and logfile[4 * size:] == bytes(10_000 - 4 * size)
    check_segment_indexes(tmp_path / "00000000000000000000.log", size, closed=False)


def test_staged_directory_refuses_existing_and_cleans_up(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(UsageError, match="already exists"), staged_directory(str(out)):
        pass
    for exc in (RuntimeError("boom"), KeyboardInterrupt()):
        with pytest.raises(type(exc)), staged_directory(str(out), force=True) as stage:
            Path(stage, "half").write_bytes(b"x")
            raise exc
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
        assert list(out.iterdir()) == []     # the old directory is untouched


def test_interrupted_generate_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}
    original = PartitionLog.append

    def flaky(self: PartitionLog, data: bytes):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 7:
            raise KeyboardInterrupt
        return original(self, data)

    monkeypatch.setattr(PartitionLog, "append", flaky)
    spec = GenSpec(topics=(TopicSpec("t", 2),), records=50, log=LogConfig(segment_bytes=4096))
    with pytest.raises(KeyboardInterrupt):
        generate(str(tmp_path / "out"), spec)
    assert list(tmp_path.iterdir()) == []


record_lists = st.lists(
    st.tuples(st.one_of(st.none(), st.binary(max_size=30)), st.one_of(st.none(), st.binary(max_size=200)),
              st.integers(0, 5000)),
    min_size=1, max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(appends=st.lists(record_lists, min_size=1, max_size=25), segment_bytes=st.integers(2000, 6000),
       interval=st.integers(0, 1500), index_bytes=st.integers(24, 200), segment_ms=st.integers(1000, 50_000))
def test_random_appends_read_back_in_order(tmp_path_factory: pytest.TempPathFactory, appends, segment_bytes,
                                           interval, index_bytes, segment_ms) -> None:
    directory = tmp_path_factory.mktemp("p")
    cfg = LogConfig(segment_bytes=segment_bytes, index_interval_bytes=interval, max_index_bytes=index_bytes,
                    segment_ms=segment_ms)
    written: list[Record] = []
    offset, clock = 0, BASE_TS
    with PartitionLog(str(directory), cfg) as log:
        for recs in appends:
            records = []
            for key, value, step in recs:
                clock += step
                records.append(Record(offset + len(records), clock, key, value))
            log.append(encode_batch_v2(records, base_offset=offset))
            written.extend(records)
            offset += len(records)
    read: list[Record] = []
    bases = segment_bases(directory)
    for b in bases:
        path = directory / f"{b:020d}.log"
        data = path.read_bytes()
        assert len(data) <= segment_bytes
        for bt in scan_batches(data):
            assert bt.is_valid
            assert b <= bt.base_offset and bt.last_offset - b <= 2**31 - 1
            read.extend(decode_records(data, bt))
        check_segment_indexes(path, interval)
    assert [(r.offset, r.timestamp, r.key, r.value) for r in read] == \
        [(r.offset, r.timestamp, r.key, r.value) for r in written]
    assert not [p for p in os.listdir(directory) if p.endswith(".tmp")]


FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "logdirs"


@pytest.mark.parametrize("pdir", sorted(p for p in FIXTURE.iterdir() if p.is_dir()), ids=lambda p: p.name)
def test_fixture_indexes_point_at_batches(pdir: Path) -> None:
    logs = sorted(pdir.glob("*.log"))
    assert len(logs) >= 2
    for log in logs:
        live = pdir.name == "live-0" and log == logs[-1]
        check_segment_indexes(log, 512, closed=not live)


def test_per_append_rule_indexes_the_append_start_with_its_largest_offset(tmp_path: Path) -> None:
    size = len(batch(0))
    with PartitionLog(str(tmp_path), LogConfig(index_interval_bytes=0, per_append_index=True)) as log:
        log.append(batch(0))
        log.append(batch(1) + batch(2) + batch(3))   # one produce request holding three batches
        log.append(batch(4))
    entries = read_entries(tmp_path / "00000000000000000000.index", ">ii")
    assert entries == [(3, size), (4, 4 * size)]


def test_index_builder_over_scanned_batches_matches_written_files() -> None:
    from kdump.log.index_builder import SegmentIndexBuilder

    logs = [p for p in sorted(FIXTURE.glob("*/*.log")) if p.parent.name != "live-0"]   # closed segments
    assert len(logs) > 20
    for log in logs:
        data = log.read_bytes()
        builder = SegmentIndexBuilder(int(log.name[:20]), 512, 1024)
        for scanned in scan_batches(data):
            builder.add_scanned(scanned)
        builder.close()
        assert builder.offset_index_bytes() == log.with_suffix(".index").read_bytes()
        assert builder.time_index_bytes() == log.with_suffix(".timeindex").read_bytes()
