"""``kdump replicas`` over three replicas against a plain scan of the same files: bytes read and time.

Generates three brokers' replicas of one partition, --size-mib MiB each (default 1024), with
``kdump gen --brokers 3 --replica-scenario unclean`` (kdump.gen.cluster_generator: batches of
--records-per-batch records of --value-bytes bytes, about 16 KiB like a producer's default
batch.size, segments of 1 GiB), then times (wall clock, best of --repeat; warm page cache, or with
--cold each run after the logs' pages were dropped with posix_fadvise DONTNEED):

  plain read:     every .log read whole, 1 MiB at a time (the bytes any full comparison reads)
  header scan:    LogBatches(check_crc=False) over every .log (what a framing-only walk reads)
  loader's CRCs:  LogBatches(check_crc=True) over broker 1's .log files: what its loader reads to recover
                  them (the scenario stops broker 1 uncleanly with its recovery point at 0, so LogSegment.recover
                  reads every batch of it whole; brokers 2 and 3 stop cleanly and load from headers)
  kdump replicas: the whole analysis (each replica loaded as its broker's loader leaves it, pairwise
                  divergence of the loaded logs, truncation and loss); "MiB read" counts the header walks
                  (kdump.log.headers.ReadCounter), not the loader's recovery reads, which its time includes

    python benchmarks/bench_replicas.py --size-mib 1024
    python benchmarks/bench_replicas.py --size-mib 64 --cold   # a quick run, reading the disk
    python benchmarks/bench_replicas.py --records-per-batch 16 --value-bytes 1000   # same batch size,
                                                                # generated about 6 times faster
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable

from kdump.broker.replica_report import ReplicasOptions, analyze
from kdump.gen.cluster_generator import ClusterGenSpec, generate_cluster
from kdump.log.batches import LogBatches
from kdump.log.headers import ReadCounter
from kdump.log.segment import ReadOnlyFile
from kdump.log.writer import LogConfig


def logs(root: str) -> list[str]:
    return sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files
                  if f.endswith(".log") and "__cluster_metadata" not in d)


def plain_read(root: str) -> int:
    total = 0
    buf = bytearray(1 << 20)
    for path in logs(root):
        with open(path, "rb", buffering=0) as fh:
            while n := fh.readinto(buf):
                total += n
    return total


def header_scan(root: str) -> int:
    total = 0
    for path in logs(root):
        with ReadOnlyFile(path) as f:
            for _ in LogBatches(f, check_crc=False):
                pass
            total += f.size
    return total


def loader_crcs(root: str) -> int:
    total = 0
    for path in logs(os.path.join(root, "broker-1")):
        with ReadOnlyFile(path) as f:
            for _ in LogBatches(f, check_crc=True):
                pass
            total += f.size
    return total


def replicas(root: str) -> int:
    counter = ReadCounter()
    for report in analyze([root], ReplicasOptions(), counter):
        assert report.verdict == "data-loss", report.verdict
    return counter.bytes_read


def drop_cache(root: str) -> None:
    """Ask the kernel to forget the logs' pages (POSIX_FADV_DONTNEED), so the next run reads the disk."""
    for path in logs(root):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def best(func: Callable[[str], int], root: str, repeat: int, cold: bool) -> tuple[float, float, int]:
    """The best wall clock and CPU seconds of ``repeat`` runs (CPU time too: on a shared machine the wall
    clock mostly measures the other processes), and the bytes the last run read."""
    times, cpu = [], []
    result = 0
    for _ in range(repeat):
        if cold:
            drop_cache(root)
        start, start_cpu = time.perf_counter(), time.process_time()
        result = func(root)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return min(times), min(cpu), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=1024, help="MiB per replica (default 1024)")
    parser.add_argument("--records-per-batch", type=int, default=100)
    parser.add_argument("--value-bytes", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="drop the logs from the page cache before each run")
    parser.add_argument("--dir", default=None, help="where to generate (default: a temporary directory)")
    args = parser.parse_args()
    record_bytes = args.value_bytes + 20
    records = max(8, args.size_mib * 1024 * 1024 // record_bytes * 4 // 5)   # the unclean scenario adds R/4
    parent = tempfile.mkdtemp(prefix="bench-replicas-", dir=args.dir)
    root = os.path.join(parent, "cluster")
    try:
        start = time.perf_counter()
        spec = ClusterGenSpec("bench", 3, 1, "unclean", records, args.records_per_batch, args.value_bytes,
                              log=LogConfig(segment_bytes=1 << 30))
        result = generate_cluster(root, spec)
        print(f"generated 3 replicas, {result.bytes_written / 2**20:.0f} MiB in all, "
              f"in {time.perf_counter() - start:.1f} s")
        for name, func in (("plain read", plain_read), ("header scan", header_scan), ("loader's CRCs", loader_crcs),
                           ("kdump replicas", replicas)):
            seconds, cpu, read = best(func, root, args.repeat, args.cold)
            print(f"{name:15s} {seconds:8.3f} s  {cpu:8.3f} s CPU  {read / 2**20:10.2f} MiB read")
        print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    finally:
        shutil.rmtree(parent, ignore_errors=True)


if __name__ == "__main__":
    main()
