"""Peak memory of `kdump --files X.log` on compressed batches built to exhaust it ("bombs").

Each case runs kdump in a fresh process and reads its VmHWM. The bounds are far below what the
whole-batch decoder needed for the same files (it held the decompressed bytes and every record:
measured on the code before streaming: 256 MiB value ~535 MiB for --deep-iteration and ~1300 MiB
for --json; 500 k tiny records ~250 MiB; 512 MiB after one declared record: inflated whole before the
error) and far above what streaming needs (25-60 MiB).
The bomb shapes come from benchmarks/bench_bombs.py, which measures the full-size ones.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kdump.format.codecs import Codec
from kdump.format.encode import encode_record_v2

_spec = importlib.util.spec_from_file_location("bench_bombs", Path(__file__).parents[2] / "benchmarks" / "bench_bombs.py")
assert _spec is not None and _spec.loader is not None
bombs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bombs)

BOUND_MIB = 150
CODECS = [Codec.ZSTD, Codec.GZIP, Codec.SNAPPY, Codec.LZ4]


def run_measured(path: Path, *flags: str) -> tuple[float, int, str]:
    """(peak RSS in MiB, exit status, stderr) of `kdump --files path flags` in a fresh process."""
    code = ("import sys\nfrom kdump.cli.main import main\nsys.argv = ['kdump', '--files', %r] + %r\n"
            "try:\n    main()\nexcept SystemExit as exit:\n    status = exit.code\nelse:\n    status = 0\n"
            "hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1]\n"
            "print('VmHWM', hwm, status, file=sys.stderr)\n" % (str(path), list(flags)))
    env = dict(os.environ)
    done = subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, env=env, timeout=300)
    lines = done.stderr.strip().splitlines()
    _, kib, status = lines[-1].split()
    return int(kib) / 1024, int(status) if status.lstrip("-").isdigit() else -1, "\n".join(lines[:-1])


def segment(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("codec", CODECS)
def test_value_of_256_mib_deep_iteration(tmp_path: Path, codec: Codec) -> None:
    path = segment(tmp_path, bombs.value_batch(codec, 256 << 20))
    peak, status, err = run_measured(path, "--deep-iteration")
    assert status == 0, err
    assert peak < BOUND_MIB


@pytest.mark.parametrize("codec", [Codec.ZSTD, Codec.LZ4])
def test_value_of_256_mib_json(tmp_path: Path, codec: Codec) -> None:
    path = segment(tmp_path, bombs.value_batch(codec, 256 << 20))
    peak, status, err = run_measured(path, "--deep-iteration", "--json")
    assert status == 0, err
    assert peak < BOUND_MIB


@pytest.mark.parametrize("codec", [Codec.ZSTD, Codec.GZIP])
def test_value_of_256_mib_print_data_log(tmp_path: Path, codec: Codec) -> None:
    # Printed as it is read again and decoded piece by piece; holding it took ~1050 MiB (the value,
    # its text and the line).
    path = segment(tmp_path, bombs.value_batch(codec, 256 << 20))
    peak, status, err = run_measured(path, "--print-data-log")
    assert status == 0, err
    assert peak < BOUND_MIB


@pytest.mark.parametrize("flags", [("--deep-iteration",), ("--print-data-log",), ("--deep-iteration", "--json")])
def test_uncompressed_batch_of_256_mib(tmp_path: Path, flags: tuple[str, ...]) -> None:
    # Past the 16 MiB a window holds, its records are read from the file a window at a time; reading
    # the batch whole took 538, 1050 and 1560 MiB for these three.
    area = encode_record_v2(0, 0, b"k", b"x" * (256 << 20)) + encode_record_v2(1, 0, b"k", b"y")
    path = segment(tmp_path, bombs.batch_bytes(area, Codec.NONE, 2, 1))
    peak, status, err = run_measured(path, *flags)
    assert status == 0, err
    assert peak < BOUND_MIB


def test_half_a_million_tiny_records(tmp_path: Path) -> None:
    # Consecutive offsets (offset delta i), null keys and values: ~4 MB inflated from ~100 KB.
    area = b"".join(encode_record_v2(i, 0, None, None) for i in range(500_000))
    data = bombs.batch_bytes(bombs.compress_stream(Codec.ZSTD, iter([area])), Codec.ZSTD, 500_000, 499_999)
    path = segment(tmp_path, data)
    peak, status, err = run_measured(path, "--deep-iteration")
    assert status == 0, err
    assert peak < 100


def test_data_far_beyond_the_declared_records(tmp_path: Path) -> None:
    # One declared record, then 512 MiB more: the error comes after a chunk, not after inflating it all.
    def pieces():
        yield encode_record_v2(0, 0, b"k", b"v")
        yield from bombs._repeat(b"\x00", 512 << 20)

    data = bombs.batch_bytes(bombs.compress_stream(Codec.ZSTD, pieces()), Codec.ZSTD, 1, 0)
    path = segment(tmp_path, data)
    peak, status, err = run_measured(path, "--deep-iteration")
    assert status != 0
    assert err.strip().endswith("position 0: Incorrect declared batch size, records still remaining in file"), err
    assert len(err.strip().splitlines()) == 1
    assert peak < 100
