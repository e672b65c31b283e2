"""``kdump spark replicas PATH...`` prints what ``kdump replicas PATH...`` prints (the same JSON and text)
and exits the same way; each partition is analysed in its own Spark task."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from logbuild import skip_reason, start_spark

from kdump.gen.cluster_generator import ClusterGenSpec, generate_cluster
from kdump.log.writer import LogConfig
from kdump_testing import run_kdump

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark() -> Iterator[object]:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    yield start_spark()


def test_spark_replicas_prints_what_kdump_replicas_prints(spark: object, tmp_path: Path) -> None:
    dirs = []
    for scenario in ("multi-round", "compacted"):
        out = tmp_path / scenario
        generate_cluster(str(out), ClusterGenSpec(f"t-{scenario}", 3, 2, scenario, 60, value_bytes=16,
                                                  log=LogConfig(segment_bytes=1024)))
        dirs.append(str(out))
    args = [*dirs, "--explain", "--json"]
    local = run_kdump("replicas", *args)
    remote = run_kdump("spark", "replicas", *args, "--master", "local[2]")
    assert local.exit_code == 3, local.stderr
    assert (remote.exit_code, remote.stdout, remote.stderr) == (local.exit_code, local.stdout, local.stderr)
    assert len(local.stdout.splitlines()) >= 4
