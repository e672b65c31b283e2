"""Peak memory of every kdump command over one segment, at two sizes: flat means the same peak.

Builds a partition whose one segment is made of the same ~16 KiB v2 batch repeated with rising
base offsets (a v2 CRC does not cover the base offset, so every batch stays valid), at
``--small-mib`` and ``--size-mib`` (default 2048: the largest segment Kafka allows), with indexes
written by ``kdump rebuild-index``. Then it runs each command in a fresh process and prints its
VmHWM (peak resident set): ``--files`` shallow, deep and with ``--print-data-log``, the index
dumps, ``verify-index``, ``summary``, ``txn``, ``find`` (middle offset), ``rebuild-index``.

Not ru_maxrss: Linux carries the parent's high-water mark across fork+exec.

Usage: python benchmarks/bench_memory.py [--size-mib 2048] [--small-mib 128] [--dir /tmp/kdump-mem]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record

RECORDS_PER_BATCH = 372


def build_partition(directory: str, size_mib: int) -> tuple[str, int]:
    """A partition dir with one segment of about ``size_mib`` MiB; returns (dir, last offset)."""
    partition = os.path.join(directory, f"mem{size_mib}-0")
    log = os.path.join(partition, "00000000000000000000.log")
    template = bytearray(encode_batch_v2(
        [Record(i, 1_700_000_000_000 + i, b"key-%010d" % i, b"value-%015d" % i) for i in range(RECORDS_PER_BATCH)],
        base_offset=0))
    batches = min((size_mib << 20) // len(template), (2**31 - 1) // len(template))
    last = batches * RECORDS_PER_BATCH - 1
    if os.path.exists(log) and os.path.getsize(log) == batches * len(template):
        return partition, last
    os.makedirs(partition, exist_ok=True)
    with open(log + ".tmp", "wb") as out:
        chunk = bytearray()
        for n in range(batches):
            template[0:8] = (n * RECORDS_PER_BATCH).to_bytes(8, "big")
            chunk += template
            if len(chunk) >= 8 << 20:
                out.write(chunk)
                chunk.clear()
        out.write(chunk)
    os.replace(log + ".tmp", log)
    rebuilt = tempfile.mkdtemp()
    kdump("rebuild-index", log, "--out", rebuilt)
    for name in os.listdir(rebuilt):
        shutil.move(os.path.join(rebuilt, name), os.path.join(partition, name))
    os.rmdir(rebuilt)
    return partition, last


def kdump(*args: str) -> float:
    """Run one kdump command in a fresh process; returns its VmHWM in MiB."""
    code = ("import sys; from kdump.cli.main import main; sys.argv=['kdump', *%r]\n"
            "try:\n main()\nexcept SystemExit: pass\n"
            "print(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1], file=sys.stderr)"
            % (list(args),))
    done = subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, check=False)
    return int(done.stderr.strip().splitlines()[-1]) / 1024


def commands(partition: str, last: int) -> dict[str, list[str]]:
    log = os.path.join(partition, "00000000000000000000.log")
    return {
        "--files (shallow)": ["--files", log],
        "--files --deep-iteration": ["--files", log, "--deep-iteration"],
        "--files --print-data-log": ["--files", log, "--print-data-log"],
        "--files X.index": ["--files", log[:-4] + ".index"],
        "--files X.timeindex": ["--files", log[:-4] + ".timeindex"],
        "verify-index": ["verify-index", partition],
        "summary": ["summary", partition],
        "txn": ["txn", partition],
        "find --offset (middle)": ["find", partition, "--offset", str(last // 2)],
        "rebuild-index": ["rebuild-index", log, "--out", tempfile.mkdtemp(), "--force"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=int, default=2048)
    parser.add_argument("--small-mib", type=int, default=128)
    parser.add_argument("--dir", default="/tmp/kdump-mem")
    args = parser.parse_args()
    small, small_last = build_partition(args.dir, args.small_mib)
    large, large_last = build_partition(args.dir, args.size_mib)
    small_size = os.path.getsize(os.path.join(small, "00000000000000000000.log")) / 2**20
    large_size = os.path.getsize(os.path.join(large, "00000000000000000000.log")) / 2**20
    print(f"peak RSS (VmHWM) per command, one segment of {small_size:.0f} MiB vs {large_size:.0f} MiB")
    print(f"{'command':28} {'small':>10} {'large':>10}")
    small_runs, large_runs = commands(small, small_last), commands(large, large_last)
    for name, small_args in small_runs.items():
        print(f"{name:28} {kdump(*small_args):8.1f} MiB {kdump(*large_runs[name]):8.1f} MiB", flush=True)


if __name__ == "__main__":
    main()
