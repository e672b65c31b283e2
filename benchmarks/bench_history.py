"""A cluster's history against one replica: ``kdump export --cluster`` of three in-sync, cleanly stopped
replicas against ``kdump export`` of one of them (issue 33's speed target: at most 1.25x per CPU-second).

Writes three brokers' log dirs of one partition, about --size-mib MiB each (kdump.gen.cluster_generator's
``agree`` scenario: every replica holds the same bytes; 100 records of 100-byte values a batch, 128 MiB
segments), into a temporary directory removed afterwards. Then, --repeat times in turn:

  single   kdump export BROKER-2/PARTITION --to OUT --jobs J     (the leader's replica alone)
  cluster  kdump export --cluster BROKER-1 BROKER-2 BROKER-3 --to OUT --jobs J

each a fresh process, CPU seconds (user + system of it and its workers, from wait4) and wall seconds. Both
write the same records (checked: equal row counts); the cluster export also reconciles the three replicas
(batch headers only) and writes its manifest. It prints the best CPU and wall seconds of each and the ratio
cluster / single of the best CPU seconds, with the load average before each run (a shared machine's figures
move with its load).

    python benchmarks/bench_history.py [--size-mib 64] [--jobs 1] [--repeat 3]
    python benchmarks/bench_history.py --size-mib 1024          # the issue's figure: three 1 GiB brokers
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from kdump.gen.cluster_generator import ClusterGenSpec, generate_cluster
from kdump.log.writer import LogConfig

RECORDS_PER_BATCH = 100
VALUE_BYTES = 100
RECORD_BYTES = VALUE_BYTES + 40        # value, key and the record's framing, roughly (sized by the result)


def write_cluster(directory: str, size_mib: int) -> str:
    records = max(1000, (size_mib << 20) // RECORD_BYTES)
    spec = ClusterGenSpec(topic="history", records=records, records_per_batch=RECORDS_PER_BATCH,
                          value_bytes=VALUE_BYTES, log=LogConfig(segment_bytes=128 << 20))
    out = os.path.join(directory, "cluster")
    generate_cluster(out, spec)
    return out


def timed(args: list[str]) -> tuple[float, str]:
    """(wall seconds, stdout) of one kdump run; its CPU seconds are read around it (``_children_cpu``)."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "kdump", *args], capture_output=True, check=False)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"kdump {' '.join(args)} failed: {proc.stderr.decode()[-2000:]}")
    return wall, proc.stdout.decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=64)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp:
        cluster = write_cluster(tmp, args.size_mib)
        brokers = sorted(os.path.join(cluster, b) for b in os.listdir(cluster) if b.startswith("broker-"))
        leader = os.path.join(brokers[1], "history-0")
        size = sum(os.path.getsize(os.path.join(leader, f)) for f in os.listdir(leader) if f.endswith(".log"))
        print(f"3 replicas of {size / (1 << 20):.0f} MiB each, --jobs {args.jobs}")
        runs = {"single": ["export", leader], "cluster": ["export", "--cluster", *brokers]}
        best: dict[str, tuple[float, float]] = {}
        last: dict[str, float] = {}
        for _ in range(args.repeat):
            for name, command in runs.items():
                target = os.path.join(tmp, f"out-{name}")
                shutil.rmtree(target, ignore_errors=True)
                load = os.getloadavg()[0]
                before = _children_cpu()
                wall, out = timed([*command, "--to", target, "--jobs", str(args.jobs)])
                cpu = _children_cpu() - before
                rows = int(out.split()[1])
                if name in last and last[name] != rows:
                    raise SystemExit(f"{name}: {rows} rows, {last[name]} before")
                last[name] = rows
                print(f"  {name:8} cpu {cpu:7.2f} s  wall {wall:7.2f} s  rows {rows}  load {load:.2f}")
                old = best.get(name)
                best[name] = (min(cpu, old[0]) if old else cpu, min(wall, old[1]) if old else wall)
        if last["single"] != last["cluster"]:
            raise SystemExit(f"the exports differ: {last}")
        print(f"best cpu: single {best['single'][0]:.2f} s, cluster {best['cluster'][0]:.2f} s; "
              f"cluster / single = {best['cluster'][0] / best['single'][0]:.2f}x per CPU-second (target <= 1.25x)")
        print(f"best wall: single {best['single'][1]:.2f} s, cluster {best['cluster'][1]:.2f} s")


def _children_cpu() -> float:
    """User + system seconds of every reaped child, and of the children they reaped (the export's workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
