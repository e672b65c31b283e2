"""A filtered dump against a full dump of the same segment, in the same run: time and bytes read.

Builds the segment of benchmarks/bench_memory.py (the same ~16 KiB v2 batch with rising offsets,
indexes by ``kdump rebuild-index``), then dumps it in this process through ``kdump.dump.dump_files``
(output to a null sink): whole with ``--deep-iteration``, then three offsets in the middle and the
last two (``--offsets``, positioned through the .index; every batch of this segment has the same
timestamps, so ``--from`` is measured by tests/dump/test_filters.py instead). Prints CPU seconds, bytes read through
``ReadOnlyFile`` (log and indexes) and each filtered dump's ratio to the full one.

Usage: python benchmarks/bench_filters.py [--size-mib 256] [--dir /tmp/kdump-filters]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from pathlib import Path

from kdump.dump import DumpOptions, dump_files
from kdump.dump.filters import RecordFilter
from kdump.log.segment import ReadOnlyFile

_spec = importlib.util.spec_from_file_location("bench_memory", Path(__file__).with_name("bench_memory.py"))
bench_memory = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(bench_memory)  # type: ignore[union-attr]


class _Null:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


_read, _read_into = ReadOnlyFile.read, ReadOnlyFile.read_into
bytes_read = 0


def _counted_read(self: ReadOnlyFile, position: int, length: int) -> bytes:
    global bytes_read
    data = _read(self, position, length)
    bytes_read += len(data)
    return data


def _counted_read_into(self: ReadOnlyFile, view: memoryview, position: int) -> int:
    global bytes_read
    got = _read_into(self, view, position)
    bytes_read += got
    return got


ReadOnlyFile.read = _counted_read  # type: ignore[method-assign]
ReadOnlyFile.read_into = _counted_read_into  # type: ignore[method-assign]


def measure(log: str, wanted: RecordFilter) -> tuple[float, int]:
    global bytes_read
    bytes_read = 0
    start = time.process_time()
    result = dump_files([log], DumpOptions(deep=True, filter=wanted), out=_Null(), err=_Null())  # type: ignore[arg-type]
    assert result.ok
    return time.process_time() - start, bytes_read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--dir", default="/tmp/kdump-filters")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    partition, last = bench_memory.build_partition(args.dir, args.size_mib)
    log = os.path.join(partition, "00000000000000000000.log")
    middle = last // 2
    cases = {
        "full --deep-iteration": RecordFilter(),
        f"--offsets {middle}..{middle + 2}": RecordFilter(first_offset=middle, last_offset=middle + 2),
        f"--offsets {last - 1}.. --limit 2": RecordFilter(first_offset=last - 1, limit=2),
    }
    print(f"segment: {os.path.getsize(log) / 2**20:.0f} MiB, offsets 0..{last}")
    full_cpu = full_bytes = 0.0
    for name, wanted in cases.items():
        cpu, read = measure(log, wanted)
        if not wanted.active:
            full_cpu, full_bytes = cpu, read
            print(f"{name:42s} {cpu:8.3f} s CPU {read:>12,d} bytes read")
        else:
            print(f"{name:42s} {cpu:8.3f} s CPU {read:>12,d} bytes read   "
                  f"{full_cpu / max(cpu, 1e-6):9.0f}x faster, {full_bytes / max(read, 1):9.0f}x fewer bytes")


if __name__ == "__main__":
    main()
