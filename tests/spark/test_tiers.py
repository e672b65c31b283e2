"""A tiered partition through the kafka-log data source: remote segments, then local ones, each offset once;
and ``kdump spark verify`` over a remote store gives ``kdump verify``'s findings."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyarrow", reason="pyarrow not installed: pip install 'kdump[spark]'")
sys.path.insert(0, str(Path(__file__).parent))

from test_verify_parity import cli_findings, spark_findings
from tiered_testing import build_tiered

from kdump.arrow.discovery import find_segments
from kdump.spark.datasource import KafkaLogDataSource
from kdump.spark.schema import spark_schema
from kdump_testing import run_kdump


def _offsets(paths: list[str]) -> list[int]:
    source = KafkaLogDataSource({"paths": json.dumps(paths), "splitbytes": "300"})
    reader = source.reader(spark_schema("record"))
    return [row["offset"] for p in reader.partitions() for b in reader.read(p) for row in b.to_pylist()]


def test_a_local_segment_already_copied_is_read_once(tmp_path: Path) -> None:
    t = build_tiered(tmp_path)
    # local retention has not deleted segment 20-29 yet: the log dir still holds the original of the copy
    shutil.copy(t.remote_log(2), t.log_dir / "t-0" / f"{20:020d}.log")
    segments = find_segments([str(t.remote_root), str(t.log_dir / "t-0")])
    assert [(s.base_offset, s.next_base_offset) for s in segments] == [(0, 10), (10, 20), (20, 30), (30, None)]
    assert len({s.history for s in segments[:3]}) == 1
    assert _offsets([str(t.remote_root), str(t.log_dir / "t-0")]) == list(range(40))


@pytest.mark.spark
def test_spark_verify_over_a_remote_store_equals_kdump_verify(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    t = build_tiered(tmp_path)
    data = bytearray(t.remote_log(1).read_bytes())
    data[100] ^= 1
    t.remote_log(1).write_bytes(bytes(data))
    paths = [str(t.remote_root)]
    code, found, summary = cli_findings("verify", paths)
    spark_code, spark_found, report = spark_findings(paths)
    assert code == 1 and [f["check"] for f in found if f["severity"] == "error"] == ["crc"]
    assert (spark_code, spark_found) == (code, found)
    assert (report["segments"], report["records"]) == (summary["segments"], summary["records"]) == (3, 30)


def test_remote_store_on_s3(s3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """`kdump tiered --remote s3://...` and the data source read the store where it lies (moto S3 server)."""
    for name, value in s3.env.items():
        monkeypatch.setenv(name, value)
    t = build_tiered(tmp_path)
    uri = s3.upload(t.remote_root, "tiered-bucket", "remote")
    local = run_kdump("tiered", str(t.log_dir), "--remote", str(t.remote_root), "--json")
    remote = run_kdump("tiered", str(t.log_dir), "--remote", uri, "--json")
    assert remote.exit_code == local.exit_code == 0
    assert json.loads(remote.stdout) == json.loads(local.stdout)
    assert _offsets([uri, str(t.log_dir / "t-0")]) == list(range(40))
