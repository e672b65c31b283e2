"""Class-data sharing archives (AppCDS, JDK 13+) for the JVMs the tests start, made once per machine.

The test run is CPU-bound on 2 cores, and much of a short-lived JVM's CPU goes to loading and
verifying classes. An archive of the classes one run of a classpath loaded lets the next runs map
them instead (measured on 2 cores):

- Spark: a local session reading one partition through the ``kafka-log`` source took 24 CPU-s, 14 to
  18 with the archive. Made by one small application run with ``-XX:ArchiveClassesAtExit`` (about
  20 s) before the first test session starts Spark (``ensure_spark_archive``); every driver started
  through ``spark-submit`` gets it through ``SPARK_SUBMIT_OPTS`` (tests/conftest.py), the in-process
  test session and ``kdump spark`` subprocesses alike.
- Kafka: 4.4.0's ``StorageTool format`` took 1.5 CPU-s, 0.8 with the archive. The first run of a
  classpath that exits by itself (``StorageTool``, the test drivers run to completion) writes the
  archive as it exits (1.6 s more, once); brokers and background drivers on that classpath then use it.

Archives live beside the Kafka jars (``real_kafka.cache_dir``, ``jvm-cds/``), named after
what they depend on: the JVM, and the classpath's jars with their sizes and times. A JVM that cannot
use an archive (another JDK, other jars) runs as without it and says nothing (``-Xlog:cds=off``), so
output the tests compare is never touched; a JVM killed while it writes one leaves a ``.partial``
file that nothing uses.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import importlib.metadata
import importlib.util
import itertools
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Silent when an archive does not fit this JVM; and a JDK without dynamic archives (before 13) ignores
# the options rather than refuse to start.
QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off", "-XX:+IgnoreUnrecognizedVMOptions")
_partials = itertools.count()
_keys: dict[str, str] = {}


def _cache() -> Path:
    from real_kafka import cache_dir  # beside this file; imported late: it imports broker, which imports this

    return cache_dir() / "jvm-cds"


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    java = shutil.which("java", path=os.path.join(home, "bin")) if home else shutil.which("java")
    return None if java is None else os.path.realpath(java)


def _archive(name: str, depends_on: str) -> Path | None:
    java = _java()
    if java is None:
        return None
    key = f"{java}:{os.stat(java).st_mtime_ns}:{depends_on}"
    return _cache() / f"{name}-{hashlib.sha1(key.encode()).hexdigest()[:16]}.jsa"


def _use(path: Path | None) -> list[str]:
    return [f"-XX:SharedArchiveFile={path}", *QUIET] if path is not None and path.is_file() else []


# ---- Kafka: one archive per classpath, written by its first run that exits by itself -----------------

class ClasspathArchive:
    """The archive of one classpath: ``flags`` for a JVM that may write it (``may_write``) or only use it;
    after such a JVM exited with status 0, ``settle`` publishes what it wrote."""

    def __init__(self, classpath: str) -> None:
        if classpath not in _keys:   # the jars behind a "dir/*" entry, with their sizes and times
            entries = []
            for entry in classpath.split(":"):
                for path in sorted(glob.glob(entry)) if entry.endswith("*") else [entry]:
                    try:
                        stat = os.stat(path)
                        entries.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}")
                    except OSError:
                        entries.append(path)
            _keys[classpath] = ",".join(entries)
        # The JVM refuses to archive a classpath with a non-empty directory in it ("Cannot have non-empty
        # directory in paths"), and fails to start: such a classpath gets no archive.
        has_directory = any(not entry.endswith("*") and os.path.isdir(entry) for entry in classpath.split(":"))
        self.path = None if has_directory else _archive("classpath", _keys[classpath])
        self.partial: Path | None = None

    def flags(self, *, may_write: bool = False) -> list[str]:
        if self.path is None or self.path.is_file() or not may_write:
            return _use(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.partial = self.path.with_name(f"{self.path.name}.{os.getpid()}-{next(_partials)}.partial")
        return [f"-XX:ArchiveClassesAtExit={self.partial}", *QUIET]

    def settle(self, returncode: int | None) -> None:
        if self.partial is None or self.path is None:
            return
        try:
            if returncode == 0 and self.partial.is_file():
                os.replace(self.partial, self.path)   # another process's equal archive may be replaced
        finally:
            self.partial.unlink(missing_ok=True)
            self.partial = None


def run_writing_archive(classpath: str, command: Callable[[list[str]], list[str]],
                        **run: Any) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(command(flags), **run)`` for a JVM on ``classpath`` that exits by itself, with
    flags that write the classpath's archive if there is none yet (published if it exits with 0)."""
    archive = ClasspathArchive(classpath)
    returncode = None
    try:
        done: subprocess.CompletedProcess[str] = subprocess.run(command(archive.flags(may_write=True)), **run)
        returncode = done.returncode
        return done
    finally:
        archive.settle(returncode)


# ---- Spark: one archive, made by a small application before the first session ------------------------

# A session and a count through the kafka-log source: the classes every test application loads (with a
# Parquet write as well the archive took twice as long to make).
_SPARK_JOB = """
import sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").getOrCreate())
spark.read.format("kafka-log").load(sys.argv[1]).count()
spark.stop()
"""


def _spark_archive() -> Path | None:
    """Nothing is imported: this runs at every test session's start."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        return None
    version = importlib.metadata.version("pyspark")
    return _archive(f"spark-{version}", f"{Path(spec.origin).parent / 'jars'}:{version}")


def spark_archive_flags() -> str:
    """The JVM options that use the Spark archive, if it has been made ("" otherwise)."""
    return " ".join(_use(_spark_archive()))


def ensure_spark_archive(partition: Path, scratch: Path) -> str:
    """Make the Spark archive if it is missing (one process at a time; another waits for it), then
    return ``spark_archive_flags()``. A failure to make it only costs speed: the flags are then empty."""
    path = _spark_archive()
    if path is None:
        return ""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / ".spark.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.is_file():
            partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
            env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
                       SPARK_LOCAL_IP="127.0.0.1",
                       SPARK_SUBMIT_OPTS=" ".join((os.environ.get("SPARK_SUBMIT_OPTS", ""),
                                                   f"-XX:ArchiveClassesAtExit={partial}", *QUIET)))
            try:
                done = subprocess.run([sys.executable, "-c", _SPARK_JOB, str(partition)], cwd=scratch, env=env,
                                      capture_output=True, timeout=300)
                if done.returncode == 0 and partial.is_file():
                    os.replace(partial, path)
            except subprocess.TimeoutExpired:
                pass
            finally:
                partial.unlink(missing_ok=True)
    return spark_archive_flags()
