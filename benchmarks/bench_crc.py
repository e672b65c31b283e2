"""CRC-32C implementations side by side on 16 KiB batches: why kdump prefers `crc32c` over crcmod.

Usage: python benchmarks/bench_crc.py [--mib 256]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import crc32c as hw
import crcmod.predefined

from kdump.format.crc import CRC32C_IMPLEMENTATION


def rate(fn, chunks: list[memoryview], mib: float) -> float:
    start = time.perf_counter()
    for chunk in chunks:
        fn(chunk)
    return mib / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=256)
    args = parser.parse_args()
    data = memoryview(os.urandom(args.mib * 2**20))
    chunks = [data[i:i + 16384] for i in range(0, len(data), 16384)]
    mod = crcmod.predefined.mkCrcFun("crc-32c")
    assert hw.crc32c(chunks[0]) == mod(bytes(chunks[0]))
    r_hw = rate(hw.crc32c, chunks, args.mib)
    r_mod = rate(mod, chunks, args.mib)
    print(f"kdump uses: {CRC32C_IMPLEMENTATION}")
    print(f"crc32c (hardware={hw.hardware_based}) {r_hw:9.0f} MiB/s")
    uses_extension = sys.modules["crcmod.crcmod"]._usingExtension
    print(f"crcmod (C extension={uses_extension}) {r_mod:9.0f} MiB/s  ({r_hw / r_mod:.1f}x slower)")


if __name__ == "__main__":
    main()
