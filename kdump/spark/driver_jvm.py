"""JVM options for the driver of a local session that kdump starts (``--master local[N]``).

On a local master the driver JVM is the executor too: it shares the machine's cores with the Python
workers that decode. When no rows cross into the JVM (tasks that write their own Parquet, verify,
recover, replicas) what the JVM spends while the tasks run is upkeep, and it is not small. Measured
on Spark 4.3 and Java 17, 12 M records in 8 tasks (docs/spark.md, "Exports"): the driver used 2-3
CPU-s beside the workers' 9-12, of it 0.8-1.6 in the C2 compiler threads (each task runs Spark's
task-launch and serializer paths once more, so methods keep crossing C2's thresholds) and 0.7-1.0 in
G1's concurrent marking (a humongous allocation, the 1 MiB chunks of Spark's ChunkedByteBufferOutputStream,
started a marking cycle about once a task: -Xlog:gc). With the parallel collector (no concurrent
phase) and C1 only, the same job's JVM used 0.4 CPU-s.

Where rows do cross (a DataFrame-path export: the JVM encodes every row) the JVM's defaults are
right and are kept: C1 only took 2.8x the CPU there, and the parallel collector gained nothing
(20 CPU-s either way for 3 M rows; a 12 M-row count() took 15-18 CPU-s of JVM against G1's 14-17).
So callers say which work the session is for. A collector or compiler the user chose
(``--conf spark.driver.extraJavaOptions`` or ``spark.driver.defaultJavaOptions``, ``SPARK_SUBMIT_OPTS``,
``JAVA_TOOL_OPTIONS``, ``JDK_JAVA_OPTIONS``) wins: two collectors on one command line stop the JVM
from starting ("Multiple garbage collectors selected"). Masters other than local are left alone:
their executors are the cluster's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# Environment variables that put options on the driver's command line: Spark's launcher adds
# SPARK_SUBMIT_OPTS (launcher/SparkSubmitCommandBuilder.java), the JVM reads the others itself.
JAVA_OPTIONS_ENV = ("SPARK_SUBMIT_OPTS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")
PARALLEL_GC = "-XX:+UseParallelGC"
C1_ONLY = "-XX:TieredStopAtLevel=1"
_CHOSEN_GC = re.compile(r"-XX:[+-]Use\w*GC\b")
_CHOSEN_COMPILER = re.compile(r"-XX:[+-]?(?:TieredStopAtLevel|TieredCompilation)\b")


def is_local(master: str) -> bool:
    """``local``, ``local[N]``, ``local[*]``, ``local[N,F]``: the driver runs the tasks itself."""
    return master == "local" or master.startswith("local[")


def local_driver_options(master: str, theirs: str, environ: Mapping[str, str], *, rows_in_jvm: bool) -> list[str]:
    """The options kdump adds to a local driver's command line, before ``theirs`` (the user's driver
    Java options from the Spark configuration)."""
    if rows_in_jvm or not is_local(master):
        return []
    chosen = " ".join([theirs, *(environ.get(name, "") for name in JAVA_OPTIONS_ENV)])
    options = []
    if not _CHOSEN_GC.search(chosen):
        options.append(PARALLEL_GC)
    if not _CHOSEN_COMPILER.search(chosen):
        options.append(C1_ONLY)
    return options
