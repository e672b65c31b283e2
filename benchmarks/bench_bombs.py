"""Peak memory of `kdump --files X.log` and `kdump verify --deep X.log` on hostile compressed batches
("bombs") and an ordinary big one.

Shapes (one batch per segment file):
  tiny      --records tiny records (7 bytes each, all alike): a few KB of zstd for 20 M records
  value     one record whose value is --value-mib MiB of zeros: ~60 KB of zstd for 2 GiB
  ordinary  --ordinary-records distinct small records (~1.5 MB of zstd for 2 M; ~48 MB with codec none)
For every shape, codec (none: uncompressed) and command (--deep-iteration, --print-data-log, --json,
verify: `kdump verify --deep`) a fresh
`kdump` process writes to /dev/null and reports its peak RSS (VmHWM; not ru_maxrss, which a child
inherits from its parent), with its exit status and wall time.

Usage: python benchmarks/bench_bombs.py [--shapes tiny,value,ordinary] [--codecs zstd,gzip,snappy,lz4]
       [--commands deep,print,json,verify] [--records 20000000] [--value-mib 2047] [--dir /tmp/kdump-bombs]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator

import cramjam
import lz4.frame
import zstandard

from kdump.format.batch import V2_ATTRIBUTES_OFFSET, V2_HEADER
from kdump.format.codecs import Codec, compress
from kdump.format.crc import crc32c
from kdump.format.varint import encode_varint, encode_varlong

TINY_RECORD = b"\x0c\x00\x00\x00\x01\x01\x00"  # length 6, attributes, ts 0, offset 0, key null, value null, 0 headers
COMMANDS = {"deep": ["--deep-iteration"], "print": ["--print-data-log"], "json": ["--deep-iteration", "--json"],
            "verify": ["verify", "--deep", "--jobs", "1"]}


def batch_bytes(compressed: bytes, codec: Codec, count: int, last_offset_delta: int) -> bytes:
    """A v2 batch around an already compressed records area (base offset 0, CreateTime 0)."""
    size = V2_HEADER.size - 12 + len(compressed)
    header = bytearray(V2_HEADER.pack(0, size, 0, 2, 0, int(codec), last_offset_delta, 0, 0, -1, -1, -1, count))
    crc = crc32c(bytes(header[V2_ATTRIBUTES_OFFSET:]) + compressed)
    header[17:21] = crc.to_bytes(4, "big")
    return bytes(header) + compressed


def compress_stream(codec: Codec, pieces: Iterator[bytes]) -> bytes:
    """Compress a stream too large to hold, framed as Kafka's producer frames it."""
    if codec is Codec.NONE:
        return b"".join(pieces)
    if codec is Codec.ZSTD:
        cobj = zstandard.ZstdCompressor(level=3, write_content_size=False).compressobj()
        out = [cobj.compress(p) for p in pieces]
        return b"".join(out) + cobj.flush()
    if codec is Codec.GZIP:
        zobj = zlib.compressobj(6, zlib.DEFLATED, 31)
        out = [zobj.compress(p) for p in pieces]
        return b"".join(out) + zobj.flush()
    if codec is Codec.LZ4:
        lobj = lz4.frame.LZ4FrameCompressor(block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
                                            content_checksum=False, auto_flush=True)
        out = [lobj.begin()] + [lobj.compress(p) for p in pieces]
        return b"".join(out) + lobj.flush()
    # snappy: xerial blocks of 32 KiB of input, like snappy-java
    out = [compress(Codec.SNAPPY, b"")]
    for piece in pieces:
        for start in range(0, len(piece), 32 * 1024):
            block = bytes(cramjam.snappy.compress_raw(piece[start:start + 32 * 1024]))
            out.append(len(block).to_bytes(4, "big") + block)
    return b"".join(out)


def _repeat(unit: bytes, count: int, piece: int = 1 << 22) -> Iterator[bytes]:
    per = max(1, piece // len(unit))
    full = unit * per
    while count >= per:
        yield full
        count -= per
    if count:
        yield unit * count


def tiny_batch(codec: Codec, count: int) -> bytes:
    return batch_bytes(compress_stream(codec, _repeat(TINY_RECORD, count)), codec, count, 0)


def value_batch(codec: Codec, value_size: int) -> bytes:
    body = b"\x00" + encode_varlong(0) + encode_varint(0) + encode_varint(-1) + encode_varint(value_size)
    length = len(body) + value_size + 1
    head = encode_varint(length) + body

    def pieces() -> Iterator[bytes]:
        yield head
        yield from _repeat(b"\x00", value_size)
        yield b"\x00"  # no headers

    return batch_bytes(compress_stream(codec, pieces()), codec, 1, 0)


def ordinary_batch(codec: Codec, count: int) -> bytes:
    """Distinct records: offset deltas 0..count-1, timestamps 0, 10-byte keys and values."""
    def pieces() -> Iterator[bytes]:
        group = []
        for i in range(count):
            body = b"\x00\x00" + encode_varint(i) + b"\x14k%09d\x14v%09d\x00" % (i, i)
            group.append(encode_varint(len(body)) + body)
            if len(group) == 65536:
                yield b"".join(group)
                group = []
        yield b"".join(group)

    return batch_bytes(compress_stream(codec, pieces()), codec, count, count - 1)


def write_segment(directory: str, name: str, data: bytes) -> str:
    folder = os.path.join(directory, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "00000000000000000000.log")
    with open(path, "wb") as out:
        out.write(data)
    return path


def peak_rss(path: str, flags: list[str]) -> tuple[float, int, float, str]:
    """(VmHWM in MiB, exit status, seconds, last stderr line) of a fresh `kdump --files path flags`
    (of `kdump flags path` when ``flags`` name a subcommand)."""
    argv = [*flags, path] if flags[0] == "verify" else ["--files", path, *flags]
    code = ("import sys; from kdump.cli.main import main; sys.argv=['kdump']+%r\n"
            "try:\n main()\nexcept SystemExit as e: status = e.code\nexcept MemoryError: status = 'MemoryError'\n"
            "else: status = 0\n"
            "print(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1], status,"
            " file=sys.stderr)" % (argv,))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    lines = done.stderr.strip().splitlines() or ["0 ?"]
    try:
        kib, status = lines[-1].split()
        rss = int(kib) / 1024
    except ValueError:
        rss, status = float("nan"), str(done.returncode)
    message = lines[-2] if len(lines) > 1 else ""
    return rss, status, seconds, message  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default="tiny,value,ordinary")
    parser.add_argument("--codecs", default="zstd,gzip,snappy,lz4")
    parser.add_argument("--commands", default="deep,print,json")
    parser.add_argument("--records", type=int, default=20_000_000)
    parser.add_argument("--value-mib", type=int, default=2047)
    parser.add_argument("--ordinary-records", type=int, default=2_000_000)
    parser.add_argument("--dir", default="/tmp/kdump-bombs")
    args = parser.parse_args()
    builders = {"tiny": lambda c: tiny_batch(c, args.records),
                "value": lambda c: value_batch(c, args.value_mib << 20),
                "ordinary": lambda c: ordinary_batch(c, args.ordinary_records)}
    print(f"{'shape':9} {'codec':7} {'file':>10} {'command':6} {'peak RSS':>10} {'time':>8}  exit")
    for shape in args.shapes.split(","):
        for codec_name in args.codecs.split(","):
            codec = Codec[codec_name.upper()]
            path = write_segment(args.dir, f"{shape}-{codec_name}", builders[shape](codec))
            size = os.path.getsize(path)
            for command in args.commands.split(","):
                rss, status, seconds, message = peak_rss(path, COMMANDS[command])
                note = f"  {message[:70]}" if status not in ("0", 0) else ""
                print(f"{shape:9} {codec_name:7} {size:>10} {command:6} {rss:8.0f} MiB {seconds:7.1f}s  {status}{note}",
                      flush=True)


if __name__ == "__main__":
    main()
