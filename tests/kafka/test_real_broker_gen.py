"""`kdump gen` against a real broker for the same produce sequence (docs/real-broker.md).

The fixtures' `sequence` topic was produced by the Java client (tests/kafka/make_real_fixtures.py):
records key-<offset>/value-<offset>, ten per produce request, timestamps one second apart, no
idempotence, segment.bytes 16384, index.interval.bytes 4096, segment.index.bytes 4096; then the broker
was stopped cleanly. kdump gen with the same numbers must write the same files. The last test does the
same against a running broker (needs java and mvn), whose active segment gen --preallocate models.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from broker import RELEASES, Broker, run_driver
from make_real_fixtures import SEGMENT_BYTES, SEQUENCE, setup_topics

from kdump_testing import run_kdump

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "real-broker"
RELEASE_DIRS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())
# Kafka 4.3 indexes per batch, 3.9 per produce request; with one batch per request they agree.
INDEX_RULE = {"4": "per-batch", "3": "per-append"}


def generate(out: Path, release: str, *extra: str) -> Path:
    result = run_kdump(
        "gen", str(out), "--topics", "sequence", "--partitions", "1",
        "--records", str(SEQUENCE["records"]), "--records-per-batch", str(SEQUENCE["per_batch"]),
        "--key-pattern", "seq", "--value-pattern", "seq",
        "--start-time", str(SEQUENCE["start_ms"]), "--time-step", str(SEQUENCE["step_ms"]),
        "--segment-bytes", str(SEGMENT_BYTES), "--index-interval-bytes", "4096", "--max-index-bytes", "4096",
        "--index-rule", INDEX_RULE[release.split(".")[0]], *extra,
    )
    assert result.exit_code == 0, result.stderr
    return out


@pytest.fixture(params=RELEASE_DIRS, ids=[p.name for p in RELEASE_DIRS])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path]:
    release_dir: Path = request.param
    return release_dir / "logs", generate(tmp_path / "gen", release_dir.name)


def _files(partition: Path, *suffixes: str) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(partition.iterdir()) if p.name.endswith(suffixes)}


def test_same_roll_points(pair: tuple[Path, Path]) -> None:
    broker, gen = pair
    names = sorted(p.name for p in (broker / "sequence-0").glob("*.log"))
    assert len(names) >= 3  # the sequence rolls, so roll points are compared, not just one segment
    assert names == sorted(p.name for p in (gen / "sequence-0").glob("*.log"))


@pytest.mark.parametrize("suffix", [".log", ".index", ".timeindex", ".snapshot", "leader-epoch-checkpoint"])
def test_same_bytes(pair: tuple[Path, Path], suffix: str) -> None:
    """Batches, offset and time index entries, producer snapshots at each roll, the epoch cache."""
    broker, gen = pair
    expected = _files(broker / "sequence-0", suffix)
    assert expected
    assert _files(gen / "sequence-0", suffix) == expected


def _checkpoint_entries(path: Path) -> tuple[list[str], dict[str, str]]:
    lines = path.read_text().splitlines()
    return lines[:2], {" ".join(line.split()[:2]): line.split()[2] for line in lines[2:]}


@pytest.mark.parametrize("name", ["recovery-point-offset-checkpoint", "replication-offset-checkpoint"])
def test_same_checkpoint_entry(pair: tuple[Path, Path], name: str) -> None:
    """Version 0 files with the partition's log end offset; the broker lists every partition it hosts,
    in hash-map order, so only the header and this partition's entry are compared."""
    broker, gen = pair
    broker_header, broker_entries = _checkpoint_entries(broker / name)
    gen_header, gen_entries = _checkpoint_entries(gen / name)
    assert broker_header[0] == gen_header[0] == "0"
    assert int(broker_header[1]) == len(broker_entries) and int(gen_header[1]) == len(gen_entries)
    assert gen_entries["sequence 0"] == broker_entries["sequence 0"] == str(SEQUENCE["records"])


def test_log_start_offset_checkpoint_lists_no_partition_starting_at_zero(pair: tuple[Path, Path]) -> None:
    broker, gen = pair
    assert (broker / "log-start-offset-checkpoint").read_text() == "0\n0\n"
    assert (gen / "log-start-offset-checkpoint").read_text() == "0\n0\n"


@pytest.mark.parametrize("release", RELEASES)
def test_live_broker_matches_gen_preallocate(release: str, start_broker: Callable[..., Broker], tmp_path: Path) -> None:
    """While the broker runs, its active segment has zero-padded 4096-byte indexes and no snapshot at the
    log end; gen --preallocate writes the same. A kill -9 leaves the files as they were."""
    broker = start_broker(release)
    setup_topics(broker)
    run_driver(broker.lib, "sequence", broker.bootstrap, "sequence", *(str(v) for v in SEQUENCE.values()))
    live = shutil.copytree(broker.log_dir / "sequence-0", tmp_path / "live")
    broker.kill()
    gen = generate(tmp_path / "gen", release, "--preallocate") / "sequence-0"
    names = sorted(p.name for p in live.iterdir() if p.name != "partition.metadata")
    assert names == sorted(p.name for p in gen.iterdir() if p.name != "partition.metadata")
    active = max(name for name in names if name.endswith(".log")).removesuffix(".log")
    assert (live / f"{active}.index").stat().st_size == 4096  # 512 zero-padded slots
    assert (live / f"{active}.timeindex").stat().st_size == 4092  # 341 slots of 12 bytes
    assert not (live / f"{SEQUENCE['records']:020d}.snapshot").exists()  # written at clean shutdown only
    assert (live / f"{active}.snapshot").exists()  # written when the segment rolled in
    for name in names:
        assert (gen / name).read_bytes() == (live / name).read_bytes(), name
        assert (broker.log_dir / "sequence-0" / name).read_bytes() == (live / name).read_bytes(), name
