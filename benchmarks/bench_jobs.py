"""Wall time of ``--jobs 1`` against ``--jobs N`` for verify, verify-index, summary, txn and
``--files`` over a log dir, in one run.

A log dir with many partitions is written by ``kdump gen`` (compressed and transactional topics,
rolled segments); each command then runs as a fresh ``kdump`` process writing to /dev/null, with
``--jobs 1`` and with ``--jobs N`` alternately (``--repeat`` times, the best of each kept), so both
see the same machine load. The ratio is the speed-up; it can be no more than the CPUs this process
may use (printed first): on a 2-CPU machine shared with other work, expect well under 2.

Usage: python benchmarks/bench_jobs.py [--jobs N] [--partitions 24] [--records 20000] [--repeat 3]
       [--commands verify,verify-deep,verify-index,summary,txn,files-deep,files-print] [--dir /tmp/kdump-bench-jobs]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time

from kdump.cli.parallel import available_cpus

COMMANDS = {"verify": ["verify"], "verify-deep": ["verify", "--deep"], "verify-index": ["verify-index"],
            "summary": ["summary", "--plain"], "txn": ["txn"],
            # the log dir goes last: --files LOGDIR
            "files-deep": ["--deep-iteration", "--files"], "files-print": ["--print-data-log", "--files"]}


def generate(path: str, partitions: int, records: int) -> None:
    per_topic = max(1, partitions // 3)
    subprocess.run([sys.executable, "-m", "kdump", "gen", path, "--force", "--topics", "plain,zipped,txn",
                    "--partitions", str(per_topic), "--records", str(records), "--compression", "zipped=gzip",
                    "--transactional", "txn", "--segment-bytes", str(1 << 20), "--seed", "7"], check=True,
                   stdout=subprocess.DEVNULL)


def wall_time(args: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "kdump", *args], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=available_cpus())
    parser.add_argument("--partitions", type=int, default=24)
    parser.add_argument("--records", type=int, default=20000, help="records per partition")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--commands", default=",".join(COMMANDS))
    parser.add_argument("--dir", default="/tmp/kdump-bench-jobs")
    opts = parser.parse_args()
    logs = os.path.join(opts.dir, "logs")
    os.makedirs(opts.dir, exist_ok=True)
    generate(logs, opts.partitions, opts.records)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(logs) for f in files)
    print(f"CPUs available to this process: {available_cpus()} (os.cpu_count: {os.cpu_count()}); "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"log dir: {opts.partitions // 3 * 3} partitions, {size / 1e6:.1f} MB, {opts.records} records each")
    print(f"{'command':<14} {'--jobs 1':>10} {f'--jobs {opts.jobs}':>10} {'speed-up':>9}")
    for name in opts.commands.split(","):
        args = [*COMMANDS[name], logs]
        one = many = float("inf")
        codes = set()
        for _ in range(opts.repeat):
            seconds, code = wall_time([*args, "--jobs", "1"])
            one, codes = min(one, seconds), codes | {code}
            seconds, code = wall_time([*args, "--jobs", str(opts.jobs)])
            many, codes = min(many, seconds), codes | {code}
        note = "" if len(codes) == 1 else f"  (exit codes differ: {sorted(codes)})"
        print(f"{name:<14} {one:>9.2f}s {many:>9.2f}s {one / many:>8.2f}x{note}")
    shutil.rmtree(opts.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
