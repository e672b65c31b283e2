"""``kdump spark recover PATH...`` prints what ``kdump recover PATH...`` prints and exits the same way,
on the real brokers' log dirs (both releases at once), on damaged copies and on a dir the broker
refuses; the plans are made in Spark tasks (one per partition dir)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "spark"))

from logbuild import skip_reason, start_spark

from kdump_testing import run_kdump

pytestmark = pytest.mark.spark

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real-broker"


@pytest.fixture(scope="module")
def spark() -> Iterator[object]:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    yield start_spark()          # the session tests/spark started, when run together; not stopped here


def _damaged(tmp_path: Path) -> list[Path]:
    """Copies of both real log dirs as a killed broker leaves them, with a flipped byte and a lost index."""
    dirs = []
    for release in ("4.3.0", "3.9.2"):
        copy = tmp_path / release
        shutil.copytree(REAL / release / "logs", copy)
        (copy / ".kafka_cleanshutdown").unlink()
        (copy / "recovery-point-offset-checkpoint").write_text("0\n0\n")
        first = min((copy / "sequence-0").glob("*.log"))
        data = bytearray(first.read_bytes())
        data[len(data) // 2] ^= 0x01
        first.write_bytes(bytes(data))
        min((copy / "plain-0").glob("*.index")).unlink()
        dirs.append(copy)
    return dirs


def _both(*args: str) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    local = run_kdump("recover", *args)
    spark = run_kdump("spark", "recover", *args, "--master", "local[2]")
    return (local.exit_code, local.stdout, local.stderr), (spark.exit_code, spark.stdout, spark.stderr)


@pytest.mark.parametrize("json_output", [False, True], ids=["text", "json"])
def test_the_real_log_dirs_as_kdump_recover(spark, json_output: bool) -> None:  # type: ignore[no-untyped-def]
    args = [str(REAL / "4.3.0" / "logs"), str(REAL / "3.9.2" / "logs"), *(["--json"] if json_output else [])]
    local, remote = _both(*args)
    assert local[0] == 0, local[2]
    assert remote == local


@pytest.mark.parametrize("json_output", [False, True], ids=["text", "json"])
def test_damaged_copies_as_kdump_recover(spark, tmp_path: Path, json_output: bool) -> None:  # type: ignore[no-untyped-def]
    dirs = _damaged(tmp_path)
    local, remote = _both(*map(str, dirs), *(["--json"] if json_output else []))
    assert local[0] == 1, local[2]
    assert "sequence" in local[1] and "plain" in local[1]
    assert remote == local


def test_a_refused_dir_as_kdump_recover(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dirs = _damaged(tmp_path)
    (dirs[1] / "log-start-offset-checkpoint").write_text("0\n1\n")
    local, remote = _both(*map(str, dirs))
    assert local[0] == 2
    assert local[2].startswith(f"Error: {dirs[1] / 'log-start-offset-checkpoint'}: ")
    assert remote == local
