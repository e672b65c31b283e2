"""`kdump replicas` on s3:// URIs (a moto S3 server on 127.0.0.1) says what it says of the same dirs on local
disk, reading the same header bytes; and without pyarrow a URI is one plain error naming what to install.

The local run is the reference: its JSON is established against real Kafka by tests/kafka (issue 22); here
only the place the bytes come from changes, so the two outputs must be equal once each ``logDir``/``path``
prefix is mapped."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from s3server import S3Server

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


def _as_uris(text: str, local: Path, uri: str) -> list[dict[str, object]]:
    return [json.loads(line.replace(str(local), uri)) for line in text.splitlines()]


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
    assert json.loads(remote.stdout.splitlines()[0])["replicas"][0]["logDir"] == f"{uri}/broker-1"
    assert [json.loads(line) for line in remote.stdout.splitlines()] == _as_uris(local.stdout, out, uri)
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
