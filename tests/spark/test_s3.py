"""The data source on S3: a log.dirs uploaded to a local S3-compatible server (moto) and read back.

Rows read from s3:// must equal rows read from the same files on local disk, whether the endpoint
comes in the URI's query (which every planned location must keep, since tasks re-open files from
their location) or from the AWS_* environment. An index the listing found but that cannot be read
is an error, not a plan with fewer splits.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyarrow", reason="pyarrow not installed: pip install 'kdump[spark]'")
pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kdump[spark]'")

from logbuild import as_tuples, reference_rows
from s3server import ACCESS_KEY, SECRET_KEY, S3Server

from kdump.arrow.discovery import find_segments
from kdump.arrow.planning import offset_index, plan
from kdump.arrow.reading import read_split
from kdump.errors import InputError

AWS_VARIABLES = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                 "AWS_DEFAULT_REGION", "AWS_REGION", "AWS_PROFILE", "AWS_SESSION_TOKEN")


@pytest.fixture
def credentials_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No endpoint in the environment: only a URI's query can lead to the local server."""
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def rows_of(splits) -> list[dict]:  # type: ignore[no-untyped-def]
    return [row for s in splits for b in read_split(s) for row in b.to_pylist()]


def test_tasks_reopen_files_with_the_uri_query(s3: S3Server, log_dirs: Path, credentials_only: None) -> None:
    uri = s3.upload(log_dirs, "query-bucket", "kafka/logs") + "?" + s3.query
    splits = plan([uri], split_bytes=1024)
    local = plan([str(log_dirs)], split_bytes=1024)
    assert len(splits) == len(local) > 10                 # the .index files were read: segments are cut
    assert all(s.segment.log.endswith("?" + s3.query) for s in splits)
    assert as_tuples(rows_of(splits)) == reference_rows(log_dirs)


def test_endpoint_from_the_environment(s3: S3Server, log_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in s3.env.items():
        monkeypatch.setenv(name, value)
    uri = s3.upload(log_dirs, "env-bucket", "logs")
    assert as_tuples(rows_of(plan([uri], split_bytes=2048))) == reference_rows(log_dirs)


def test_an_index_that_cannot_be_read_is_an_error(s3: S3Server, log_dirs: Path, credentials_only: None) -> None:
    uri = s3.upload(log_dirs, "vanishing-bucket", "logs") + "?" + s3.query
    segment = find_segments([uri])[0]
    assert segment.index is not None and offset_index(segment)
    s3.filesystem().delete_file(segment.index.split("://", 1)[1].split("?", 1)[0])   # gone after the listing
    with pytest.raises(InputError, match="cannot read the index") as err:
        offset_index(segment)
    assert err.value.path == segment.index


def test_spark_reads_s3(spark, s3: S3Server, log_dirs: Path) -> None:  # type: ignore[no-untyped-def]
    # The session's Python workers started before this test, without AWS_* variables: the endpoint and
    # the credentials travel in the URI, and every planned location keeps them.
    bucket = s3.upload(log_dirs, "spark-bucket", "logs").removeprefix("s3://")
    uri = f"s3://{ACCESS_KEY}:{SECRET_KEY}@{bucket}?{s3.query}"
    df = spark.read.format("kafka-log").option("splitBytes", "2k").load(uri)
    assert df.rdd.getNumPartitions() > 10
    assert as_tuples([r.asDict(recursive=True) for r in df.collect()]) == reference_rows(log_dirs)
