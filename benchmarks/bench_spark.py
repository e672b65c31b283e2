"""Spark `kafka-log` throughput: local[1] vs local[2], and per core vs kdump's single-process decode.

    /work/venv/bin/python benchmarks/bench_spark.py                # 1 GiB log.dirs (default)
    /work/venv/bin/python benchmarks/bench_spark.py --size-mib 256 --keep /tmp/bench-logs

Data: ``--partitions`` partition dirs of v2 batches shaped like a real producer's (~16 KiB,
15-byte keys, 21-byte values, uncompressed), segments of ``--segment-mib``, a .index entry per
batch. One batch is encoded with kdump's encoder and copied with a new baseOffset (the baseOffset
is not covered by the CRC), so generating 1 GiB takes seconds, not minutes.

Each Spark run happens in a fresh process (a session's master is fixed) and times a ``noop`` write
of the whole DataFrame, which builds every column of every row; session start-up is excluded.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kdump.format.encode import encode_batch_v2
from kdump.format.index import encode_offset_entry, encode_time_entry
from kdump.format.records import Record
from kdump.log.files import segment_file_name

RECORDS_PER_BATCH = 360


def template_batch() -> bytes:
    records = [Record(i, 1_700_000_000_000 + i, f"key-{i:011d}".encode(), f"value-{i:015d}".encode())
               for i in range(RECORDS_PER_BATCH)]
    return encode_batch_v2(records, base_offset=0)


def generate(root: Path, size_mib: int, partitions: int, segment_mib: int) -> int:
    """Write the log.dirs; returns the number of records."""
    batch = template_batch()
    per_partition = size_mib * 1024 * 1024 // partitions
    per_segment = segment_mib * 1024 * 1024
    total = 0
    for p in range(partitions):
        pdir = root / f"bench-{p}"
        pdir.mkdir(parents=True, exist_ok=True)
        offset, written = 0, 0
        while written + len(batch) <= per_partition:
            base = offset
            chunks, index, timeindex = [], [], []
            size = 0
            while size + len(batch) <= per_segment and written + len(batch) <= per_partition:
                chunks.append(struct.pack(">q", offset) + batch[8:])
                index.append(encode_offset_entry(base, offset + RECORDS_PER_BATCH - 1, size))
                size += len(batch)
                written += len(batch)
                offset += RECORDS_PER_BATCH
            timeindex.append(encode_time_entry(base, 1_700_000_000_000 + RECORDS_PER_BATCH - 1, offset - 1))
            (pdir / segment_file_name(base, ".log")).write_bytes(b"".join(chunks))
            (pdir / segment_file_name(base, ".index")).write_bytes(b"".join(index))
            (pdir / segment_file_name(base, ".timeindex")).write_bytes(b"".join(timeindex))
        total += offset
    return total


def single_process(root: Path) -> dict[str, float]:
    """kdump's own decode (scan + decode_records over mmap), and the Arrow reader, in this process."""
    from kdump.log.batches import LogBatches
    from kdump.log.logdir import walk_partitions
    from kdump.log.segment import ReadOnlyFile
    from kdump.spark.planning import plan
    from kdump.spark.reading import read_split

    start = time.perf_counter()
    records = 0
    for pdir in walk_partitions(str(root)):
        for seg in pdir.segments:
            with ReadOnlyFile(seg.log) as log:  # type: ignore[arg-type]
                batches = LogBatches(log)
                for b in batches:
                    records += len(batches.records(b))
    decode = time.perf_counter() - start
    start = time.perf_counter()
    rows = sum(b.num_rows for s in plan([str(root)]) for b in read_split(s))
    arrow = time.perf_counter() - start
    assert rows == records
    return {"records": records, "decode_s": decode, "decode_rps": records / decode,
            "arrow_s": arrow, "arrow_rps": rows / arrow}


def spark_run(root: Path, master: str, split_bytes: str) -> dict[str, float]:
    """Run in a child process: time one full read of the log.dirs on ``master``."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    out = subprocess.run([sys.executable, __file__, "--child", master, "--split-bytes", split_bytes, str(root)],
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def child(root: str, master: str, split_bytes: str) -> None:
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(master).config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.read.format("kafka-log").option("splitBytes", split_bytes).load(root)
    partitions = df.rdd.getNumPartitions()
    start = time.perf_counter()
    df.write.format("noop").mode("overwrite").save()
    elapsed = time.perf_counter() - start
    spark.stop()
    print(json.dumps({"master": master, "seconds": elapsed, "partitions": partitions}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--size-mib", type=int, default=1024, help="size of the generated log.dirs (1024)")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--segment-mib", type=int, default=128)
    parser.add_argument("--split-bytes", default="64m", help="the data source's splitBytes option (64m)")
    parser.add_argument("--keep", help="generate into (or reuse) this directory instead of a temporary one")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.root, args.child, args.split_bytes)
        return
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kdump-bench-")) / "logs"
    if not root.exists():
        start = time.perf_counter()
        generate(root, args.size_mib, args.partitions, args.segment_mib)
        print(f"generated {args.size_mib} MiB in {time.perf_counter() - start:.1f} s: {root}")
    base = single_process(root)
    n = base["records"]
    print(f"records: {n:,}")
    print(f"kdump single process, decode only:      {base['decode_rps'] / 1e6:5.2f} M records/s "
          f"({base['decode_s']:.1f} s)")
    print(f"kdump single process, Arrow rows:       {base['arrow_rps'] / 1e6:5.2f} M records/s "
          f"({base['arrow_s']:.1f} s)")
    results = {}
    for master, cores in (("local[1]", 1), ("local[2]", 2)):
        r = spark_run(root, master, args.split_bytes)
        results[master] = r
        rps = n / r["seconds"]
        print(f"spark {master}: {r['partitions']} partitions, {r['seconds']:.1f} s, {rps / 1e6:5.2f} M records/s, "
              f"{rps / cores / 1e6:5.2f} M records/s per core "
              f"({rps / cores / base['decode_rps']:.2f}x single-process decode)")
    speedup = results["local[1]"]["seconds"] / results["local[2]"]["seconds"]
    print(f"speed-up local[2] vs local[1]: {speedup:.2f}x")


if __name__ == "__main__":
    main()
