"""kdump against the real ``kafka-dump-log`` of Kafka 4.4.0 on the same segment, one core, in one run.

Writes one segment of about --size-mib MiB (default 256) of ~16 KiB v2 batches of small records (372 records of
15-byte keys and 21-byte values, bench_split.py's generator) into a temporary directory removed afterwards, then:

  check   kdump's and the real tool's stdout of ``--files X --print-data-log`` hashed: the same bytes, or the
          benchmark fails (not timed; --no-check skips it);
  time    ``--print-data-log`` and a shallow dump (``--files X``), each as a whole process with its output to
          /dev/null: ``kdump ... --jobs 1`` and ``java -cp <4.4.0 jars> org.apache.kafka.tools.DumpLogSegments``
          (JDK on PATH, default heap and flags, as kafka-dump-log.sh runs it but without the script's -Xmx256M),
          in turn, --repeat pairs, so both see the same machine;
  floor   kdump's shallow dump in this process against bench_dump.py's floor (mmap + a bare header walk +
          CRC-32C of each batch, in Python), in turn, --repeat pairs.

It prints the best wall seconds of each, the ratios (best against best, and the median of the pairs' ratios) and
the load average before each pair: the machine may be shared, and only ratios taken side by side mean much.
kdump runs with compiled bytecode (PYTHONDONTWRITEBYTECODE is dropped; the .pyc files go to the temporary
directory, PYTHONPYCACHEPREFIX), as an installed kdump does.

    python benchmarks/bench_real_tool.py [--size-mib 256] [--repeat 3] [--release 4.4.0] [--no-check]

Targets (issue 34): --print-data-log at >= 10x the real tool; the shallow dump at >= 0.85x the floor.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_dump import floor_scan, kdump_cli
from bench_split import generate

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "kafka"))
from broker import fetch_jars  # tests/kafka's jar cache (~/.cache/kdump-kafka), not a package

MAIN_CLASS = "org.apache.kafka.tools.DumpLogSegments"   # kafka-dump-log.sh of 4.x (tools/src/main/java/...)
MODES = {"print": ["--print-data-log"], "shallow": []}


def kdump_command(log: str, flags: list[str]) -> list[str]:
    return [sys.executable, "-m", "kdump", "--files", log, *flags, "--jobs", "1"]


def java_command(lib: Path, log: str, flags: list[str]) -> list[str]:
    return ["java", "-cp", f"{lib}/*", MAIN_CLASS, "--files", log, *flags]


def run_timed(command: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one process with its output to /dev/null; it must exit 0."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, _ = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{command[:3]}... exited {proc.returncode}")
    return wall


def stdout_digest(command: list[str], env: dict[str, str]) -> str:
    hashed = hashlib.sha256()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env) as proc:
        assert proc.stdout is not None
        while chunk := proc.stdout.read(1 << 20):
            hashed.update(chunk)
        if proc.wait() != 0:
            raise SystemExit(f"{command[:3]}... exited {proc.returncode}")
    return hashed.hexdigest()


def timed_in_process(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def summary(name: str, ours: list[float], theirs: list[float], their_name: str, target: float) -> str:
    ratios = [t / o for o, t in zip(ours, theirs, strict=True)]
    return (f"{name:<8} kdump {min(ours):6.2f} s (median {statistics.median(ours):.2f})  {their_name} "
            f"{min(theirs):6.2f} s (median {statistics.median(theirs):.2f})  ratio {min(theirs) / min(ours):5.2f}x "
            f"best/best, {statistics.median(ratios):5.2f}x median of pairs, best pair {max(ratios):.2f}x "
            f"(target >= {target})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--release", default="4.4.0")
    parser.add_argument("--no-check", action="store_true", help="skip the same-bytes check")
    opts = parser.parse_args()
    lib = fetch_jars(opts.release)
    root = tempfile.mkdtemp(prefix="kdump-bench-real-")
    try:
        log = generate(os.path.join(root, "bench-0"), opts.size_mib)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = os.path.join(root, "pyc")
        run_timed(kdump_command(log, ["--max-bytes", "1"]), env)   # compiles kdump's bytecode once
        java = subprocess.run(["java", "-version"], capture_output=True, text=True, check=True).stderr.splitlines()[0]
        print(f"segment: {os.path.getsize(log) / 2**20:.0f} MiB of ~16 KiB batches (372 small records each); "
              f"real tool: Kafka {opts.release} {MAIN_CLASS} on {java}; {os.cpu_count()} CPUs")
        if not opts.no_check:
            ours = stdout_digest(kdump_command(log, MODES["print"]), env)
            theirs = stdout_digest(java_command(lib, log, MODES["print"]), env)
            if ours != theirs:
                raise SystemExit("--print-data-log: kdump wrote other bytes than the real tool")
            print(f"--print-data-log: same bytes as the real tool (sha256 {ours[:16]})")
        times: dict[str, tuple[list[float], list[float]]] = {mode: ([], []) for mode in MODES}
        floor: tuple[list[float], list[float]] = ([], [])
        floor_scan(log)   # the page cache holds the segment from here on
        for n in range(opts.repeat):
            load = os.getloadavg()[0]
            for mode, flags in MODES.items():
                times[mode][0].append(run_timed(kdump_command(log, flags), env))
                times[mode][1].append(run_timed(java_command(lib, log, flags), env))
            floor[0].append(timed_in_process(lambda: kdump_cli(log)))
            floor[1].append(timed_in_process(lambda: floor_scan(log)))
            print(f"pair {n + 1}: load {load:.2f}; print {times['print'][0][-1]:.2f} s vs {times['print'][1][-1]:.2f} "
                  f"s; shallow {times['shallow'][0][-1]:.2f} s vs {times['shallow'][1][-1]:.2f} s; in-process "
                  f"shallow {floor[0][-1]:.3f} s vs floor {floor[1][-1]:.3f} s", flush=True)
        print(summary("print", *times["print"], "real tool", 10))
        print(summary("shallow", *times["shallow"], "real tool", 1))
        print(summary("floor", *floor, "floor", 0.85).replace("kdump", "kdump shallow in-process", 1))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
