"""A class-data sharing archive for the Spark driver JVMs the tests start (AppCDS, JDK 13+).

A Spark application spends about 24 CPU-s on 2 cores before its first query returns, most of it
loading and verifying Spark's classes; with an archive of the classes one such application loaded,
the next ones spend 14 to 18 CPU-s (measured: a local[1] session reading one partition through the
``kafka-log`` source). The archive is made once per machine, by one small application run with
``-XX:ArchiveClassesAtExit`` (about 20 s), and kept beside the Kafka jars
(``tests/kafka/real_kafka.cache_dir``), named after what it depends on: the JVM and pyspark's jars.

Every driver started through ``spark-submit`` gets the flags through ``SPARK_SUBMIT_OPTS``
(tests/conftest.py): the in-process test session and ``kdump spark`` subprocesses alike. A JVM that
cannot use the archive (another JDK, other jars) runs as without it and says nothing
(``-Xlog:cds=off``), so output the tests compare is never touched.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
# What the archive is made from: a session and a count through the kafka-log source (the classes
# every test application loads; a Parquet write as well made the archive take twice as long to make).
_JOB = """
import sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").getOrCreate())
spark.read.format("kafka-log").load(sys.argv[1]).count()
spark.stop()
"""


def archive_path() -> Path | None:
    """Where the archive for this JVM and this pyspark lives (None without java or pyspark). Nothing
    is imported: this runs at every test session's start."""
    home = os.environ.get("JAVA_HOME")
    java = shutil.which("java", path=os.path.join(home, "bin")) if home else shutil.which("java")
    spec = importlib.util.find_spec("pyspark")
    if java is None or spec is None or spec.origin is None:
        return None
    version = importlib.metadata.version("pyspark")
    java_real = os.path.realpath(java)
    key = f"{java_real}:{os.stat(java_real).st_mtime_ns}:{Path(spec.origin).parent / 'jars'}:{version}"
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kafka"))
    from real_kafka import cache_dir

    return cache_dir() / "spark-cds" / f"spark-{version}-{hashlib.sha1(key.encode()).hexdigest()[:16]}.jsa"


def archive_flags() -> str:
    """The JVM options that use the archive, if it has been made ("" otherwise)."""
    path = archive_path()
    return f"-XX:SharedArchiveFile={path} {QUIET}" if path is not None and path.is_file() else ""


def ensure_archive(partition: Path, scratch: Path) -> str:
    """Make the archive if it is missing (one process at a time; another one waits for it), then
    return ``archive_flags()``. A failure to make it only costs speed: the flags are then empty."""
    path = archive_path()
    if path is None:
        return ""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.is_file():
            partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
            env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
                       SPARK_LOCAL_IP="127.0.0.1",
                       SPARK_SUBMIT_OPTS=f"{os.environ.get('SPARK_SUBMIT_OPTS', '')} "
                                         f"-XX:ArchiveClassesAtExit={partial} {QUIET}")
            try:
                done = subprocess.run([sys.executable, "-c", _JOB, str(partition)], cwd=scratch,
                                      env=env, capture_output=True, timeout=300)
                if done.returncode == 0 and partial.is_file():
                    os.replace(partial, path)
            except subprocess.TimeoutExpired:
                pass
            finally:
                partial.unlink(missing_ok=True)
    return archive_flags()
