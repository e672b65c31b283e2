"""`kdump replicas` on s3:// URIs (a moto S3 server on 127.0.0.1) says what it says of the same dirs on local
disk, reading the same header bytes; and without pyarrow a URI is one plain error naming what to install.

The local run is the reference: its JSON is established against real Kafka by tests/kafka (issue 22); here
only the place the bytes come from changes, so the two outputs must be equal once each ``logDir``/``path``
prefix is mapped."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from s3server import ACCESS_KEY, SECRET_KEY, S3Server

from kdump.broker.replica_report import ReplicasOptions, analyze
from kdump.log.headers import ReadCounter
from kdump_testing import run_kdump

BROKERS = ("broker-1", "broker-2", "broker-3")


def _unclean_cluster(tmp_path: Path) -> Path:
    out = tmp_path / "cluster"
    made = run_kdump("gen", str(out), "--brokers", "3", "--replica-scenario", "unclean", "--partitions", "1",
                     "--records", "60", "--records-per-batch", "1", "--value-size", "20000",
                     "--segment-bytes", str(1 << 20))
    # batches over headers.SMALL_BATCH_BYTES: past a segment's first window, one pread per header
    assert made.exit_code == 0, made.stderr
    return out


def _relative(stdout: str, prefix: str, suffix: str = "") -> list[dict[str, Any]]:
    """The JSON lines with each replica's ``logDir`` and ``path`` cut to the part below ``prefix``."""
    out = [json.loads(line) for line in stdout.splitlines()]
    for partition in out:
        for replica in partition["replicas"]:
            for key in ("logDir", "path"):
                assert replica[key].startswith(prefix) and replica[key].endswith(suffix), replica[key]
                replica[key] = replica[key][len(prefix):len(replica[key]) - len(suffix)]
    return out


def test_replicas_on_s3_equal_the_local_run(s3: S3Server, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in s3.env.items():
        monkeypatch.setenv(name, value)
    out = _unclean_cluster(tmp_path)
    uri = s3.upload(out, "replicas-bucket", "copy")
    local = run_kdump("replicas", *(str(out / b) for b in BROKERS), "--json")
    remote = run_kdump("replicas", *(f"{uri}/{b}" for b in BROKERS), "--json")
    assert local.exit_code == 3, local.stderr          # the unclean election loses records
    assert (remote.exit_code, remote.stderr) == (local.exit_code, local.stderr)
    assert _relative(remote.stdout, uri) == _relative(local.stdout, str(out))
    # the same header-only reads: the same bytes, a small share of what the segments hold
    counts = []
    for paths in ([str(out)], [uri]):
        counter = ReadCounter()
        for _ in analyze(paths, ReplicasOptions(None, None, None, False, None), counter):
            pass
        counts.append(counter.bytes_read)
    segments = sum(p.stat().st_size for p in out.rglob("*.log") if "__cluster_metadata" not in str(p))
    assert counts[0] == counts[1] and 0 < counts[1] < segments / 4


def test_a_uri_without_pyarrow_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow.fs", None)   # as if pyarrow were not installed
    monkeypatch.delitem(sys.modules, "kdump.log.arrow_files", raising=False)
    result = run_kdump("replicas", "s3://bucket/broker-1", "s3://bucket/broker-2")
    assert result.exit_code == 2
    assert result.stderr == "Error: s3://bucket/broker-1: reading a URI needs pyarrow: pip install 'kdump[spark]'\n"


@pytest.mark.spark
def test_spark_replicas_on_s3_prints_what_kdump_replicas_prints(spark: object, s3: S3Server, tmp_path: Path) -> None:
    # The session's Python workers started without AWS_* variables: the endpoint and the credentials
    # travel in each URI (as for the data source, tests/spark/test_s3.py), and every location keeps them.
    out = _unclean_cluster(tmp_path)
    bucket = s3.upload(out, "spark-replicas-bucket", "copy").removeprefix("s3://")
    base = f"s3://{ACCESS_KEY}:{SECRET_KEY}@{bucket}"
    local = run_kdump("replicas", *(str(out / b) for b in BROKERS), "--json")
    remote = run_kdump("spark", "replicas", *(f"{base}/{b}?{s3.query}" for b in BROKERS), "--json",
                       "--master", "local[2]")
    assert (remote.exit_code, remote.stderr) == (local.exit_code, local.stderr) == (3, "")
    assert _relative(remote.stdout, base, "?" + s3.query) == _relative(local.stdout, str(out))
