"""``kdump spark verify`` / ``kdump spark export`` through click's CliRunner on the shared local Spark."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent.parent / "spark"))

from logbuild import corrupt_byte, reference_rows, skip_reason, start_spark, write_partition

from kdump.cli.main import cli

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark() -> Iterator[object]:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    yield start_spark()          # the session tests/spark started, when run together; not stopped here


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-logs") / "logs"
    write_partition(root, "orders", 0, segments=2, batches=3)
    write_partition(root, "orders", 1, segments=1, batches=2)
    return root


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_verify_clean(spark, logs: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    report = tmp_path / "report.json"
    code, out, err = run("spark", "verify", str(logs), "--master", "local[2]", "--report", str(report))
    assert code == 0, err
    s0, s1 = _size(logs / "orders-0"), _size(logs / "orders-1")
    assert out.splitlines() == [
        "TOPIC  PARTITION SEGMENTS BATCHES RECORDS BYTES PROBLEMS",
        f"orders         0        2       6     120 {s0:>5}        0",
        f"orders         1        1       2      40 {s1:>5}        0",
        f"total                   3       8     160 {s0 + s1:>5}        0",
        "verify OK: 9 files in 3 segments of 2 partitions (8 batches, 160 records) checked: 0 errors, 0 notes",
    ]
    data = json.loads(report.read_text())
    assert (data["segments"], data["batches"], data["records"], data["findings"]) == (3, 8, 160, [])


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*.log"))


def test_verify_reports_crc_and_index_problems(spark, logs: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    copy = tmp_path / "logs"
    shutil.copytree(logs, copy)
    log = sorted((copy / "orders-0").glob("*.log"))[0]
    corrupt_byte(log, 100)                                       # inside batch 0's records
    index = sorted((copy / "orders-1").glob("*.index"))[0]
    index.write_bytes(index.read_bytes()[:4] + (7).to_bytes(4, "big"))   # points into a batch
    code, out, _ = run("spark", "verify", str(copy), "--report", "-")
    assert code == 1
    problems = [f for f in json.loads(out)["findings"] if f["severity"] == "error"]
    assert sorted((p["file"], p["check"]) for p in problems) == [
        (str(log), "crc"), (str(index), "position-not-batch")]
    crc = next(p for p in problems if p["check"] == "crc")
    assert crc["position"] == 0 and crc["text"].startswith("Record is corrupt (stored crc = ")
    assert next(p for p in problems if p["check"] != "crc")["position"] == 7


def test_verify_unreadable_path_exits_2(tmp_path: Path) -> None:
    code, _, err = run("spark", "verify", str(tmp_path / "missing"))
    assert code == 2
    assert err.startswith("Error: ") and "No such file or directory" in err
    code, _, err = run("spark", "verify", str(tmp_path))
    assert (code, err) == (2, f"Error: {tmp_path}: no partition directories or segment files found: nothing was "
                              f"checked\n")


def test_export_parquet_partitioned_by_topic(spark, logs: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    code, stdout, err = run("spark", "export", str(logs), "--to", str(out), "--partition-by", "topic")
    assert code == 0, err
    assert stdout == f"Wrote 160 record rows to {out} (parquet)\n"
    assert (out / "topic=orders").is_dir()
    back = spark.read.parquet(str(out))
    assert sorted(r.offset for r in back.filter("partition = 1").collect()) == \
        [t[4] for t in reference_rows(logs) if t[1] == 1]
    code, _, err = run("spark", "export", str(logs), "--to", str(out))
    assert code == 2 and err.startswith("Error: ") and "already exists" in err


def test_export_rejects_unknown_partition_column(logs: Path, tmp_path: Path) -> None:
    code, _, err = run("spark", "export", str(logs), "--to", str(tmp_path / "o"), "--partition-by", "nope")
    assert (code, err) == (2, "Error: --partition-by nope: no such column at level=record\n")


def test_missing_pyspark_gives_one_line(monkeypatch: pytest.MonkeyPatch, logs: Path) -> None:
    import builtins

    real_import = builtins.__import__

    def no_spark(name: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name.startswith(("pyspark", "kdump.spark")):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_spark)
    code, out, err = run("spark", "verify", str(logs))
    assert (code, out, err) == (2, "", "Error: PySpark is not installed: pip install 'kdump[spark]'\n")
