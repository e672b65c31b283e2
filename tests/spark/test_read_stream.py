"""``readStream`` over a log dir that gains records and segments between micro-batches."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kdump[spark]'")
from logbuild import reference_rows, write_partition

pytestmark = pytest.mark.spark


def _copy_segments(source: Path, live: Path, bases: list[str], *, cut: int | None = None) -> None:
    live.mkdir(parents=True, exist_ok=True)
    for base in bases:
        for f in source.glob(f"{base}.*"):
            shutil.copyfile(f, live / f.name)
    if cut is not None:                           # the active segment with a batch still being written
        log = live / f"{bases[-1]}.log"
        log.write_bytes(log.read_bytes()[:cut])


def test_micro_batches_read_each_new_record_once(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = write_partition(tmp_path / "source", "orders", 0, segments=4, batches=3)
    bases = sorted(p.stem for p in source.glob("*.log"))
    live = tmp_path / "live" / "orders-0"
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def micro_batch() -> list[int]:
        stream = (spark.readStream.format("kafka-log").option("splitBytes", "1k").load(str(live.parent))
                  .select("offset", "timestamp_ms", "key", "value"))
        query = (stream.writeStream.format("parquet").option("checkpointLocation", str(checkpoint))
                 .trigger(availableNow=True).start(str(out)))
        query.awaitTermination(300)
        assert query.exception() is None
        return sorted(r.offset for r in spark.read.parquet(str(out)).collect())

    last_size = (source / f"{bases[1]}.log").stat().st_size
    _copy_segments(source, live, bases[:2], cut=last_size - 30)     # segment 2 mid-append
    first = micro_batch()
    assert first == list(range(60 + 40))                            # the torn batch is not read yet
    _copy_segments(source, live, bases[1:3])                        # segment 2 completed, segment 3 rolled in
    assert micro_batch() == list(range(180))
    _copy_segments(source, live, bases[3:])
    got = micro_batch()
    assert got == [t[4] for t in reference_rows(source.parent)]     # every record exactly once
    rows = {r.offset: (r.key, r.value) for r in spark.read.parquet(str(out)).collect()}
    assert {t[4]: (t[6], t[7]) for t in reference_rows(source.parent)} == {
        o: (None if k is None else bytes(k), None if v is None else bytes(v)) for o, (k, v) in rows.items()}
