"""Benchmark kdump's start-up as whole processes, side by side with Python itself and an mmap+CRC floor.

A CI loop calls `kdump verify-index` once per segment, and a shallow dump of one segment is mostly
start-up, so what counts is the wall time of a whole process. Each round runs every command once,
in turn (so a busy machine slows them alike); the report is the median of the rounds:

  python        `python -c pass` (-S off: what any Python program pays)
  version       `kdump --version`                                    target <= 60 ms
  help          `kdump --help`
  verify-index  `kdump verify-index` on one small segment's partition
  floor         a Python program: mmap + a header walk + CRC-32C of every batch of the segment
  shallow       `kdump --files SEGMENT > /dev/null`                  target >= 0.8x floor (floor / shallow)

`--before DIR` adds the same kdump commands run from another checkout (an earlier commit, with its C
extensions built in place: `python setup.py build_ext --inplace` there), to measure a change:

  git worktree add /tmp/kdump-before <commit> && (cd /tmp/kdump-before && python setup.py build_ext --inplace)
  python benchmarks/bench_startup.py --before /tmp/kdump-before

Usage: python benchmarks/bench_startup.py [--size-mib 256] [--rounds 15] [--dir /tmp/kdump-bench] [--before DIR] [--cpu]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_dump import build_segment

ROOT = Path(__file__).resolve().parents[1]
SMALL_PARTITION = ROOT / "fixtures" / "logdirs" / "plain-0"

FLOOR = """
import mmap, struct, sys
from crc32c import crc32c
unpack = struct.Struct(">qi").unpack_from
with open(sys.argv[1], "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
    view = memoryview(mm)
    pos, end = 0, len(mm)
    while pos + 12 <= end:
        size = unpack(mm, pos)[1]
        crc32c(view[pos + 21:pos + 12 + size])
        pos += 12 + size
    view.release()
"""


def run_once(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """Wall time and CPU time (user + system, from the child's rusage) of one whole process.

    ``cwd`` is not a checkout: `python -m` puts it first on sys.path, ahead of PYTHONPATH."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--dir", default="/tmp/kdump-bench")
    parser.add_argument("--cpu", action="store_true",
                        help="compare CPU time (user + system) rather than wall time (a busy machine)")
    parser.add_argument("--before", help="another kdump checkout (C extensions built in place) to compare with")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    os.makedirs(os.path.join(args.dir, f"startup{args.size_mib}-0"), exist_ok=True)
    segment = os.path.join(args.dir, f"startup{args.size_mib}-0", "00000000000000000000.log")
    build_segment(segment, args.size_mib)

    python = [sys.executable]
    # Compiled once, as an installed package is (pip compiles a wheel's modules when it installs them):
    # without .pyc files every run would compile kdump from source. In a cache of their own, so no
    # checkout gets __pycache__ directories.
    env = {**os.environ, "PYTHONPYCACHEPREFIX": os.path.join(args.dir, "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)
    kdump = [*python, "-m", "kdump"]
    commands: dict[str, tuple[list[str], dict[str, str]]] = {
        "python": ([*python, "-c", "pass"], env),
        "version": ([*kdump, "--version"], env),
        "help": ([*kdump, "--help"], env),
        "verify-index": ([*kdump, "verify-index", str(SMALL_PARTITION)], env),
        "floor": ([*python, "-c", FLOOR, segment], env),
        "shallow": ([*kdump, "--files", segment], env),
    }
    if args.before:
        before_env = {**env, "PYTHONPATH": os.path.abspath(args.before)}
        for name in ("version", "help", "verify-index", "shallow"):
            commands[f"{name} (before)"] = (commands[name][0], before_env)
    for argv, command_env in commands.values():   # warm the page cache and the .pyc files
        run_once(argv, command_env, args.dir)
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, (argv, command_env) in commands.items():
            wall, cpu = run_once(argv, command_env, args.dir)
            walls[name].append(wall)
            cpus[name].append(cpu)
    # On a quiet machine wall and CPU time agree; on a busy one CPU time is the stabler measure.
    median = {name: statistics.median(values) * 1000 for name, values in (cpus if args.cpu else walls).items()}

    print(f"{args.rounds} rounds, {args.size_mib} MiB segment, load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} CPUs; median of each whole process (wall / CPU); ratios use the "
          f"{'CPU' if args.cpu else 'wall'} time")
    for name in commands:
        wall, cpu = statistics.median(walls[name]) * 1000, statistics.median(cpus[name]) * 1000
        print(f"  {name:22} {wall:8.1f} ms  {cpu:8.1f} ms")
    print(f"kdump --version: {median['version']:.0f} ms (target <= 60), "
          f"{median['version'] - median['python']:.0f} ms above `python -c pass`")
    print(f"shallow dump vs mmap+CRC floor: {median['floor'] / median['shallow']:.2f}x (target >= 0.8x)")
    if args.before:
        for name in ("version", "help", "verify-index", "shallow"):
            print(f"{name}: {median[f'{name} (before)']:.0f} ms before, {median[name]:.0f} ms now "
                  f"({median[f'{name} (before)'] / median[name]:.2f}x faster)")


if __name__ == "__main__":
    main()
