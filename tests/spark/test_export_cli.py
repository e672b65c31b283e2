"""``kdump export`` (no Spark): the records of a log.dirs as Parquet, published all at once; and time
pruning that a damaged ``.timeindex`` entry cannot make lose rows.

Expected rows come from ``logbuild.reference_rows``: whole files parsed by ``kdump.format`` alone,
independent of the reader and the writer under test.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow not installed: pip install 'kdump[spark]'")

from logbuild import BASE_TIME, as_tuples, reference_rows, write_partition  # noqa: E402

from kdump.arrow import parquet  # noqa: E402
from kdump.arrow.planning import Pruning, plan  # noqa: E402
from kdump.arrow.reading import ReadOptions, read_split  # noqa: E402
from kdump.cli.main import cli  # noqa: E402
from kdump.format.index import TIME_ENTRY_SIZE  # noqa: E402


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("export-logs") / "logs"
    for p in range(2):
        write_partition(root, "orders", p, segments=3, batches=4, seed=1)
    write_partition(root, "payments", 0, segments=2, batches=3, seed=2)
    return root


def _table_rows(table: object) -> list[tuple]:
    return as_tuples(table.to_pylist())  # type: ignore[attr-defined]


def test_a_dataset_of_every_record_with_the_data_source_schema(logs: Path, tmp_path: Path) -> None:
    out = tmp_path / "records"
    code, stdout, err = run("export", str(logs), "--to", str(out), "--partition-by", "topic", "--jobs", "2",
                            "--split-bytes", "2k")
    expected = reference_rows(logs)
    assert code == 0, err
    assert stdout.startswith(f"Wrote {len(expected)} record rows to {out} (")
    table = pq.read_table(out)
    assert _table_rows(table) == expected
    assert sorted(p.name for p in out.iterdir()) == ["_SUCCESS", "topic=orders", "topic=payments"]
    data_columns = [f.name for f in parquet.data_schema("record", ("topic",))]
    assert pq.read_schema(next((out / "topic=orders").iterdir())).names == data_columns
    code, _, err = run("export", str(logs), "--to", str(out))
    assert (code, err) == (2, f"Error: {out} already exists (use --force to replace it)\n")
    assert run("export", str(logs), "--to", str(out), "--force", "--level", "batch")[0] == 0
    assert pq.read_table(out).num_rows == 3 * 4 * 2 + 2 * 3
    # Nothing of the runs is left beside the output.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records"]


def test_one_file_and_force_replaces_only_an_export(logs: Path, tmp_path: Path) -> None:
    out = tmp_path / "records.parquet"
    assert run("export", str(logs), "--to", str(out), "--level", "batch")[0] == 0
    assert pq.read_table(out).num_rows == 3 * 4 * 2 + 2 * 3
    code, _, err = run("export", str(logs), "--to", str(out))
    assert (code, err) == (2, f"Error: {out} already exists (use --force to replace it)\n")
    assert run("export", str(logs), "--to", str(out), "--force")[0] == 0
    assert _table_rows(pq.read_table(out)) == reference_rows(logs)
    foreign = tmp_path / "mine.parquet"
    foreign.write_bytes(b"not kdump's")
    code, _, err = run("export", str(logs), "--to", str(foreign), "--force")
    assert (code, foreign.read_bytes()) == (2, b"not kdump's")
    assert "was not written by kdump export" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.parquet", "records.parquet"]


def test_usage_errors_and_a_failed_run_leave_nothing(logs: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = run("export", str(tmp_path), "--to", str(tmp_path / "x"))
    assert code == 2 and "no Kafka segments" in err
    code, _, err = run("export", str(logs), "--to", str(tmp_path / "x"), "--partition-by", "key")
    assert (code, err) == (2, "Error: --partition-by key: not a string, int or boolean column at level=record\n")
    real = parquet.write_batches
    calls = []

    def fail_second(*args: object, **kwargs: object) -> parquet.Written:
        calls.append(1)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(parquet, "write_batches", fail_second)
    code, _, err = run("export", str(logs), "--to", str(tmp_path / "x"), "--jobs", "1", "--split-bytes", "2k")
    assert code == 1 and "No space left on device" in err
    assert list(tmp_path.iterdir()) == []


def test_a_damaged_time_index_entry_costs_speed_never_rows(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    pdir = write_partition(root, "t", 0, segments=3, batches=4)
    # Segment 0 holds offsets 0-79, timestamps BASE_TIME + 10 * offset. Its last .timeindex entry now
    # claims an older largest timestamp than its records have.
    first = next(p for p in sorted(pdir.iterdir()) if p.suffix == ".timeindex")
    data = bytearray(first.read_bytes())
    last = len(data) - TIME_ENTRY_SIZE
    data[last:last + 8] = struct.pack(">q", BASE_TIME + 100)
    first.write_bytes(bytes(data))
    since = BASE_TIME + 10 * 70                   # records 70-79 of segment 0 match

    def rows(pruning: Pruning) -> list[tuple]:
        options = ReadOptions(pruning=pruning)
        found = [r for s in plan([str(root)], pruning=pruning) for b in read_split(s, options=options)
                 for r in b.to_pylist()]
        return sorted((r["offset"], r["timestamp_ms"]) for r in found if r["timestamp_ms"] >= since)

    pushed = Pruning(timestamp_min=since)
    assert rows(pushed) == rows(Pruning())
    assert rows(pushed)[0] == (70, since)
    # Undamaged, the index still prunes: segment 1 (offsets 80-159) is skipped for a bound past it; the
    # damaged segment 0 is read.
    later = Pruning(timestamp_min=BASE_TIME + 10 * 160)
    assert [s.segment.base_offset for s in plan([str(root)], pruning=later)] == [0, 160]


def test_to_object_storage(s3: object, logs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in s3.env.items():  # type: ignore[attr-defined]
        monkeypatch.setenv(name, value)
    source = s3.upload(logs, "export-bucket", "logs")  # type: ignore[attr-defined]
    out = "s3://export-bucket/records"
    code, _, err = run("export", source, "--to", out, "--partition-by", "topic", "--split-bytes", "2k", "--jobs", "2")
    assert code == 0, err
    fs = s3.filesystem()  # type: ignore[attr-defined]
    assert _table_rows(pq.read_table("export-bucket/records", filesystem=fs)) == reference_rows(logs)
    with fs.open_input_stream("export-bucket/records/_SUCCESS") as f:
        assert f.read() == b"kdump export\n"
    code, _, err = run("export", source, "--to", out)
    assert code == 2 and "already exists" in err
    assert run("export", source, "--to", out, "--force", "--level", "batch")[0] == 0
    assert pq.read_table("export-bucket/records", filesystem=fs).num_rows == 3 * 4 * 2 + 2 * 3
    # Nothing staged is left in the bucket.
    import pyarrow.fs as pafs

    assert sorted(i.base_name for i in fs.get_file_info(pafs.FileSelector("export-bucket"))) == ["logs", "records"]
