"""``kdump gen``'s output: the committed fixture regenerates byte for byte, every batch reads the
same through kafka-python (an independent reader, test-only), seeds are deterministic, and the
broker files (txn index, snapshots, checkpoints) agree with what the log itself says."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from kafka.record.memory_records import MemoryRecords

from kdump.format.batch import scan_batches
from kdump.format.control import ControlType, parse_control_record
from kdump.format.records import decode_records
from kdump.format.snapshot import parse_producer_snapshot
from kdump.format.txnindex import parse_aborted_txns
from kdump.gen.generator import GenSpec, TopicSpec, generate
from kdump.log.writer import LogConfig

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "logdirs"
README = ROOT / "fixtures" / "README-gen.md"


def fixture_command() -> list[str]:
    block = re.search(r"```sh\n(kdump gen .*?)```", README.read_text(), re.S)
    assert block, "fixtures/README-gen.md lost its kdump gen command"
    return shlex.split(block.group(1).replace("\\\n", " "))


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_fixture_regenerates_byte_for_byte(tmp_path: Path) -> None:
    from kdump.cli.main import cli

    args = fixture_command()
    assert args[:3] == ["kdump", "gen", "fixtures/logdirs"]
    out = tmp_path / "logdirs"
    result = CliRunner().invoke(cli, ["gen", str(out), *args[3:]], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert tree(out) == tree(FIXTURE)


def test_fixture_has_what_the_issue_asks_for() -> None:
    logs = list(FIXTURE.rglob("*.log"))
    magics, codecs = set(), set()
    for path in logs:
        for b in scan_batches(path.read_bytes()):
            magics.add(b.magic)
            codecs.add(b.codec_id)
    assert magics == {0, 1, 2} and codecs == {0, 1, 2, 3, 4}
    assert list(FIXTURE.glob("txn-*/*.txnindex"))
    assert all(len(list(d.glob("*.log"))) >= 2 for d in FIXTURE.iterdir() if d.is_dir())
    live = FIXTURE / "live-0"
    active = max(live.glob("*.index"))
    assert active.stat().st_size == 1024 and active.read_bytes().endswith(bytes(8))
    assert sum(p.stat().st_size for p in FIXTURE.rglob("*") if p.is_file()) < 300_000


def kafka_python_records(data: bytes) -> list[tuple]:
    """(offset, timestamp, key, value, headers) of every record, read by kafka-python, CRCs checked."""
    out = []
    mr = MemoryRecords(data)
    while True:
        batch = mr.next_batch()
        if batch is None:
            break
        assert batch.validate_crc()
        for r in batch:
            headers = tuple((k.encode(), v) for k, v in r.headers) if batch.magic == 2 else ()
            if batch.magic < 2:
                assert r.validate_crc()
            out.append((r.offset, r.timestamp, r.key, r.value, headers))
    return out


def kdump_records(data: bytes) -> list[tuple]:
    out = []
    for b in scan_batches(data):
        assert b.is_valid
        for r in decode_records(data, b):
            ts = r.timestamp if b.magic > 0 else None
            out.append((r.offset, ts, r.key, r.value, tuple(r.headers)))
    return out


@pytest.mark.parametrize("log", sorted(FIXTURE.rglob("*.log")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixture_batch_reads_the_same_in_kafka_python(log: Path) -> None:
    data = log.read_bytes()
    theirs = kafka_python_records(data)
    ours = kdump_records(data)
    assert theirs and ours == theirs


def test_all_codecs_and_magics_through_kafka_python(tmp_path: Path) -> None:
    from kdump.format.batch import TimestampType
    from kdump.format.codecs import Codec

    topics = []
    for magic in (0, 1, 2):
        for codec in Codec:
            if codec is Codec.ZSTD and magic < 2:
                continue
            for ts_type in (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME):
                if magic == 0 and ts_type is TimestampType.LOG_APPEND_TIME:
                    continue
                topics.append(TopicSpec(f"m{magic}-{codec.name.lower()}-{int(ts_type)}", 1, codec, magic, ts_type))
    spec = GenSpec(topics=tuple(topics), records=40, key_pattern="mixed", value_pattern="mixed",
                   null_key_ratio=0.2, tombstone_ratio=0.2, max_headers=3, time_jitter=3000, seed=7,
                   log=LogConfig(segment_bytes=3000, index_interval_bytes=300))
    generate(str(tmp_path / "out"), spec)
    for log in (tmp_path / "out").rglob("*.log"):
        data = log.read_bytes()
        assert kdump_records(data) == kafka_python_records(data), log


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    def run(seed: int, name: str) -> dict[str, bytes]:
        spec = GenSpec(topics=(TopicSpec("a", 2), TopicSpec("b", 1, producer="transactional")), records=80,
                       abort_ratio=0.5, time_jitter=500, seed=seed, value_pattern="mixed", key_pattern="mixed",
                       log=LogConfig(segment_bytes=4096))
        generate(str(tmp_path / name), spec)
        return tree(tmp_path / name)

    first = run(1, "x")
    assert run(1, "y") == first
    assert run(2, "z") != first


def test_txn_index_and_snapshots_agree_with_the_log() -> None:
    for pdir in sorted(FIXTURE.glob("txn-*")):
        ongoing: dict[int, int] = {}
        expected: dict[int, list[tuple[int, int, int, int]]] = {}
        last_data: dict[int, tuple[int, int]] = {}   # pid -> (last offset, last sequence)
        bases = sorted(int(p.name[:20]) for p in pdir.glob("*.log"))
        for base in bases:
            data = (pdir / f"{base:020d}.log").read_bytes()
            for b in scan_batches(data):
                if b.is_control:
                    (rec,) = decode_records(data, b)
                    info = parse_control_record(rec.key, rec.value)
                    first = ongoing.pop(b.producer_id)
                    if info.type_id == ControlType.ABORT:
                        expected.setdefault(base, []).append((b.producer_id, first, b.last_offset,
                                                              b.last_offset + 1))
                else:
                    ongoing.setdefault(b.producer_id, b.base_offset)
                    last_data[b.producer_id] = (b.last_offset, b.last_sequence)
            snapshot = pdir / f"{bases[bases.index(base) + 1]:020d}.snapshot" if base != bases[-1] else None
            if snapshot is not None:
                (entry,) = parse_producer_snapshot(snapshot.read_bytes()).entries
                assert (entry.last_offset, entry.last_sequence) == last_data[entry.producer_id]
        assert expected, "the fixture should abort some transactions"
        for base in bases:
            path = pdir / f"{base:020d}.txnindex"
            got = [(a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset)
                   for a in parse_aborted_txns(path.read_bytes(), str(path))] if path.exists() else []
            assert got == expected.get(base, [])


def test_checkpoints_name_every_partition() -> None:
    lines = (FIXTURE / "replication-offset-checkpoint").read_text().splitlines()
    assert lines[0] == "0" and int(lines[1]) == len(lines) - 2 == 11
    recovery = dict((" ".join(line.split()[:2]), int(line.split()[2]))
                    for line in (FIXTURE / "recovery-point-offset-checkpoint").read_text().splitlines()[2:])
    live_active = max(int(p.name[:20]) for p in (FIXTURE / "live-0").glob("*.log"))
    assert recovery["live 0"] == live_active            # a live broker has flushed up to its last roll
    assert recovery["plain 0"] == 60                      # a clean shutdown flushed everything
    assert (FIXTURE / "plain-0" / "partition.metadata").read_bytes().startswith(b"version: 0\ntopic_id: ")
    assert (FIXTURE / "plain-0" / "leader-epoch-checkpoint").read_text() == "0\n1\n0 0\n"
    assert (FIXTURE / "v0-0" / "leader-epoch-checkpoint").read_text() == "0\n0\n"
