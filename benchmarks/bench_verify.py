"""verify-index speed against a plain shallow scan of the same logs (issue #4: within 2x).

Generates a log.dirs tree of about --size-mib MiB (two topics' partitions, v2 batches of
--batch-kib KiB, segments rolled at --segment-mib MiB, indexes by the broker's rules via
kdump.log.writer), then times, best of --repeat runs with a warm page cache:

  baseline: for every .log, ReadOnlyFile + kdump.log.batches.LogBatches(check_crc=False)
  verify:   kdump.verify.index_checks.verify_segment for every segment (what `kdump verify-index` runs)

    python benchmarks/bench_verify.py --size-mib 1024
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump.log.logdir import walk_partitions
from kdump.log.batches import LogBatches
from kdump.log.segment import ReadOnlyFile
from kdump.log.writer import LogConfig, PartitionLog
from kdump.verify.index_checks import verify_segment

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


def baseline(root: str) -> int:
    batches = 0
    for partition in walk_partitions(root):
        for seg in partition.segments:
            if seg.log is None:
                continue
            with ReadOnlyFile(seg.log) as log:
                for _ in LogBatches(log, check_crc=False):
                    batches += 1
    return batches


def verify(root: str) -> int:
    findings = 0
    for partition in walk_partitions(root):
        for i, seg in enumerate(partition.segments):
            findings += sum(1 for f in verify_segment(seg, active=i == len(partition.segments) - 1) if f.is_error)
    return findings


def best_of(repeat: int, func, root: str) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    best, result = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        result = func(root)
        best = min(best, time.perf_counter() - start)
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
        base_t, batches = best_of(args.repeat, baseline, root)
        verify_t, errors = best_of(args.repeat, verify, root)
        print(f"shallow scan : {base_t:.3f} s ({batches} batches, {size / 2**20 / base_t:.0f} MiB/s)")
        print(f"verify-index : {verify_t:.3f} s ({errors} errors)")
        print(f"ratio        : {verify_t / base_t:.2f}x (goal: <= 2x)")
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
