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
from s3server import S3Server, moto_server_command, start_s3_server


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


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """A moto S3 server on 127.0.0.1 (each test uploads to its own bucket)."""
    if moto_server_command() is None:
        pytest.skip("moto_server not installed: pip install 'moto[s3]' flask flask-cors (kdump's test extra)")
    server = start_s3_server(tmp_path_factory.mktemp("moto") / "moto.log")
    yield server
    server.stop()
