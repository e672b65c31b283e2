"""kdump on a real Spark standalone cluster: a master and two one-core workers on 127.0.0.1.

One application plays every check, since each application on a standalone cluster costs a driver JVM
and an executor JVM per worker (about 30 s here): a driver in a fresh interpreter (this test process
already has a local SparkSession) starts its session the way ``kdump spark --master spark://...``
does (``kdump.cli.spark.spark_session``), counts a DataFrame read from local dirs and from S3, then
runs ``kdump spark verify`` and ``kdump spark export`` through the CLI, which reuse that session.
Executors run in their own JVMs and Python workers. The teardown leaves no JVM behind (the fixture
checks the daemons' process groups).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kdump[spark]'")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow not installed: pip install 'kdump[spark]'")

from logbuild import reference_rows, skip_reason  # noqa: E402
from s3server import S3Server  # noqa: E402
from standalone import Cluster  # noqa: E402

from kdump_testing import run_kdump  # noqa: E402


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    started = Cluster(tmp_path_factory.mktemp("standalone"), workers=2)
    try:
        yield started.start()
    finally:
        started.stop()
    assert started.alive_group_members() == [], "processes left running after the cluster stopped"


DRIVER = """
    import contextlib, io, json, sys, time
    from kdump.cli.main import cli
    from kdump.cli.spark import SessionSettings, spark_session

    url, logs, s3_uri, export_to = sys.argv[1:5]
    conf = tuple(pair.split("=", 1) for pair in sys.argv[5:])
    conf += (("spark.executor.memory", "512m"),
             ("spark.executor.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"),
             # Executors register a few seconds after the application starts: Spark's own wait
             # (StandaloneSchedulerBackend.sufficientResourcesRegistered, checked before the
             # SparkContext returns) holds the session until both workers' cores are there.
             ("spark.cores.max", "2"),
             ("spark.scheduler.minRegisteredResourcesRatio", "1.0"),
             ("spark.scheduler.maxRegisteredResourcesWaitingTime", "180s"))

    def command(*args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(list(args), prog_name="kdump", standalone_mode=False) or 0
            except SystemExit as exit:
                code = exit.code
        return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()[-4000:]}

    results = {}
    with spark_session(SessionSettings(url, tuple(tuple(c) for c in conf)), "kdump-cluster-test") as spark:
        # The scheduler counts an executor when it registers; its block manager (what this counts)
        # registers just after, so look until both are there or a minute has passed.
        deadline = time.monotonic() + 60
        while True:
            results["executors"] = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
            if results["executors"] >= 2 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        counts = results["counts"] = []
        for location in (logs, s3_uri):
            df = spark.read.format("kafka-log").option("splitBytes", "2k").load(location)
            counts.append({"rows": df.count(), "tasks": df.rdd.getNumPartitions(),
                           "valid": df.filter("isvalid").count()})
        results["verify"] = command("spark", "verify", logs, "--master", url)
        results["export"] = command("spark", "export", logs, "--to", export_to, "--master", url,
                                    "--split-bytes", "2k")
    print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def application(cluster: Cluster, s3: S3Server, log_dirs: Path,
                tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What the one application on the cluster found. S3 by the recipe of docs/spark.md: the workers
    were started without any AWS_* variable; the driver reads them from its own environment,
    executors get them through spark.executorEnv.*."""
    uri = s3.upload(log_dirs, "cluster-bucket", "kafka/logs")
    export_to = tmp_path_factory.mktemp("cluster-export") / "records"
    conf = [f"spark.executorEnv.{k}={v}" for k, v in s3.env.items()]
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(DRIVER), cluster.url, str(log_dirs), uri,
                           str(export_to), *conf], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYSPARK_PYTHON=sys.executable, **s3.env))
    assert done.returncode == 0, done.stderr[-4000:]
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "export_to": export_to}


def test_kdump_spark_verify_on_the_cluster_equals_kdump_verify(application: dict[str, Any], log_dirs: Path) -> None:
    local = run_kdump("verify", str(log_dirs))
    remote = application["verify"]
    assert (remote["code"], local.exit_code) == (0, 0), remote["stderr"]
    assert remote["stdout"].strip().splitlines()[-1] == local.stdout.strip().splitlines()[-1]


def test_kdump_spark_export_on_the_cluster(application: dict[str, Any], log_dirs: Path) -> None:
    result = application["export"]
    assert result["code"] == 0, result["stderr"]
    table = pq.read_table(application["export_to"])
    expected = reference_rows(log_dirs)
    assert table.num_rows == len(expected)
    assert result["stdout"] == f"Wrote {len(expected)} record rows to {application['export_to']} (parquet)\n"
    got = sorted(zip(table["topic"].to_pylist(), table["partition"].to_pylist(), table["offset"].to_pylist(),
                     strict=True))
    assert got == sorted((r[0], r[1], r[4]) for r in expected)


def test_dataframe_count_on_the_cluster_from_local_dirs_and_s3(application: dict[str, Any], log_dirs: Path) -> None:
    expected = len(reference_rows(log_dirs))
    assert application["executors"] == 2
    for out in application["counts"]:   # local dirs, then S3
        assert out == {"rows": expected, "tasks": out["tasks"], "valid": expected}
        assert out["tasks"] > 10
