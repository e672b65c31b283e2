"""The two export paths give the same rows on every fixture: Parquet written inside the tasks
(``kdump spark export``'s default, and ``kdump export``) and the DataFrame path (Spark's own Parquet
writer, which other formats keep), both read back with ``spark.read.parquet``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kdump.cli.main import cli
from kdump.spark.jobs import export_frame, export_in_tasks

pytestmark = pytest.mark.spark
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def corpus(log_dirs: Path) -> list[str]:
    """Every fixture directory: the index cases, the log.dirs of every codec and format, real brokers' logs."""
    return [*sorted(str(p) for p in (FIXTURES / "corrupt-index").iterdir() if p.is_dir()),
            str(FIXTURES / "logdirs"), *sorted(str(p) for p in (FIXTURES / "real-broker").iterdir()),
            str(log_dirs)]


def _plain(value: Any) -> Any:
    if isinstance(value, bytearray | bytes):
        return bytes(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def read_back(spark: Any, out: Path) -> list[dict]:
    rows = [_plain(r.asDict(recursive=True)) for r in spark.read.parquet(str(out)).collect()]
    return sorted(rows, key=lambda r: (r["path"], r["batchPosition"], r.get("offset") or -1))


def test_in_task_and_dataframe_exports_give_the_same_rows(spark: Any, log_dirs: Path, tmp_path: Path) -> None:
    paths = corpus(log_dirs)
    options = {"splitBytes": "16k"}         # some segments cut in several splits, few tasks
    in_tasks = export_in_tasks(spark, paths, str(tmp_path / "tasks"), options=options)
    frame = export_frame(spark, paths, str(tmp_path / "frame"), options=options)
    expected = read_back(spark, tmp_path / "frame")
    assert in_tasks == frame == len(expected)
    assert read_back(spark, tmp_path / "tasks") == expected
    assert (tmp_path / "tasks" / "_SUCCESS").is_file()
    # kdump export, one process and no Spark, writes the same dataset.
    result = CliRunner().invoke(cli, ["export", *paths, "--to", str(tmp_path / "cli"), "--split-bytes", "16k"])
    assert result.exit_code == 0, result.stderr
    assert read_back(spark, tmp_path / "cli") == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cli", "frame", "tasks"]


@pytest.mark.parametrize("level, isolation", [("batch", "read_uncommitted"), ("record", "read_committed")])
def test_levels_isolation_and_partitioning_match(spark: Any, level: str, isolation: str, tmp_path: Path) -> None:
    paths = [str(FIXTURES / "logdirs")]
    options = {"isolation": isolation}
    by = ("topic", "partition")
    rows = [export(spark, paths, str(tmp_path / name), level=level, partition_by=by, options=options)
            for name, export in (("tasks", export_in_tasks), ("frame", export_frame))]
    assert rows[0] == rows[1]
    assert read_back(spark, tmp_path / "tasks") == read_back(spark, tmp_path / "frame")
    assert (tmp_path / "tasks" / "topic=txn" / "partition=1").is_dir()


def test_modes_publish_all_at_once(spark: Any, log_dirs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = export_in_tasks(spark, [str(log_dirs)], str(out))
    assert export_in_tasks(spark, [str(log_dirs)], str(out), mode="append") == first
    assert spark.read.parquet(str(out)).count() == 2 * first
    assert export_in_tasks(spark, [str(log_dirs)], str(out), mode="ignore") == 0
    assert export_in_tasks(spark, [str(log_dirs)], str(out), mode="overwrite") == first
    assert spark.read.parquet(str(out)).count() == first
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "data.csv").write_text("a,b\n")
    result = CliRunner().invoke(cli, ["spark", "export", str(log_dirs), "--to", str(foreign), "--mode", "overwrite"])
    assert result.exit_code == 2 and "was not written by kdump" in result.stderr
    assert [p.name for p in foreign.iterdir()] == ["data.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["foreign", "out"]
