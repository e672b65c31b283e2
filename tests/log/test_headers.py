"""kdump.log.headers reads the same batch headers LogBatches frames, with fewer bytes for large batches."""

from __future__ import annotations

from pathlib import Path

from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump.log.batches import LogBatches
from kdump.log.headers import ReadCounter, segment_headers
from kdump.log.segment import ReadOnlyFile


def _log(path: Path, sizes: list[int], padding: int = 0) -> Path:
    data = bytearray()
    offset = 0
    for epoch, size in enumerate(sizes):
        records = [Record(offset + i, 1000 + i, b"k%d" % i, b"v" * size) for i in range(3)]
        data += encode_batch_v2(records, base_offset=offset, partition_leader_epoch=epoch)
        offset += 3
    path.write_bytes(bytes(data) + bytes(padding))
    return path


def _fields(batches: object) -> list[tuple[int, int, int, int, int, int]]:
    return [(b.position, b.base_offset, b.last_offset, b.partition_leader_epoch, b.crc, b.size)
            for b in batches]  # type: ignore[attr-defined]


def test_same_headers_as_logbatches_for_small_and_large_batches_and_padding(tmp_path: Path) -> None:
    path = _log(tmp_path / "00000000000000000000.log", [10, 20000, 5, 70000, 3, 3, 100000], padding=4096)
    with ReadOnlyFile(str(path)) as f:
        expected = _fields(LogBatches(f, check_crc=False))
    counter = ReadCounter()
    assert _fields(segment_headers(str(path), counter=counter)) == expected
    assert len(expected) == 7
    assert counter.bytes_read < path.stat().st_size // 2     # the large batches' bodies are skipped


def test_partial_tail_ends_the_segment(tmp_path: Path) -> None:
    path = _log(tmp_path / "00000000000000000000.log", [10, 10])
    whole = path.read_bytes()
    path.write_bytes(whole[:-5])                               # the last batch cut short
    assert [b.base_offset for b in segment_headers(str(path))] == [0]
