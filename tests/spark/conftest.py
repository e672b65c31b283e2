"""One local[2] SparkSession for the whole test session, configured by logbuild.start_spark.

Skipped with the reason when pyspark/pyarrow or Java is missing; these tests run for real in CI.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))   # the logbuild helper

from logbuild import skip_reason, start_spark, write_log_dirs


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    session = start_spark()
    yield session
    session.stop()


@pytest.fixture(scope="session")
def log_dirs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two topics, five partitions, ten segments of small batches (all codecs), with indexes."""
    return write_log_dirs(tmp_path_factory.mktemp("spark-logs"))
