"""The verify engine walks a log once and holds no per-batch lists, nor a batch's records: its memory does
not grow with the log, nor with the records of one batch."""

from __future__ import annotations

import importlib.util
import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.cli.main import cli
from kdump.format.codecs import Codec
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


_spec = importlib.util.spec_from_file_location("bench_bombs", Path(__file__).parents[2] / "benchmarks" / "bench_bombs.py")
assert _spec is not None and _spec.loader is not None
bombs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bombs)

DEEP_BOUND_MIB = 120


def verify_deep_peak_mib(path: Path) -> float:
    """Peak RSS (VmHWM) of `kdump verify --deep path` in a fresh process; it must exit 0."""
    code = ("import sys\nfrom kdump.cli.main import main\nsys.argv = ['kdump', 'verify', '--deep', '--jobs', '1', %r]\n"
            "try:\n    main()\nexcept SystemExit as exit:\n    status = exit.code\nelse:\n    status = 0\n"
            "hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1]\n"
            "print('VmHWM', hwm, status, file=sys.stderr)\n" % str(path))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    *_, kib, status = done.stderr.split()
    assert status == "0", done.stdout + done.stderr
    return int(kib) / 1024


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP], ids=["none", "gzip"])
def test_deep_memory_does_not_grow_with_the_records_of_one_batch(tmp_path: Path, codec: Codec) -> None:
    # 2.5 M records of 7 bytes in one batch: uncompressed (17.5 MB, past the 16 MiB a window holds, so
    # read a window at a time) or gzip (a few KB in the window). Holding the batch's records as one
    # list took 499 MiB (none) and 498 MiB (gzip) before; a group at a time it takes ~35 MiB.
    path = tmp_path / segment_file_name(0, ".log")
    path.write_bytes(bombs.tiny_batch(codec, 2_500_000))
    assert verify_deep_peak_mib(path) < DEEP_BOUND_MIB
