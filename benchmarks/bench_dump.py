"""Benchmark `kdump --files X.log` against the raw read+CRC floor and kafka-python, in one run.

Builds a segment of ~16 KiB v2 batches (15-byte keys, 21-byte values, ~372 records a batch, like
a real producer's batches with batch.size 16384) and prints, for the same file in the same run:
  floor     mmap + CRC-32C of every batch (the least any checking reader must do)
  shallow   kdump batch lines with CRC (`kdump --files X`) to /dev/null      target >= 0.6x floor
  deep      kdump record decoding vs kafka-python decoding the same file     target >= 5x
  print     `kdump --files X --print-data-log` to /dev/null vs kafka-python   target >= 3x
  memory    peak RSS of `kdump --print-data-log` subprocesses at two file sizes (flat = same)

Usage: python benchmarks/bench_dump.py [--size-mib 256] [--dir /tmp/kdump-bench]
"""

from __future__ import annotations

import argparse
import mmap
import os
import struct
import subprocess
import sys
import time

from kafka.record.memory_records import MemoryRecords

from kdump.cli.dump_files import dump_files
from kdump.format.crc import CRC32C_IMPLEMENTATION, crc32c
from kdump.format.encode import encode_batch_v2
from kdump.format.records import RECORD_DECODER, Record
from kdump.log.batches import LogBatches
from kdump.log.segment import ReadOnlyFile


def build_segment(path: str, size_mib: int) -> None:
    if os.path.exists(path) and os.path.getsize(path) >= size_mib * 2**20:
        return
    tmp = path + ".tmp"
    offset = 0
    ts = 1_647_327_649_746
    with open(tmp, "wb") as out:
        written = 0
        while written < size_mib * 2**20:
            records = [Record(offset + i, ts + i // 70, b"key-key-key%04d" % ((offset + i) % 10000),
                              b"value-value-value%04d" % ((offset + i) % 10000)) for i in range(372)]
            data = encode_batch_v2(records, base_offset=offset, partition_leader_epoch=1)
            out.write(data)
            written += len(data)
            offset += 372
            ts += 6
    os.replace(tmp, path)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def floor_scan(path: str) -> int:
    """mmap + a bare header walk + CRC-32C of each batch: what any validating reader must pay."""
    unpack = struct.Struct(">qi").unpack_from
    n = 0
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        view = memoryview(mm)
        pos, end = 0, len(mm)
        while pos + 12 <= end:
            _, size = unpack(mm, pos)
            crc32c(view[pos + 21:pos + 12 + size])
            pos += 12 + size
            n += 1
        view.release()
    return n


def kdump_decode(path: str) -> int:
    count = 0
    with ReadOnlyFile(path) as log:
        batches = LogBatches(log, check_crc=True)
        for batch in batches:
            count += len(batches.records(batch))
    return count


def kafka_python_decode(path: str) -> int:
    with open(path, "rb") as f:
        data = f.read()
    count = 0
    records = MemoryRecords(data)
    while records.has_next():
        batch = records.next_batch()
        batch.validate_crc()
        for r in batch:
            r.offset, r.timestamp, r.key, r.value, r.headers  # noqa: B018 - touch every field
            count += 1
    return count


def kdump_cli(path: str, *flags: str) -> None:
    saved = sys.stdout
    with open(os.devnull, "w") as sink:
        sys.stdout = sink
        try:
            options = dict(files=path, kafka_version="4.3", max_bytes=2**31 - 1, max_message_size=5 * 2**20)
            options.update({flag: True for flag in flags})
            dump_files(**options)
        finally:
            sys.stdout = saved


def peak_rss_mib(path: str) -> float:
    """VmHWM of a fresh `kdump --files path --print-data-log` process.

    Not ru_maxrss: Linux carries the parent's high-water mark across fork+exec, so a child of this
    benchmark (which holds kafka-python's copy of the file) would report the parent's peak.
    """
    code = ("import sys; from kdump.cli.main import main; sys.argv=['kdump','--files',%r,"
            "'--print-data-log']; \ntry:\n main()\nexcept SystemExit: pass\n"
            "print(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1], file=sys.stderr)"
            % path)
    done = subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, check=True)
    return int(done.stderr.strip().splitlines()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--dir", default="/tmp/kdump-bench")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    path = os.path.join(args.dir, "00000000000000000000.log")
    small = os.path.join(args.dir, "small", "00000000000000000000.log")
    os.makedirs(os.path.dirname(small), exist_ok=True)
    build_segment(path, args.size_mib)
    build_segment(small, max(1, args.size_mib // 4))
    mib = os.path.getsize(path) / 2**20
    print(f"segment: {mib:.0f} MiB of ~16 KiB batches; CRC-32C by {CRC32C_IMPLEMENTATION}; "
          f"v2 records by {RECORD_DECODER} (KDUMP_PURE_PYTHON=1 for the Python decoder)")
    floor_scan(path)  # warm the page cache

    t_floor = min(timed(lambda: floor_scan(path)) for _ in range(3))
    t_shallow = min(timed(lambda: kdump_cli(path)) for _ in range(3))
    records = kdump_decode(path)
    t_deep = timed(lambda: kdump_decode(path))
    t_kp = timed(lambda: kafka_python_decode(path))
    t_print = timed(lambda: kdump_cli(path, "print_data_log"))

    print(f"floor   mmap+CRC-32C      {t_floor:7.3f} s  {mib / t_floor:8.0f} MiB/s")
    print(f"shallow kdump --files     {t_shallow:7.3f} s  {mib / t_shallow:8.0f} MiB/s  "
          f"{t_floor / t_shallow:5.2f}x floor (target >= 0.6)")
    print(f"deep    kdump decode      {t_deep:7.3f} s  {records / t_deep / 1e6:8.2f} M records/s")
    print(f"        kafka-python      {t_kp:7.3f} s  {records / t_kp / 1e6:8.2f} M records/s")
    print(f"        ratio             {t_kp / t_deep:7.2f}x kafka-python (target >= 5)")
    print(f"print   --print-data-log  {t_print:7.3f} s  {records / t_print / 1e6:8.2f} M lines/s  "
          f"{t_kp / t_print:5.2f}x kafka-python decode (target >= 3)")
    small_mib = os.path.getsize(small) / 2**20
    print(f"memory  peak RSS {peak_rss_mib(small):6.1f} MiB for {small_mib:.0f} MiB, "
          f"{peak_rss_mib(path):6.1f} MiB for {mib:.0f} MiB (flat = equal)")


if __name__ == "__main__":
    main()
