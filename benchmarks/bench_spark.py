"""Spark `kafka-log` throughput: local[1] vs local[2], and per core vs kdump's single-process decode.

    /work/venv/bin/python benchmarks/bench_spark.py                # 1 GiB log.dirs (default)
    /work/venv/bin/python benchmarks/bench_spark.py --size-mib 256 --keep /tmp/bench-logs

Data: ``--partitions`` partition dirs of v2 batches shaped like a real producer's (~16 KiB,
15-byte keys, 21-byte values, uncompressed), segments of ``--segment-mib``, a .index entry per
batch. One batch is encoded with kdump's encoder and copied with a new baseOffset (the baseOffset
is not covered by the CRC), so generating 1 GiB takes seconds, not minutes.

Each master runs in a fresh process (a session's master is fixed): after one warm-up count (JIT,
Python workers, page cache) it times each action ``--repeat`` times and reports medians, in wall
seconds and in CPU seconds of the JVM and its Python workers (read from /proc). Per core, Spark is
compared with kdump's single-process decode in records per CPU second: on a shared machine that
holds from run to run where wall time does not. The ``identity`` action is a data source that
decodes nothing and yields the same pre-built Arrow batch of the full schema: what the Python data
source boundary and Spark's Arrow-to-row conversion cost by themselves.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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
    """kdump's own decode (records to tuples, the CLI's deep iteration) and the Arrow reader, in this process.

    Both are timed in CPU seconds as well as wall seconds: on a shared machine CPU time is the
    figure that holds from run to run.
    """
    from kdump.log.batches import LogBatches
    from kdump.log.logdir import walk_partitions
    from kdump.log.segment import ReadOnlyFile
    from kdump.spark.planning import plan
    from kdump.spark.reading import read_split

    start, cpu = time.perf_counter(), time.process_time()
    records = 0
    for pdir in walk_partitions(str(root)):
        for seg in pdir.segments:
            with ReadOnlyFile(seg.log) as log:  # type: ignore[arg-type]
                batches = LogBatches(log)
                for b in batches:
                    records += len(batches.records(b))
    decode, decode_cpu = time.perf_counter() - start, time.process_time() - cpu
    start, cpu = time.perf_counter(), time.process_time()
    rows = sum(b.num_rows for s in plan([str(root)]) for b in read_split(s))
    arrow, arrow_cpu = time.perf_counter() - start, time.process_time() - cpu
    assert rows == records
    return {"records": records, "decode_s": decode, "decode_cpu": decode_cpu,
            "arrow_s": arrow, "arrow_cpu": arrow_cpu}


# ---- Spark, in a child process per master -------------------------------------------------------

ACTIONS = {
    "count": "df.count(), the full schema",
    "noop": "noop write of the full schema (every column materialised)",
    "narrow": "count() with .schema('offset long')",
    "identity": "count() of a Python data source yielding pre-built Arrow batches of the full schema",
}


def spark_run(root: Path, master: str, split_bytes: str, repeat: int, actions: list[str]) -> dict[str, list[dict]]:
    """Run in a child process (a session's master is fixed): each action ``repeat`` times."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    out = subprocess.run([sys.executable, __file__, "--child", master, "--split-bytes", split_bytes,
                          "--repeat", str(repeat), "--actions", ",".join(actions), str(root)],
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _tree_cpu_seconds() -> tuple[float, float]:
    """CPU seconds (user+system, with reaped children) of this process's descendants: (JVM, Python workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    procs: dict[int, tuple[int, str, float]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                comm = (entry / "comm").read_text().strip()
            except OSError:
                continue
            procs[int(entry.name)] = (int(fields[1]), comm, sum(int(x) for x in fields[11:15]) / tick)
    jvm = python = 0.0
    todo = [os.getpid()]
    while todo:
        parent = todo.pop()
        for pid, (ppid, comm, cpu) in procs.items():
            if ppid == parent:
                if comm == "java":
                    jvm += cpu
                else:
                    python += cpu
                todo.append(pid)
    return jvm, python


def identity_source(template: object, rows: int, tasks: int) -> type:
    """A data source whose tasks yield one pre-built Arrow batch again and again: the boundary's own cost."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    from kdump.spark.schema import spark_schema

    class Reader(DataSourceReader):
        def partitions(self) -> list[InputPartition]:
            return [InputPartition(i) for i in range(tasks)]

        def read(self, partition: InputPartition):  # type: ignore[no-untyped-def]
            share = rows // tasks + (1 if partition.value < rows % tasks else 0)
            batch = template
            while share > 0:
                out = batch if share >= batch.num_rows else batch.slice(0, share)  # type: ignore[attr-defined]
                share -= out.num_rows
                yield out

    class Identity(DataSource):
        @classmethod
        def name(cls) -> str:
            return "kdump-bench-identity"

        def schema(self):  # type: ignore[no-untyped-def]
            return spark_schema("record")

        def reader(self, schema):  # type: ignore[no-untyped-def]
            return Reader()

    return Identity


def child(root: str, master: str, split_bytes: str, repeat: int, actions: list[str]) -> None:
    from pyspark.sql import SparkSession

    from kdump.spark.planning import plan
    from kdump.spark.reading import read_split

    spark = (SparkSession.builder.master(master).config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.read.format("kafka-log").option("splitBytes", split_bytes).load(root)
    partitions = df.rdd.getNumPartitions()
    rows = df.count()                                      # warm-up: JIT, Python workers, page cache
    template = next(read_split(plan([root])[0]))
    spark.dataSource.register(identity_source(template, rows, partitions))
    runs = {
        "count": df.count,
        "noop": lambda: df.write.format("noop").mode("overwrite").save(),
        "narrow": lambda: spark.read.format("kafka-log").option("splitBytes", split_bytes)
                                    .schema("offset long").load(root).count(),
        "identity": lambda: spark.read.format("kdump-bench-identity").load().count(),
    }
    results: dict[str, list[dict]] = {}
    for _ in range(repeat):
        for action in actions:
            jvm0, py0 = _tree_cpu_seconds()
            start = time.perf_counter()
            runs[action]()
            elapsed = time.perf_counter() - start
            jvm1, py1 = _tree_cpu_seconds()
            results.setdefault(action, []).append({"seconds": elapsed, "jvm_cpu": jvm1 - jvm0,
                                                   "python_cpu": py1 - py0})
    spark.stop()
    print(json.dumps({"partitions": partitions, "rows": rows, "runs": results}))


def _median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--size-mib", type=int, default=1024, help="size of the generated log.dirs (1024)")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--segment-mib", type=int, default=128)
    parser.add_argument("--split-bytes", default="64m", help="the data source's splitBytes option (64m)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each Spark action; medians are reported (3)")
    parser.add_argument("--actions", default=",".join(ACTIONS), help=f"comma-separated, of: {', '.join(ACTIONS)}")
    parser.add_argument("--masters", default="local[1],local[2]")
    parser.add_argument("--keep", help="generate into (or reuse) this directory instead of a temporary one")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    actions = args.actions.split(",")
    if args.child:
        child(args.root, args.child, args.split_bytes, args.repeat, actions)
        return
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kdump-bench-")) / "logs"
    if not root.exists():
        start = time.perf_counter()
        generate(root, args.size_mib, args.partitions, args.segment_mib)
        print(f"generated {args.size_mib} MiB in {time.perf_counter() - start:.1f} s: {root}")
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          f"(shared machine: CPU seconds are the steady figure)")
    base = single_process(root)
    n = base["records"]
    per_cpu = n / base["decode_cpu"]
    print(f"records: {n:,}")
    print(f"kdump single process, decode only: {n / base['decode_s'] / 1e6:5.2f} M records/s wall, "
          f"{per_cpu / 1e6:5.2f} M per CPU-s")
    print(f"kdump single process, Arrow rows:  {n / base['arrow_s'] / 1e6:5.2f} M records/s wall, "
          f"{n / base['arrow_cpu'] / 1e6:5.2f} M per CPU-s")
    walls: dict[str, dict[str, float]] = {}
    for master in args.masters.split(","):
        cores = int(master[master.index("[") + 1:-1])
        r = spark_run(root, master, args.split_bytes, args.repeat, actions)
        print(f"spark {master}: {r['partitions']} partitions, medians of {args.repeat} runs")
        for action in actions:
            runs = r["runs"][action]
            wall = _median([x["seconds"] for x in runs])
            jvm = _median([x["jvm_cpu"] for x in runs])
            python = _median([x["python_cpu"] for x in runs])
            walls.setdefault(action, {})[master] = wall
            rate = n / (jvm + python)
            print(f"  {action:8} {wall:6.1f} s wall ({n / wall / cores / 1e6:5.2f} M records/s per core), "
                  f"CPU {jvm:5.1f} s JVM + {python:5.1f} s Python = {rate / 1e6:5.2f} M records per CPU-s "
                  f"({rate / per_cpu:.2f}x single-process decode)")
    masters = args.masters.split(",")
    if len(masters) == 2:
        for action in actions:
            w = walls[action]
            print(f"speed-up {masters[1]} vs {masters[0]}, {action}: {w[masters[0]] / w[masters[1]]:.2f}x wall")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
