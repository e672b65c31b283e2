"""Throughput of `kdump gen`'s engine: writes 256 MiB of segments and prints MB/s and records/s.

    /work/venv/bin/python benchmarks/bench_gen.py [--mib 256] [--value-size 1000] [--compression none]

Everything is counted: record generation (seeded random values), batch encoding (CRC-32C,
varints, compression), appends, index bookkeeping, rolls and the final rename. The output
directory is a temporary one, removed afterwards.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

from kdump.format.codecs import Codec
from kdump.gen.generator import GenSpec, TopicSpec, generate
from kdump.log.writer import LogConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--value-size", type=int, default=1000)
    parser.add_argument("--records-per-batch", type=int, default=100)
    parser.add_argument("--compression", default="none", choices=[c.name.lower() for c in Codec])
    args = parser.parse_args()
    per_record = args.value_size + 30  # key, record framing and the batch header share
    records = args.mib * 1024 * 1024 // per_record
    spec = GenSpec(topics=(TopicSpec("bench", 1, Codec[args.compression.upper()]),), records=records,
                   key_pattern="seq", value_pattern="binary", value_size=(args.value_size, args.value_size),
                   records_per_batch=args.records_per_batch, log=LogConfig(segment_bytes=64 * 1024 * 1024))
    root = tempfile.mkdtemp(prefix="kdump-bench-")
    try:
        start = time.perf_counter()
        result = generate(os.path.join(root, "out"), spec)
        elapsed = time.perf_counter() - start
    finally:
        shutil.rmtree(root, ignore_errors=True)
    mb = result.bytes_written / 1e6
    print(f"wrote {result.bytes_written / 2**20:.1f} MiB ({result.records} records, {result.segments} segments, "
          f"{args.compression}) in {elapsed:.2f} s: {mb / elapsed:.1f} MB/s, {result.records / elapsed:,.0f} records/s")


if __name__ == "__main__":
    main()
