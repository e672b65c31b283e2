"""``kdump spark verify`` and ``kdump verify`` give the same findings and exit codes on every corpus.

Corpora: every fixture directory (fixtures/corrupt-index/*, fixtures/logdirs), the Spark tests' log
dirs, the index-fixture builder's cases, and damaged copies (a flipped byte, a framing break, a
missing ``.txnindex`` entry, a checkpoint past the log end, an unreadable ``.log``).
``kdump verify-index`` must report exactly the index findings among them.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))

from logbuild import write_log_dirs

from kdump.cli.main import cli
from kdump.format.batch import scan_batches
from kdump.format.crc import crc32c
from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump.log.files import segment_file_name
from kdump.verify.engine import INDEX_CHECKS
from kdump_testing import index_fixtures

pytestmark = pytest.mark.spark

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def cli_findings(command: str, paths: list[str], *options: str) -> tuple[int, list[dict], dict]:
    code, out = run(command, "--json", *options, *paths)
    objs = [json.loads(line) for line in out.splitlines()]
    found = [{k: v for k, v in o.items() if k != "type"} for o in objs if o["type"] == "finding"]
    return code, found, objs[-1]


def spark_findings(paths: list[str], *options: str) -> tuple[int, list[dict], dict]:
    code, out = run("spark", "verify", *options, *paths, "--master", "local[2]", "--report", "-")
    report = json.loads(out)
    return code, report["findings"], report


def damaged_copy(root: Path) -> list[str]:
    logs = Path(shutil.copytree(FIXTURES / "logdirs", root / "kafka-logs-1"))
    plain = logs / "plain-0" / segment_file_name(0, ".log")
    data = bytearray(plain.read_bytes())
    data[100] ^= 1
    plain.write_bytes(bytes(data))
    zstd = logs / "zstd-0" / segment_file_name(0, ".log")
    data = bytearray(zstd.read_bytes())
    second = list(scan_batches(bytes(data), check_crc=False))[1].position
    struct.pack_into(">i", data, second + 8, 3)              # a size field below 14: framing breaks
    zstd.write_bytes(bytes(data))
    (logs / "txn-0" / segment_file_name(55, ".txnindex")).write_bytes(b"")
    checkpoint = logs / "replication-offset-checkpoint"
    checkpoint.write_text(checkpoint.read_text().replace("gzip 0 60", "gzip 0 99"))
    fx = index_fixtures()
    cases = [fx.make_case(name, str(root / "cases")) for name in sorted(fx.CASES)]
    undecodable = root / "undecodable-0"          # CRC valid, records claim 5 but hold 3: --deep finds it
    undecodable.mkdir()
    data = bytearray(encode_batch_v2([Record(i, 1_700_000_000_000 + i, None, b"v") for i in range(3)], base_offset=0))
    struct.pack_into(">i", data, 57, 5)
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    (undecodable / segment_file_name(0, ".log")).write_bytes(bytes(data))
    return [str(logs), *cases, str(undecodable)]


def shapes_copy(root: Path) -> list[str]:
    """Shapes where the two once differed: v0/v1 compressed wrappers (each holds many records), a CRC-valid
    batch whose records cannot be decoded (--deep), a framing break early in a segment with many index
    entries (one finding, not one per entry after it)."""
    legacy = root / "legacy"
    code, _ = run("gen", str(legacy), "--topics", "g,l", "--partitions", "1", "--records", "3000",
                  "--records-per-batch", "20", "--compression", "g=gzip,l=lz4", "--magic", "g=1,l=0",
                  "--segment-bytes", "40000")
    assert code == 0
    broken = root / "broken"
    code, _ = run("gen", str(broken), "--topics", "f", "--partitions", "1", "--records", "5000",
                  "--records-per-batch", "5", "--index-interval-bytes", "512")
    assert code == 0
    log = broken / "f-0" / segment_file_name(0, ".log")
    data = bytearray(log.read_bytes())
    struct.pack_into(">i", data, list(scan_batches(bytes(data), check_crc=False))[30].position + 8, 3)
    log.write_bytes(bytes(data))
    return [str(legacy), str(broken), *damaged_copy(root)[-1:]]


@pytest.mark.parametrize("corpus", ["fixtures", "generated", "damaged", "unreadable", "shapes"])
def test_spark_verify_equals_kdump_verify(corpus: str, spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    if corpus == "fixtures":
        paths = [*sorted(str(p) for p in (FIXTURES / "corrupt-index").iterdir() if p.is_dir()),
                 str(FIXTURES / "logdirs")]
    elif corpus == "generated":
        paths = [str(write_log_dirs(tmp_path))]
    elif corpus == "damaged":
        paths = damaged_copy(tmp_path)
    elif corpus == "shapes":
        paths = shapes_copy(tmp_path)
    else:
        part = tmp_path / "t-0"
        part.mkdir()
        os.mkfifo(part / segment_file_name(0, ".log"))
        shutil.copytree(FIXTURES / "logdirs" / "plain-0", tmp_path / "plain-0")
        paths = [str(part), str(tmp_path / "plain-0")]
    options = ("--deep",) if corpus in ("damaged", "shapes") else ()
    code, found, summary = cli_findings("verify", paths, *options)
    spark_code, spark_found, report = spark_findings(paths, *options)
    assert (spark_code, spark_found) == (code, found)
    assert (report["segments"], report["batches"], report["records"]) == \
        (summary["segments"], summary["batches"], summary["records"])
    _, index_found, _ = cli_findings("verify-index", paths, *options)
    assert index_found == [f for f in found if f["check"] in INDEX_CHECKS]
    expected = {"fixtures": 1, "generated": 0, "damaged": 1, "unreadable": 2, "shapes": 1}[corpus]
    assert code == expected
    if corpus in ("fixtures", "damaged"):   # --json: the very lines of kdump verify --json
        assert run("spark", "verify", "--json", *options, *paths, "--master", "local[2]") == \
            run("verify", "--json", *options, *paths)
    if corpus == "shapes":
        assert summary["records"] > 2 * 3000        # every record inside the v0/v1 wrappers
        assert sorted(f["check"] for f in found if f["severity"] == "error") == ["framing", "records"]
    if corpus == "damaged":
        assert {"crc", "framing", "records", "txn-index-missing", "checkpoint-past-log"} <= {
            f["check"] for f in found if f["severity"] == "error"}


@pytest.mark.parametrize("name", ["corrupt-index/healthy-follower-pre41-0", "corrupt-index/healthy-cleaned-0",
                                  "corrupt-index/healthy-padded-0", "corrupt-index/healthy-empty-active-0",
                                  "logdirs"])
def test_healthy_layouts_pass_spark_verify(name: str, spark) -> None:  # type: ignore[no-untyped-def]
    code, found, _ = spark_findings([str(FIXTURES / name)])
    assert code == 0 and [f for f in found if f["severity"] == "error"] == []
