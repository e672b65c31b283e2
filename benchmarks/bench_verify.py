"""``kdump verify`` and ``verify-index`` speed against plain LogBatches scans of the same logs.

Generates a log.dirs tree of about --size-mib MiB (--partitions partitions, v2 batches of
--batch-kib KiB, segments rolled at --segment-mib MiB, indexes by the broker's rules via
kdump.log.writer), then times (process CPU time, best of --repeat runs, warm page cache), in one run:

  shallow scan:     for every .log, ReadOnlyFile + LogBatches(check_crc=False) (framing only)
  shallow scan+CRC: the same with check_crc=True (what a CRC check cannot do with less)
  verify-index:     run_verify, index rules (what `kdump verify-index` runs)
  verify:           run_verify, every rule (what `kdump verify` runs)
  verify --deep:    the same, decoding every record

    python benchmarks/bench_verify.py --size-mib 1024
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

from click.testing import CliRunner

from kdump.cli.main import cli
from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump.log.batches import LogBatches
from kdump.log.logdir import walk_partitions
from kdump.log.segment import ReadOnlyFile
from kdump.log.writer import LogConfig, PartitionLog
from kdump.verify.engine import ALL, INDEX

T0 = 1_700_000_000_000


def generate(root: str, size_mib: int, batch_kib: int, segment_mib: int, partitions: int) -> int:
    per_partition = size_mib * 1024 * 1024 // partitions
    records_per_batch = 8
    value = b"v" * max(1, batch_kib * 1024 // records_per_batch - 40)
    total = 0
    for p in range(partitions):
        config = LogConfig(segment_bytes=segment_mib * 1024 * 1024)
        with PartitionLog(os.path.join(root, f"bench-{p}"), config) as log:
            offset, ts, written = 0, T0, 0
            while written < per_partition:
                recs = [Record(offset + i, ts + i, b"key-%d" % (offset + i), value) for i in range(records_per_batch)]
                data = encode_batch_v2(recs, base_offset=offset)
                log.append(data)
                offset += records_per_batch
                ts += records_per_batch
                written += len(data)
        total += written
    return total


def scan(root: str, check_crc: bool) -> int:
    batches = 0
    for partition in walk_partitions(root):
        for seg in partition.segments:
            if seg.log is None:
                continue
            with ReadOnlyFile(seg.log) as log:
                for _ in LogBatches(log, check_crc=check_crc):
                    batches += 1
    return batches


def run_engine(root: str, scope: str, deep: bool = False) -> int:
    """``kdump verify`` (``verify-index`` with ``scope=INDEX``) run in this process: its exit status."""
    command = ["verify-index" if scope == INDEX else "verify", "--errors-only", "--jobs", "1", root]
    return CliRunner().invoke(cli, command + (["--deep"] if deep else [])).exit_code


def best_of(repeat: int, func, root: str) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    best, result = float("inf"), 0
    for _ in range(repeat):
        start = time.process_time()   # CPU time: the machine is shared, wall time swings with its load
        result = func(root)
        best = min(best, time.process_time() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--batch-kib", type=int, default=16)
    parser.add_argument("--segment-mib", type=int, default=128)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", help="where to generate (default: a temporary directory, removed after)")
    args = parser.parse_args()
    root = args.dir or tempfile.mkdtemp(prefix="kdump-bench-verify-")
    try:
        start = time.perf_counter()
        size = generate(root, args.size_mib, args.batch_kib, args.segment_mib, args.partitions)
        print(f"generated {size / 2**20:.0f} MiB in {time.perf_counter() - start:.1f} s under {root}")
        runs = [("shallow scan", lambda r: scan(r, False), "batches"),
                ("shallow scan+CRC", lambda r: scan(r, True), "batches"),
                ("verify-index", lambda r: run_engine(r, INDEX), "exit status"),
                ("verify", lambda r: run_engine(r, ALL), "exit status"),
                ("verify --deep", lambda r: run_engine(r, ALL, True), "exit status")]
        times = {}
        for name, func, what in runs:
            elapsed, result = best_of(args.repeat, func, root)
            times[name] = elapsed
            print(f"{name:<19}: {elapsed:.3f} CPU s ({result} {what}, {size / 2**20 / elapsed:.0f} MiB per CPU s)")
        for name in ("verify-index", "verify", "verify --deep"):
            print(f"{name + ' ratio':<19}: {times[name] / times['shallow scan']:.2f}x the shallow scan, "
                  f"{times[name] / times['shallow scan+CRC']:.2f}x the scan with CRC")
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
