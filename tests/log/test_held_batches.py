"""Batches too large to hold (past MAX_HELD_ENTRY_BYTES): their bytes are read from the file a window at a
time (and decompressed as they are read), for the dump and for verify --deep."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

import kdump.log.batches as batches_module
from kdump.format.codecs import Codec
from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump.log.batches import LogBatches
from kdump.log.segment import ReadOnlyFile

T0 = 1_700_000_000_000
CODECS = [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]
IDS = [codec.kafka_name for codec in CODECS]


def random_bytes(seed: int, size: int) -> bytes:
    return random.Random(seed).randbytes(size)   # incompressible: the batch stays as large compressed


@pytest.mark.parametrize("codec", [Codec.NONE, *CODECS], ids=["none", *IDS])
def test_records_of_an_oversized_batch_are_kafka_pythons(tmp_path: Path, codec: Codec) -> None:
    """kafka-python (the oracle) compresses and decodes the batch whole; kdump reads it a window at a
    time, with large values whole, or as lazy values read again from the file."""
    from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=int(codec), is_transactional=False,
                                        producer_id=7, producer_epoch=1, base_sequence=40, batch_size=1 << 30)
    sizes = [5, 3 << 20, 0, 9 << 20, 2 << 20, 17, (1 << 20) + 3, 1, 3 << 20]
    blob = random_bytes(1, sum(sizes))
    start = 0
    for i, size in enumerate(sizes):
        value = None if size == 0 else blob[start:start + size]
        start += size
        builder.append(i, timestamp=T0 + i, key=None if i % 3 else b"key%d" % i, value=value,
                       headers=[("h%d" % i, b"v" * i)] if i % 2 else [])
    data = bytes(builder.build())
    assert len(data) > batches_module.MAX_HELD_ENTRY_BYTES
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    theirs = [(r.offset, r.timestamp, r.key, r.value, [(k.encode(), v) for k, v in r.headers])
              for r in DefaultRecordBatch(data)]
    for values in (True, False):
        with ReadOnlyFile(str(path)) as segment:
            scan = LogBatches(segment)
            batch = next(iter(scan))
            assert batch.is_valid   # the CRC, computed a window at a time
            ours = [(r.offset, r.timestamp, r.key, None if r.value is None else bytes(r.value),
                     [(k, v) for k, v in r.headers])
                    for group in scan.iter_records(batch, values=values) for r in group]
        assert ours == theirs


PEAK_BOUND_MIB = 60
BATCH_MIB = 40


def peak_mib(argv: list[str]) -> float:
    """Peak RSS (VmHWM) of `kdump argv` in a fresh process writing to /dev/null; it must exit 0."""
    code = ("import sys\nfrom kdump.cli.main import main\nsys.argv = ['kdump'] + %r\n"
            "try:\n    main()\nexcept SystemExit as exit:\n    status = exit.code\nelse:\n    status = 0\n"
            "hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1]\n"
            "print('VmHWM', hwm, status, file=sys.stderr)\n" % argv)
    done = subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=300)
    *_, kib, status = done.stderr.split()
    assert status in ("0", "None"), done.stderr
    return int(kib) / 1024


@pytest.mark.parametrize("codec", CODECS, ids=IDS)
def test_memory_does_not_grow_with_a_compressed_batch(tmp_path: Path, codec: Codec) -> None:
    # 40 Ki records of 1 KiB random values: a 40 MiB batch that stays ~40 MiB compressed. Read whole
    # before it was decompressed, a 64 MiB one took 91-99 MiB (lz4: 222 MiB, lz4.frame kept copying the
    # input it had not reached); read a window at a time it takes 29-38 MiB.
    blob = random_bytes(2, BATCH_MIB << 20)
    records = [Record(i, T0, None, blob[i << 10:(i + 1) << 10]) for i in range(len(blob) >> 10)]
    data = encode_batch_v2(records, base_offset=0, codec=codec,
                           compression_level=None if codec is Codec.SNAPPY else (0 if codec is Codec.GZIP else 1))
    del blob, records
    assert len(data) > BATCH_MIB << 20
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    del data
    for argv in (["verify", "--deep", "--jobs", "1", str(path)], ["--files", str(path), "--deep-iteration"]):
        assert peak_mib(argv) < PEAK_BOUND_MIB, argv
