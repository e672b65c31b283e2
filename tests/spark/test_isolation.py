"""``isolation=read_committed`` and the ``aborted`` column, without a JVM (partitions() and read()).

The oracle replays the markers with kafka-python's batch readers, as a consumer sees the log from
its start: a transaction's records are returned when its COMMIT marker comes, dropped at its ABORT
marker, and control records are never returned. kdump reads the ``.txnindex`` files instead (what the
broker sends a consumer), so agreeing on every split shows that a split knows the aborts whose
markers lie in later splits and segments.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyarrow", reason="pyarrow not installed: pip install 'kdump[spark]'")
pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kdump[spark]'")
from click.testing import CliRunner

from kdump.cli.main import cli
from kdump.spark.datasource import KafkaLogDataSource
from kdump.spark.schema import spark_schema
from kdump_testing import consumer_view

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logdirs"


def read(path: Path, **options: str) -> list[dict]:
    source = KafkaLogDataSource({"path": str(path), **{k.lower(): v for k, v in options.items()}})
    reader = source.reader(spark_schema("record"))
    return [row for p in reader.partitions() for b in reader.read(p) for row in b.to_pylist()]


def triples(rows: list[dict]) -> list[tuple]:
    return sorted((r["offset"], r["key"], r["value"]) for r in rows)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two partitions of small segments: aborted transactions span segments (markers in later ones)."""
    root = tmp_path_factory.mktemp("txn") / "logs"
    result = CliRunner().invoke(cli, ["gen", str(root), "--topics", "t", "--partitions", "2", "--records", "1500",
                                      "--transactional", "--abort-ratio", "0.4", "--segment-bytes", "8000",
                                      "--compression", "lz4"])
    assert result.exit_code == 0, result.output
    return root


def partitions(generated: Path) -> list[Path]:
    return [FIXTURES / "txn-0", FIXTURES / "txn-1", generated / "t-0", generated / "t-1"]


@pytest.mark.parametrize("split_bytes", ["128m", "2k", "300"])
def test_read_committed_is_the_consumers_view(generated: Path, split_bytes: str) -> None:
    for pdir in partitions(generated):
        rows = read(pdir, isolation="read_committed", splitBytes=split_bytes)
        expected = consumer_view(pdir)
        assert triples(rows) == expected, pdir
        assert not any(r["isControl"] or r["aborted"] for r in rows)
        everything = read(pdir, splitBytes=split_bytes)
        assert len(everything) > len(rows)                       # aborted records and markers are there


@pytest.mark.parametrize("split_bytes", ["128m", "1k"])
def test_aborted_column_marks_what_read_committed_drops(generated: Path, split_bytes: str) -> None:
    for pdir in partitions(generated):
        rows = read(pdir, splitBytes=split_bytes)
        kept = [r for r in rows if not r["aborted"] and not r["isControl"]]
        assert triples(kept) == consumer_view(pdir)
        assert any(r["aborted"] for r in rows) and all(r["aborted"] is not None for r in rows)


def test_a_segment_read_alone_still_knows_later_markers(generated: Path) -> None:
    # Offsets pushed down prune the segments holding the markers; the aborts still come from them.
    pdir = generated / "t-0"
    source = KafkaLogDataSource({"path": str(pdir), "isolation": "read_committed", "pushdown": "true",
                                 "splitbytes": "1k"})
    reader = source.reader(spark_schema("record"))
    from pyspark.sql.datasource import GreaterThanOrEqual, LessThan

    expected = [t for t in consumer_view(pdir) if 300 <= t[0] < 700]
    list(reader.pushFilters([GreaterThanOrEqual(("offset",), 300), LessThan(("offset",), 700)]))
    rows = [row for p in reader.partitions() for b in reader.read(p) for row in b.to_pylist()]
    assert [t for t in triples(rows) if 300 <= t[0] < 700] == expected


def test_unknown_isolation_and_misspelt_options_are_errors() -> None:
    with pytest.raises(ValueError, match="option isolation must be one of read_uncommitted, read_committed"):
        read(FIXTURES / "txn-0", isolation="committed")
    with pytest.raises(ValueError, match="kafka-log has no option 'splitbyte'; options: level, splitBytes, "):
        read(FIXTURES / "txn-0", splitbyte="1k")


def test_without_the_partitions_aborts_aborted_is_unknown() -> None:
    from kdump.arrow.planning import plan
    from kdump.arrow.reading import ReadOptions, read_split

    splits = plan([str(FIXTURES / "txn-1")])                      # not planned with_aborts
    rows = [r for s in splits for b in read_split(s) for r in b.to_pylist()]
    assert rows and all(r["aborted"] is None for r in rows)
    with pytest.raises(ValueError, match="read_committed needs the partition's aborted transactions"):
        list(read_split(splits[0], None, ReadOptions(isolation="read_committed")))
