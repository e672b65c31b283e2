"""One segment on every core: ``--print-data-log`` and ``verify --deep`` of one large segment with ``--jobs N``
against ``--jobs 1``, in one run.

Writes one segment of about --size-mib MiB (default 1024: Kafka's log.segment.bytes) of ~16 KiB v2 batches
(372 records of 15-byte keys and 21-byte values, a producer's batch.size of 16384, as bench_dump.py's) with
its .index and .timeindex through kdump.log.writer, into a temporary directory removed afterwards. Then:

  check  each command once with --jobs 1 and once with --jobs N, stdout and stderr hashed: the same bytes
         and exit code, or the benchmark fails (not timed);
  time   each command as a fresh ``kdump`` process with its output to /dev/null, --jobs 1 and --jobs N in
         turn (--repeat pairs, so both see the same machine), wall seconds and CPU seconds (user + system of
         the process and its workers, from wait4).

It prints the best wall and CPU seconds of each, the speed-up (best wall of --jobs 1 / best of --jobs N, and
the median of the pairs' ratios) and the load average before each command: the speed-up can be no more than
the CPUs this process may use, and on a machine shared with other work it is lower.

    python benchmarks/bench_split.py [--size-mib 1024] [--jobs 2] [--repeat 3] [--commands print,verify-deep]

KDUMP_SPLIT_BYTES=N in the environment sets the size of the ranges (default kdump.log.segment.SPLIT_BYTES).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from typing import IO

from kdump.cli.parallel import available_cpus, split_bytes
from kdump.format.crc import crc32c
from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump.log.logdir import SegmentFiles
from kdump.log.ranges import batch_ranges
from kdump.log.segment import ReadOnlyFile
from kdump.log.writer import LogConfig, PartitionLog

COMMANDS = {"print": ["--print-data-log", "--files"], "verify-deep": ["verify", "--deep"],
            "verify-index-deep": ["verify-index", "--deep"]}
RECORDS = 372
T0 = 1_647_327_649_746
_TEMPLATES = 27                      # 27 x 372 records: the keys and values cycle through 10,000 numbers
_BASE_OFFSET = struct.Struct(">q")   # at 0, outside the CRC
_TIMESTAMPS = struct.Struct(">qq")   # baseTimestamp, maxTimestamp: at 27, inside it
_CRC = struct.Struct(">I")           # at 17, over the bytes from 21 (attributes) on


def _templates() -> list[bytes]:
    """Batches at offset 0 whose records are those of batches 0..26 of bench_dump.py's segment."""
    out = []
    for t in range(_TEMPLATES):
        first = t * RECORDS
        records = [Record(i, T0 + i // 70, b"key-key-key%04d" % ((first + i) % 10000),
                          b"value-value-value%04d" % ((first + i) % 10000)) for i in range(RECORDS)]
        out.append(encode_batch_v2(records, base_offset=0, partition_leader_epoch=1))
    return out


def generate(directory: str, size_mib: int) -> str:
    """One segment of about ``size_mib`` MiB with its indexes; returns the .log's path. Each batch is a template
    with its base offset and timestamps set (and its CRC computed again): the writer's work, not the encoder's."""
    templates = _templates()
    offset, ts, written = 0, T0, 0
    config = LogConfig(segment_bytes=max(size_mib << 20, 1 << 20) + (1 << 20))
    with PartitionLog(directory, config) as log:
        while written < size_mib << 20:
            chunk = []
            for _ in range(64):
                batch = bytearray(templates[(offset // RECORDS) % _TEMPLATES])
                _BASE_OFFSET.pack_into(batch, 0, offset)
                _TIMESTAMPS.pack_into(batch, 27, ts, ts + (RECORDS - 1) // 70)
                _CRC.pack_into(batch, 17, crc32c(memoryview(batch)[21:]))
                chunk.append(batch)
                offset += RECORDS
                ts += 6
            data = b"".join(chunk)
            log.append(data)
            written += len(data)
    return os.path.join(directory, "00000000000000000000.log")


def kdump(args: list[str], jobs: int, out: int | IO[bytes] = subprocess.DEVNULL,
          err: int | IO[bytes] = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "kdump", *args, "--jobs", str(jobs)], stdout=out, stderr=err)


def digest(args: list[str], jobs: int) -> tuple[str, int]:
    """The hash of what ``kdump ARGS --jobs N`` writes (stdout, then stderr), and its exit code."""
    with tempfile.TemporaryFile() as err:
        proc = kdump(args, jobs, subprocess.PIPE, err)
        assert proc.stdout is not None
        hashed = hashlib.sha256()
        while chunk := proc.stdout.read(1 << 20):
            hashed.update(chunk)
        code = proc.wait()
        err.seek(0)
        hashed.update(b"--stderr--" + err.read())
    return hashed.hexdigest(), code


def timed(args: list[str], jobs: int) -> tuple[float, float, int]:
    """Wall and CPU seconds (the process and the workers it reaped) of one run, and its exit code."""
    start = time.perf_counter()
    proc = kdump(args, jobs)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--commands", default="print,verify-deep")
    parser.add_argument("--dir", help="where to write (default: a temporary directory, removed after)")
    opts = parser.parse_args()
    root = opts.dir or tempfile.mkdtemp(prefix="kdump-bench-split-")
    try:
        start = time.perf_counter()
        log = generate(os.path.join(root, "bench-0"), opts.size_mib)
        with ReadOnlyFile(log) as segment:
            index = log.removesuffix(".log") + ".index"
            ranges = sum(1 for _ in batch_ranges(SegmentFiles(0, log, index), segment, split_bytes()))
        print(f"segment: {segment.size / 2**20:.0f} MiB of ~16 KiB batches (--jobs: {ranges} ranges of "
              f"{split_bytes() / 2**20:.0f} MiB), written in {time.perf_counter() - start:.1f} s; CPUs available: "
              f"{available_cpus()}")
        print(f"{'command':<18} {'jobs':>4} {'wall s':>7} {'CPU s':>7} {'load':>5}   speed-up")
        for name in opts.commands.split(","):
            args = [*COMMANDS[name], log]
            one, many = digest(args, 1), digest(args, opts.jobs)
            if one != many:
                raise SystemExit(f"{name}: --jobs {opts.jobs} wrote other bytes or exit code than --jobs 1")
            load = os.getloadavg()[0]
            runs: dict[int, list[tuple[float, float, int]]] = {1: [], opts.jobs: []}
            for _ in range(opts.repeat):
                for jobs in (1, opts.jobs):
                    runs[jobs].append(timed(args, jobs))
            ratios = [a[0] / b[0] for a, b in zip(runs[1], runs[opts.jobs], strict=True)]
            for jobs in (1, opts.jobs):
                wall = min(r[0] for r in runs[jobs])
                cpu = min(r[1] for r in runs[jobs])
                speed = "" if jobs == 1 else (f"{min(r[0] for r in runs[1]) / wall:.2f}x best, "
                                              f"{statistics.median(ratios):.2f}x median of pairs")
                print(f"{name:<18} {jobs:>4} {wall:>7.2f} {cpu:>7.2f} {load:>5.2f}   {speed}")
            print(f"{'':<18} same bytes (sha256 {one[0][:16]}), exit code {one[1]}")
    finally:
        if not opts.dir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
