"""kdump on a real Spark standalone cluster: a master and two one-core workers on 127.0.0.1.

The driver runs in a subprocess (this test process already has a local SparkSession), so these are
the commands a user types: ``kdump spark verify/export --master spark://...`` and a DataFrame count
through spark-submit-style configuration, executors in their own JVMs and Python workers. The
teardown leaves no JVM behind (the fixture checks the daemons' process groups).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

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


def run_driver(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python *args`` as a Spark driver in a fresh interpreter (``kdump spark`` reuses an active session)."""
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYSPARK_PYTHON=sys.executable, **(env or {})))


def count_on(url: str, locations: list[str], extra: str = "", env: dict[str, str] | None = None) -> list[dict]:
    result = run_driver("-c", textwrap.dedent(COUNT.format(extra=extra)), url, *locations, env=env)
    assert result.returncode == 0, result.stderr[-4000:]
    return [json.loads(line) for line in result.stdout.strip().splitlines()[-len(locations):]]


COUNT = """
    import json, sys
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master(sys.argv[1]).appName("kdump-cluster-test")
             .config("spark.ui.enabled", "false").config("spark.executor.memory", "512m")
             .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
             .config("spark.executor.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
             {extra}.getOrCreate())
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
    for location in sys.argv[2:]:   # one application for every location: each costs its executors' start
        df = spark.read.format("kafka-log").option("splitBytes", "2k").load(location)
        print(json.dumps({{"rows": df.count(), "tasks": df.rdd.getNumPartitions(), "executors": executors,
                          "valid": df.filter("isvalid").count()}}))
"""


def test_kdump_spark_verify_on_the_cluster_equals_kdump_verify(cluster: Cluster, log_dirs: Path) -> None:
    local = run_kdump("verify", str(log_dirs))
    remote = run_driver("-m", "kdump", "spark", "verify", str(log_dirs), "--master", cluster.url)
    assert (remote.returncode, local.exit_code) == (0, 0), remote.stderr[-4000:]
    assert remote.stdout.strip().splitlines()[-1] == local.stdout.strip().splitlines()[-1]


def test_kdump_spark_export_on_the_cluster(cluster: Cluster, log_dirs: Path, tmp_path: Path) -> None:
    out = tmp_path / "records"
    result = run_driver("-m", "kdump", "spark", "export", str(log_dirs), "--to", str(out), "--master", cluster.url,
                        "--split-bytes", "2k")
    assert result.returncode == 0, result.stderr[-4000:]
    table = pq.read_table(out)
    expected = reference_rows(log_dirs)
    assert table.num_rows == len(expected)
    got = sorted(zip(table["topic"].to_pylist(), table["partition"].to_pylist(), table["offset"].to_pylist(),
                     strict=True))
    assert got == sorted((r[0], r[1], r[4]) for r in expected)


def test_dataframe_count_on_the_cluster_from_local_dirs_and_s3(cluster: Cluster, s3: S3Server, log_dirs: Path) -> None:
    # S3 by the recipe of docs/spark.md: the workers were started without any AWS_* variable; the driver
    # reads them from its own environment, executors get them through spark.executorEnv.*.
    uri = s3.upload(log_dirs, "cluster-bucket", "kafka/logs")
    extra = "".join(f'.config("spark.executorEnv.{k}", "{v}")' for k, v in s3.env.items())
    local, remote = count_on(cluster.url, [str(log_dirs), uri], extra, env=s3.env)
    expected = len(reference_rows(log_dirs))
    for out in (local, remote):
        assert out == {"rows": expected, "tasks": out["tasks"], "executors": 2, "valid": expected}
        assert out["tasks"] > 10
