"""Spark `kafka-log` throughput: local[1] vs local[2], and per core vs kdump's single-process decode.

    /work/venv/bin/python benchmarks/bench_spark.py                # 1 GiB log.dirs (default)
    /work/venv/bin/python benchmarks/bench_spark.py --size-mib 256 --keep /tmp/bench-logs

Data: ``--partitions`` partition dirs of v2 batches shaped like a real producer's (~16 KiB,
15-byte keys, 21-byte values, uncompressed), segments of ``--segment-mib``, a .index entry per
batch. One batch is encoded with kdump's encoder and copied with a new baseOffset (the baseOffset
is not covered by the CRC), so generating 1 GiB takes seconds, not minutes.

Each master runs in fresh processes (a session's master is fixed), with the session `kdump spark`
starts (``kdump.cli.spark.SessionSettings``: its JVM options for a local driver, in-task actions in
a session started for in-task work, the others in one for rows): after one warm-up count (JIT,
Python workers, page cache) it times each action ``--repeat`` times and reports medians, in wall
seconds and in CPU seconds of the JVM and its Python workers (read from /proc). Per core, Spark is
compared with kdump's single-process decode in records per CPU second: on a shared machine that
holds from run to run where wall time does not. The ``identity`` action is a data source that
decodes nothing and yields the same pre-built Arrow batch of the full schema: what the Python data
source boundary and Spark's Arrow-to-row conversion cost by themselves.

Exports (``--exports``, on by default): the in-task Parquet export (``kdump spark export``'s
default), the DataFrame-path export (Spark's Parquet writer) and a ``level=batch`` count and export,
each also run on a tiny log.dirs in the same session, so the figure is the export's own work beyond
Spark's fixed cost per job; and single-process ``kdump export --jobs 1`` the same way (its CPU from
``wait4``, beyond its own run on the tiny input). pyspark's daemon ignores SIGCHLD, so Python
workers that exit are reaped without adding to anyone's ``wait4`` totals: every descendant of the
Spark child is sampled from /proc while an action runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

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
    from kdump.arrow.planning import plan
    from kdump.arrow.reading import read_split
    from kdump.log.batches import LogBatches
    from kdump.log.logdir import walk_partitions
    from kdump.log.segment import ReadOnlyFile

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
    "identity_noop": "noop write of that data source: the ceiling of `noop` (no decoding, every row materialised)",
    "export_tasks": "kdump spark export to Parquet, files written in the tasks (the default)",
    "export_frame": "the same export through the DataFrame path (Spark's Parquet writer)",
    "batch_count": "count() at level=batch (batch headers only, no record decoding)",
    "batch_export": "in-task export at level=batch",
}
EXPORTS = ("export_tasks", "export_frame", "batch_count", "batch_export")
# Actions compared with `kdump export --jobs 1` per CPU-second beyond their run on the tiny input (issue 34:
# the DataFrame read, measured with Spark's noop sink, against the CLI export; identity_noop its ceiling).
VERSUS_CLI = (*EXPORTS, "noop", "identity_noop")
# Actions whose rows never cross into the JVM: kdump starts their session as `kdump spark export`
# does for Parquet (kdump.spark.driver_jvm: the parallel collector, C1 only), the others as for a DataFrame.
IN_TASKS = ("export_tasks", "batch_export")


def spark_run(root: Path, master: str, split_bytes: str, repeat: int, actions: list[str],
              tiny: Path) -> dict[str, Any]:
    """Run in child processes (a session's master and JVM options are fixed): each action ``repeat``
    times, the in-task actions in a session started for in-task work, the others in one for rows."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    merged: dict[str, Any] = {"runs": {}}
    for role, group in (("rows", [a for a in actions if a not in IN_TASKS]),
                        ("tasks", [a for a in actions if a in IN_TASKS])):
        if not group:
            continue
        out = subprocess.run([sys.executable, __file__, "--child", master, "--role", role,
                              "--split-bytes", split_bytes, "--repeat", str(repeat), "--actions", ",".join(group),
                              "--tiny", str(tiny), str(root)], env=env, capture_output=True, text=True)
        if out.returncode:
            raise SystemExit(f"spark {master} failed:\n{out.stderr[-3000:]}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        merged["runs"].update(result.pop("runs"))
        merged.update(result)
    return merged


def _descendants() -> dict[int, tuple[str, float]]:
    """pid -> (comm, CPU seconds with reaped children) of every living descendant of this process."""
    procs = _processes()
    found: dict[int, tuple[str, float]] = {}
    todo = [os.getpid()]
    while todo:
        parent = todo.pop()
        for pid, (ppid, comm, cpu) in procs.items():
            if ppid == parent:
                found[pid] = (comm, cpu)
                todo.append(pid)
    return found


class TreeSampler:
    """CPU of this process's descendants over a block, sampled every ``interval`` s from /proc, so
    workers that start and exit inside the block count too (up to their last sample)."""

    def __init__(self, interval: float = 0.25) -> None:
        self.interval = interval
        self.start = _descendants()
        self.last = dict(self.start)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.last.update(_descendants())

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.last.update(_descendants())

    def cpu(self) -> tuple[float, float]:
        """(JVM, Python) CPU seconds spent inside the block."""
        jvm = python = 0.0
        for pid, (comm, cpu) in self.last.items():
            spent = cpu - self.start.get(pid, (comm, 0.0))[1]
            if comm == "java":
                jvm += spent
            else:
                python += spent
        return jvm, python


def _processes() -> dict[int, tuple[int, str, float]]:
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
    return procs


def identity_source(template: object, tasks: int) -> type:
    """A data source whose tasks yield one pre-built Arrow batch again and again, ``rows`` rows in all (an
    option): the boundary's own cost."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    from kdump.spark.schema import spark_schema

    class Reader(DataSourceReader):
        def __init__(self, rows: int) -> None:
            self.rows = rows

        def partitions(self) -> list[InputPartition]:
            return [InputPartition(i) for i in range(tasks)]

        def read(self, partition: InputPartition):  # type: ignore[no-untyped-def]
            rows = self.rows
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
            return Reader(int(self.options["rows"]))

    return Identity


def child(root: str, master: str, role: str, split_bytes: str, repeat: int, actions: list[str], tiny: str) -> None:
    from pyspark.sql import SparkSession

    from kdump.arrow.planning import plan
    from kdump.arrow.reading import read_split
    from kdump.cli.spark import SessionSettings
    from kdump.spark.jobs import export_frame, export_in_tasks

    builder = SparkSession.builder.master(master).config("spark.ui.enabled", "false")
    for key, value in SessionSettings(master).config(rows_in_jvm=role == "rows").items():
        builder = builder.config(key, value)             # the session `kdump spark` starts for this work
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.read.format("kafka-log").option("splitBytes", split_bytes).load(root)
    partitions = df.rdd.getNumPartitions()
    counts: dict[str, int] = {}
    if role == "rows":
        counts[root] = df.count()                          # warm-up: JIT, Python workers, page cache
        counts[tiny] = spark.read.format("kafka-log").option("splitBytes", split_bytes).load(tiny).count()
        template = next(read_split(plan([root])[0]))
        spark.dataSource.register(identity_source(template, partitions))
    scratch = tempfile.mkdtemp(prefix="kdump-bench-out-")
    options = {"splitBytes": split_bytes}

    def export(path: str, writer: object, level: str = "record") -> None:
        writer(spark, [path], os.path.join(scratch, "out"), level=level, mode="overwrite",  # type: ignore[operator]
               options=options)
        shutil.rmtree(os.path.join(scratch, "out"))

    def batch_count(path: str) -> None:
        spark.read.format("kafka-log").option("splitBytes", split_bytes).option("level", "batch").load(path).count()

    runs = {
        "count": lambda path: spark.read.format("kafka-log").option("splitBytes", split_bytes).load(path).count(),
        "noop": lambda path: spark.read.format("kafka-log").option("splitBytes", split_bytes).load(path)
                                  .write.format("noop").mode("overwrite").save(),
        "narrow": lambda path: spark.read.format("kafka-log").option("splitBytes", split_bytes)
                                    .schema("offset long").load(path).count(),
        "identity": lambda path: spark.read.format("kdump-bench-identity").option("rows", counts[path]).load().count(),
        "identity_noop": lambda path: (spark.read.format("kdump-bench-identity").option("rows", counts[path]).load()
                                       .write.format("noop").mode("overwrite").save()),
        "export_tasks": lambda path: export(path, export_in_tasks),
        "export_frame": lambda path: export(path, export_frame),
        "batch_count": batch_count,
        "batch_export": lambda path: export(path, export_in_tasks, "batch"),
    }
    for action in actions:                                 # warm-up of each action on the tiny input
        if action in VERSUS_CLI:
            runs[action](tiny)
    results: dict[str, list[dict]] = {}
    for _ in range(repeat):
        for action in actions:
            for name, path in ((action, root), (f"{action}@tiny", tiny)):
                if path == tiny and action not in VERSUS_CLI:
                    continue
                cpu = time.thread_time()           # the driver's own work (not the sampler thread's)
                with TreeSampler() as sampler:
                    start = time.perf_counter()
                    runs[action](path)
                    elapsed = time.perf_counter() - start
                jvm, python = sampler.cpu()
                results.setdefault(name, []).append({"seconds": elapsed, "jvm_cpu": jvm,
                                                     "python_cpu": python + time.thread_time() - cpu})
    spark.stop()
    shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps({"partitions": partitions, "runs": results}))


def cli_export(root: Path, repeat: int) -> dict[str, float]:
    """``kdump export ROOT --jobs 1`` in a child process: median wall and CPU seconds (``wait4``'s)."""
    walls, cpus = [], []
    scratch = Path(tempfile.mkdtemp(prefix="kdump-bench-cli-"))
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "kdump", "export", str(root), "--to", str(scratch / "out"),
                        "--jobs", "1"], check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        shutil.rmtree(scratch / "out")
    shutil.rmtree(scratch)
    return {"seconds": _median(walls), "cpu": _median(cpus)}


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _beyond(runs: dict[str, list[dict]], action: str) -> tuple[float, float, float]:
    """(wall s, JVM CPU-s, Python CPU-s): medians of the action beyond its medians on the tiny input."""
    big, tiny = runs[action], runs[f"{action}@tiny"]
    return tuple(_median([x[k] for x in big]) - _median([x[k] for x in tiny])  # type: ignore[return-value]
                 for k in ("seconds", "jvm_cpu", "python_cpu"))


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
    parser.add_argument("--role", help=argparse.SUPPRESS)
    parser.add_argument("--tiny", help=argparse.SUPPRESS)
    args = parser.parse_args()
    actions = args.actions.split(",")
    if args.child:
        child(args.root, args.child, args.role, args.split_bytes, args.repeat, actions, args.tiny)
        return
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kdump-bench-")) / "logs"
    if not root.exists():
        start = time.perf_counter()
        generate(root, args.size_mib, args.partitions, args.segment_mib)
        print(f"generated {args.size_mib} MiB in {time.perf_counter() - start:.1f} s: {root}")
    tiny = root.parent / f"{root.name}-tiny"
    if not tiny.exists():
        generate(tiny, args.partitions, args.partitions, args.segment_mib)   # 1 MiB a partition
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          f"(shared machine: CPU seconds are the steady figure)")
    base = single_process(root)
    n = base["records"]
    n_tiny = sum(b.num_rows for b in _arrow_rows(tiny))
    per_cpu = n / base["decode_cpu"]
    print(f"records: {n:,} (tiny input: {n_tiny:,})")
    print(f"kdump single process, decode only: {n / base['decode_s'] / 1e6:5.2f} M records/s wall, "
          f"{per_cpu / 1e6:5.2f} M per CPU-s")
    print(f"kdump single process, Arrow rows:  {n / base['arrow_s'] / 1e6:5.2f} M records/s wall, "
          f"{n / base['arrow_cpu'] / 1e6:5.2f} M per CPU-s")
    cli_rate = None
    if any(a in VERSUS_CLI for a in actions):
        big, small = cli_export(root, args.repeat), cli_export(tiny, args.repeat)
        cli_cpu = big["cpu"] - small["cpu"]
        cli_rate = (n - n_tiny) / cli_cpu
        print(f"kdump export --jobs 1 (Parquet): {big['seconds']:5.1f} s wall, {big['cpu']:5.1f} CPU-s; beyond the "
              f"tiny run ({small['cpu']:.1f} CPU-s): {cli_rate / 1e6:5.2f} M records per CPU-s")
    walls: dict[str, dict[str, float]] = {}
    for master in args.masters.split(","):
        cores = int(master[master.index("[") + 1:-1])
        r = spark_run(root, master, args.split_bytes, args.repeat, actions, tiny)
        print(f"spark {master}: {r['partitions']} partitions, medians of {args.repeat} runs")
        for action in actions:
            runs = r["runs"][action]
            wall = _median([x["seconds"] for x in runs])
            jvm = _median([x["jvm_cpu"] for x in runs])
            python = _median([x["python_cpu"] for x in runs])
            walls.setdefault(action, {})[master] = wall
            rate = n / (jvm + python)
            print(f"  {action:12} {wall:6.1f} s wall ({n / wall / cores / 1e6:5.2f} M records/s per core), "
                  f"CPU {jvm:5.1f} s JVM + {python:5.1f} s Python = {rate / 1e6:5.2f} M records per CPU-s "
                  f"({rate / per_cpu:.2f}x single-process decode)")
            if action in VERSUS_CLI:
                own_wall, own_jvm, own_py = _beyond(r["runs"], action)
                own = (n - n_tiny) / max(own_jvm + own_py, 1e-9)
                versus = f", {own / cli_rate:.2f}x kdump export" if cli_rate else ""
                print(f"  {'':12} beyond the tiny run: {own_wall:6.1f} s wall, CPU {own_jvm:5.1f} s JVM + "
                      f"{own_py:5.1f} s Python = {own / 1e6:5.2f} M records per CPU-s{versus}")
    masters = args.masters.split(",")
    if len(masters) == 2:
        for action in actions:
            w = walls[action]
            print(f"speed-up {masters[1]} vs {masters[0]}, {action}: {w[masters[0]] / w[masters[1]]:.2f}x wall")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


def _arrow_rows(root: Path):  # type: ignore[no-untyped-def]
    from kdump.arrow.planning import plan
    from kdump.arrow.reading import ReadOptions, read_split

    for split in plan([str(root)]):
        yield from read_split(split, options=ReadOptions(level="record"))


if __name__ == "__main__":
    main()
