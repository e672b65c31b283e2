"""The verify engine walks a log once and holds no per-batch lists: its memory does not grow with the log."""

from __future__ import annotations

import struct
import tracemalloc
from pathlib import Path

from click.testing import CliRunner

from kdump.cli.main import cli
from kdump.format.encode import encode_batch_v2
from kdump.format.index import encode_offset_entry, encode_time_entry
from kdump.format.records import Record
from kdump.log.files import segment_file_name

T0 = 1_700_000_000_000


def write_segment(part: Path, batches: int) -> None:
    """``batches`` one-record batches (the base offset is outside the CRC, so one encoding serves all)."""
    one = encode_batch_v2([Record(0, T0, None, b"v")], base_offset=0)
    log = bytearray(one * batches)
    index, tindex = bytearray(), bytearray()
    for i in range(batches):
        struct.pack_into(">q", log, i * len(one), i)
        if i % 64 == 0 and i:                 # as a broker: an entry per index.interval.bytes
            index += encode_offset_entry(0, i, i * len(one))
    tindex += encode_time_entry(0, T0, 0)
    part.mkdir()
    (part / segment_file_name(0, ".log")).write_bytes(bytes(log))
    (part / segment_file_name(0, ".index")).write_bytes(bytes(index))
    (part / segment_file_name(0, ".timeindex")).write_bytes(bytes(tindex))


def peak_bytes(part: Path) -> int:
    """Peak traced memory of `kdump verify --errors-only` on ``part``, run in this process."""
    tracemalloc.start()
    try:
        result = CliRunner().invoke(cli, ["verify", "--errors-only", "--jobs", "1", str(part)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0, result.output
    return peak


def test_memory_does_not_grow_with_the_number_of_batches(tmp_path: Path) -> None:
    write_segment(tmp_path / "small-0", 16_000)      # both past the 1 MiB read window
    write_segment(tmp_path / "large-0", 40_000)
    small, large = peak_bytes(tmp_path / "small-0"), peak_bytes(tmp_path / "large-0")
    # 24,000 batches more: a per-batch list of even 8 bytes would add 192 kB.
    assert large - small < 128 * 1024, (small, large)
