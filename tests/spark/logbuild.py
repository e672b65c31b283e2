"""Small Kafka log dirs for the Spark tests, built with kdump's own encoders.

Each batch goes through ``encode_batch_v2``; the ``.index`` gets an entry (last offset of the
batch, its position) whenever ``index_interval`` bytes were written since the last one, as a broker
does with ``index.interval.bytes``; the ``.timeindex`` gets the running max timestamp at the same
points and once more when a segment is rolled, if its timestamp is larger (what Kafka writes on roll).
"""

from __future__ import annotations

import os
from pathlib import Path

from kdump.format.codecs import Codec
from kdump.format.encode import encode_batch_v2
from kdump.format.index import encode_offset_entry, encode_time_entry
from kdump.format.records import Record
from kdump.log.files import segment_file_name

CODECS = (Codec.NONE, Codec.GZIP, Codec.NONE, Codec.LZ4, Codec.NONE, Codec.ZSTD, Codec.SNAPPY)
BASE_TIME = 1_700_000_000_000


def make_records(first_offset: int, count: int, *, seed: int) -> list[Record]:
    out = []
    for i in range(count):
        offset = first_offset + i
        key = None if offset % 7 == 0 else f"key-{seed}-{offset}".encode()
        value = None if offset % 11 == 5 else (f"value-{offset}-" + "x" * (offset % 13)).encode()
        headers = () if offset % 3 else ((b"h1", f"{offset}".encode()), (b"h2", None))
        out.append(Record(offset, BASE_TIME + offset * 10, key, value, headers))
    return out


def write_partition(root: Path, topic: str, partition: int, *, segments: int = 2, batches: int = 6,
                    records_per_batch: int = 20, index_interval: int = 1024, seed: int = 0,
                    roll_last: bool = False) -> Path:
    """A partition dir with ``segments`` segments of ``batches`` batches each."""
    pdir = root / f"{topic}-{partition}"
    pdir.mkdir(parents=True, exist_ok=True)
    offset = 0
    for s in range(segments):
        base = offset
        log, index, timeindex = bytearray(), bytearray(), bytearray()
        since_index = index_interval          # index the first batch, so splits can start anywhere
        max_ts = -1
        indexed_ts = -1
        last_offset = base
        for b in range(batches):
            records = make_records(offset, records_per_batch, seed=seed)
            codec = CODECS[(b + s + partition) % len(CODECS)]
            producer = (seed * 1000 + partition, 0, offset - base) if b % 2 else (-1, -1, -1)
            data = encode_batch_v2(records, base_offset=offset, codec=codec, producer_id=producer[0],
                                   producer_epoch=producer[1], base_sequence=producer[2],
                                   partition_leader_epoch=3)
            last_offset = records[-1].offset
            max_ts = max(max_ts, max(r.timestamp for r in records))
            if since_index >= index_interval:
                index += encode_offset_entry(base, last_offset, len(log))
                timeindex += encode_time_entry(base, max_ts, last_offset)
                indexed_ts = max_ts
                since_index = 0
            log += data
            since_index += len(data)
            offset += records_per_batch
        if (s < segments - 1 or roll_last) and max_ts > indexed_ts:
            # TimeIndex.maybeAppend on roll: only a timestamp above the last entry's is appended
            timeindex += encode_time_entry(base, max_ts, last_offset)
        for suffix, blob in ((".log", log), (".index", index), (".timeindex", timeindex)):
            (pdir / segment_file_name(base, suffix)).write_bytes(bytes(blob))
    return pdir


def write_log_dirs(root: Path) -> Path:
    """Two topics, five partitions, two segments each: ~24 splits at splitBytes=4k."""
    logs = root / "logs"
    for p in range(3):
        write_partition(logs, "orders", p, seed=1)
    for p in range(2):
        write_partition(logs, "payments", p, seed=2, segments=2, batches=4)
    (logs / "cleaner-offset-checkpoint").write_text("0\n0\n")
    os.makedirs(logs / "orders-9.0123456789abcdef0123456789abcdef-delete", exist_ok=True)
    return logs


def corrupt_byte(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0xFF
    path.write_bytes(bytes(data))


# ---- the single-process reference: kdump's own reader, no Spark -------------------------------

def reference_rows(root: Path) -> list[tuple]:
    """(topic, partition, segment, batchPosition, offset, timestamp, key, value, headers) of every record,
    read with kdump.log/kdump.format in this process."""
    from kdump.format.batch import scan_batches
    from kdump.format.records import decode_records
    from kdump.log.logdir import walk_partitions

    rows = []
    for pdir in walk_partitions(str(root)):
        if pdir.state is not None:
            continue
        for seg in pdir.segments:
            if seg.log is None:
                continue
            data = Path(seg.log).read_bytes()  # the whole file: an oracle independent of kdump.log's reader
            for batch in scan_batches(data):
                for r in decode_records(data, batch):
                    headers = [(k.decode(), v) for k, v in r.headers]
                    rows.append((pdir.topic, pdir.partition, seg.base_offset, batch.position, r.offset,
                                 r.timestamp, r.key, r.value, headers))
    return sorted(rows, key=lambda t: (t[0], t[1], t[4]))


def reference_batches(root: Path) -> list[tuple]:
    """(topic, partition, segment, batchPosition, baseOffset, lastOffset, count, crc) of every batch."""
    from kdump.format.batch import scan_batches
    from kdump.log.logdir import walk_partitions

    out = []
    for pdir in walk_partitions(str(root)):
        if pdir.state is not None:
            continue
        for seg in pdir.segments:
            data = Path(seg.log).read_bytes()  # type: ignore[arg-type]
            out.extend((pdir.topic, pdir.partition, seg.base_offset, b.position, b.base_offset,
                        b.last_offset, b.records_count, b.crc) for b in scan_batches(data))
    return sorted(out)


def as_tuples(rows: list[dict]) -> list[tuple]:
    """Arrow/Spark rows (dicts) in the reference's shape and order."""
    out = []
    for r in rows:
        headers = [(h["key"], h["value"]) for h in r["headers"]]
        out.append((r["topic"], r["partition"], r["segment"], r["batchPosition"], r["offset"], r["timestamp_ms"],
                    None if r["key"] is None else bytes(r["key"]),
                    None if r["value"] is None else bytes(r["value"]),
                    [(k, None if v is None else bytes(v)) for k, v in headers]))
    return sorted(out, key=lambda t: (t[0], t[1], t[4]))


def start_spark(master: str = "local[2]"):  # type: ignore[no-untyped-def]
    """The test SparkSession (small, quiet, UTC, fast JVM start); getOrCreate, so test modules share one."""
    import sys
    import tempfile

    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable          # workers must see kdump's interpreter
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if SparkSession.getActiveSession() is None:
        _with_class_archive()
    session = (SparkSession.builder.master(master).appName("kdump-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               # Temp files (extracted native libraries, block manager dirs) where Python's go: under the
               # session's basetemp in a test run (tests/conftest.py), removed with it.
               .config("spark.local.dir", tempfile.gettempdir())
               .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData "
                       f"-Djava.io.tmpdir={tempfile.gettempdir()}")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session


def _with_class_archive() -> None:
    """Spark drivers started from now on (this one, ``kdump spark`` subprocesses) use the class-data
    archive (tests/kafka/jvm_archive.py), made first if this machine has none."""
    import tempfile

    from jvm_archive import QUIET, ensure_spark_archive

    opts = os.environ.get("SPARK_SUBMIT_OPTS", "")
    if QUIET[0] not in opts:
        with tempfile.TemporaryDirectory(prefix="kdump-cds-") as scratch:
            flags = ensure_spark_archive(Path(__file__).resolve().parents[2] / "fixtures" / "logdirs" / "txn-1",
                                         Path(scratch))
        os.environ["SPARK_SUBMIT_OPTS"] = f"{opts} {flags}".strip()


def skip_reason() -> str | None:
    """Why Spark tests cannot run here (None when they can)."""
    import shutil
    import subprocess

    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark/pyarrow not installed: pip install 'kdump[spark]'"
    home = os.environ.get("JAVA_HOME")
    java = shutil.which("java", path=os.path.join(home, "bin")) if home else shutil.which("java")
    if java is None:
        return "Java is not installed (PySpark needs a JVM): install a JDK 17 or set JAVA_HOME"
    try:
        subprocess.run([java, "-version"], capture_output=True, check=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as err:
        return f"java -version failed: {err}"
    return None
