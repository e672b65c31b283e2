"""A cluster's history on Spark: ``kdump spark export --cluster`` (Parquet written in the tasks), the
``kafka-log`` data source with ``cluster=true`` (Spark's own writer) and ``kdump export --cluster`` (no Spark)
write equal datasets, row for row, and the same manifest, on a cluster ``kdump gen`` writes with an unclean
election (so the history and its lost records come from different brokers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_export_parity import _plain

from kdump.cli.main import cli
from kdump.spark.jobs import export_frame, export_in_tasks

pytestmark = pytest.mark.spark


def read_back(spark: Any, out: Path) -> list[dict]:
    rows = [_plain(r.asDict(recursive=True)) for r in spark.read.parquet(str(out)).collect()]
    return sorted(rows, key=lambda r: (r["topic"], r["partition"], r["offset"], r["broker"]))


def test_cli_spark_and_data_source_write_the_same_history(spark: Any, tmp_path: Path) -> None:
    gen = CliRunner().invoke(cli, ["gen", str(tmp_path / "c"), "--brokers", "3", "--replica-scenario", "unclean",
                                   "--records", "160"])
    assert gen.exit_code == 0, gen.output
    paths = sorted(str(p) for p in (tmp_path / "c").glob("broker-*"))
    options = {"cluster": "true", "includeLost": "true", "splitBytes": "8k"}
    in_tasks = export_in_tasks(spark, paths, str(tmp_path / "tasks"), options=options)
    frame = export_frame(spark, paths, str(tmp_path / "frame"), options=options)
    result = CliRunner().invoke(cli, ["export", "--cluster", "--include-lost", *paths, "--to", str(tmp_path / "cli"),
                                      "--split-bytes", "8k", "-j", "2"])
    assert result.exit_code == 0, result.output
    expected = read_back(spark, tmp_path / "cli")
    assert in_tasks == frame == len(expected)
    assert read_back(spark, tmp_path / "tasks") == expected
    assert read_back(spark, tmp_path / "frame") == expected
    assert {r["fate"] for r in expected} == {"kept", "lost-committed"}
    offsets = [(r["partition"], r["offset"]) for r in expected if r["fate"] == "kept"]
    assert len(offsets) == len(set(offsets))                    # each record of the history once
    manifest = json.loads((tmp_path / "cli" / "_kdump_cluster.json").read_text())
    assert json.loads((tmp_path / "tasks" / "_kdump_cluster.json").read_text()) == manifest
