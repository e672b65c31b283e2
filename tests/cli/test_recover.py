"""``kdump recover``: the plan of Kafka's LogLoader for damaged copies of a log dir.

Expected values follow LogLoader/LogSegment.recover (Kafka 4.3): with no clean-shutdown marker
every segment from the one holding the recovery point is re-validated; the first batch that fails
(framing, CRC) ends its segment and every later segment is deleted; the log end offset is one past
the last kept batch; the high watermark is clamped to it. Batch positions and offsets of the inputs
are read with kafka-python, independently of kdump.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatch

from kdump.format.checkpoint import (
    EpochEntry,
    OffsetCheckpointEntry,
    encode_leader_epoch_checkpoint,
    encode_offset_checkpoint,
)
from kdump_testing import run_kdump


def _batches(log: Path) -> list[tuple[int, int, int, int]]:
    """(position, size, base offset, records) of each batch, by kafka-python."""
    data = log.read_bytes()
    out, pos = [], 0
    while pos + 12 <= len(data):
        size = struct.unpack_from(">i", data, pos + 8)[0]
        if size < 14 or pos + 12 + size > len(data):
            break
        batch = DefaultRecordBatch(data[pos:pos + 12 + size])
        out.append((pos, 12 + size, batch.base_offset, len(list(batch))))
        pos += 12 + size
    return out


@pytest.fixture()
def logs(tmp_path: Path) -> Path:
    out = tmp_path / "logs"
    result = run_kdump("gen", str(out), "--topics", "a", "--partitions", "1", "--records", "200",
                       "--segment-bytes", "4096", "--seed", "3")
    assert result.exit_code == 0, result.stderr
    return out


def _segments(partition: Path) -> list[Path]:
    return sorted(partition.glob("*.log"))


def _set_checkpoint(log_dir: Path, name: str, offset: int) -> None:
    (log_dir / name).write_bytes(encode_offset_checkpoint([OffsetCheckpointEntry("a", 0, offset)]))


def _plan(path: Path) -> tuple[int, dict]:
    result = run_kdump("recover", str(path), "--json")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    partitions = [obj for obj in lines if obj["type"] == "partition"]
    assert len(partitions) == 1, result.stdout + result.stderr
    return result.exit_code, partitions[0]


def test_an_intact_log_after_a_clean_shutdown_loses_nothing(logs: Path) -> None:
    (logs / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":1}')
    code, plan = _plan(logs)
    assert code == 0
    assert plan["cleanShutdown"] and plan["recovered"] == [] and plan["deletedSegments"] == []
    assert plan["logEndOffset"] == 200


def test_a_flipped_byte_truncates_there_and_deletes_later_segments(logs: Path) -> None:
    partition = logs / "a-0"
    segments = _segments(partition)
    victim = segments[-3]
    batches = _batches(victim)
    position, size, base_offset, _ = batches[1]
    data = bytearray(victim.read_bytes())
    data[position + size - 3] ^= 0x40          # a payload byte: the CRC no longer matches
    victim.write_bytes(bytes(data))
    _set_checkpoint(logs, "recovery-point-offset-checkpoint", int(segments[-4].name[:20]))
    _set_checkpoint(logs, "replication-offset-checkpoint", 200)

    code, plan = _plan(logs)
    assert code == 1
    truncated = [r for r in plan["recovered"] if r["truncatedBytes"]]
    assert [Path(r["log"]).name for r in truncated] == [victim.name]
    r = truncated[0]
    assert r["validBytes"] == position and "fails its CRC check" in r["stopped"]
    assert r["lostBatches"] == len(batches) - 1
    assert r["lostRecords"] == sum(n for _, _, _, n in batches[1:])
    assert [Path(d["log"]).name for d in plan["deletedSegments"]] == [s.name for s in segments[-2:]]
    assert [d["records"] for d in plan["deletedSegments"]] == [sum(b[3] for b in _batches(s)) for s in segments[-2:]]
    assert plan["logEndOffset"] == base_offset
    assert plan["highWatermark"] == base_offset
    assert plan["recoveryPointAfter"] == int(segments[-4].name[:20])


def test_a_batch_cut_in_half_is_truncated_at_its_start(logs: Path) -> None:
    last = _segments(logs / "a-0")[-1]
    batches = _batches(last)
    position, size, base_offset, _ = batches[-1]
    last.write_bytes(last.read_bytes()[:position + size // 2])
    code, plan = _plan(logs)
    assert code == 1
    (r,) = [r for r in plan["recovered"] if r["truncatedBytes"]]
    assert (r["validBytes"], r["lostBatches"], plan["logEndOffset"]) == (position, 0, base_offset)


def test_garbage_after_the_last_batch_is_truncated(logs: Path) -> None:
    last = _segments(logs / "a-0")[-1]
    size = last.stat().st_size
    last.write_bytes(last.read_bytes() + bytes(range(1, 40)))
    code, plan = _plan(logs)
    assert code == 1
    (r,) = [r for r in plan["recovered"] if r["truncatedBytes"]]
    assert (r["validBytes"], r["truncatedBytes"], plan["logEndOffset"]) == (size, 39, 200)


def test_zero_padding_is_dropped_without_data_loss(tmp_path: Path) -> None:
    out = tmp_path / "logs"
    assert run_kdump("gen", str(out), "--topics", "a", "--partitions", "1", "--records", "50", "--segment-bytes",
                     "4096", "--preallocate", "--log-preallocate").exit_code == 0
    code, plan = _plan(out)
    assert code == 0
    (r,) = [r for r in plan["recovered"] if r["truncatedBytes"]]
    assert r["zeroPadding"] and r["lostBatches"] == 0 and plan["logEndOffset"] == 50


def test_a_missing_index_is_rebuilt_even_after_a_clean_shutdown(logs: Path) -> None:
    (logs / ".kafka_cleanshutdown").write_text("")
    first = _segments(logs / "a-0")[0]
    first.with_suffix(".index").unlink()
    code, plan = _plan(logs)
    assert code == 0
    assert [(Path(r["log"]).name, r["why"]) for r in plan["recovered"]] == [(first.name, "its offset index is missing")]


def test_temporary_files_are_completed_or_removed(logs: Path) -> None:
    partition = logs / "a-0"
    segments = _segments(partition)
    (partition / (segments[0].name + ".deleted")).write_bytes(b"x")
    swap = partition / (segments[1].name + ".swap")
    swap.write_bytes(segments[1].read_bytes())
    (logs / ".kafka_cleanshutdown").write_text("")
    code, plan = _plan(logs)
    changes = {(Path(c["path"]).name, c["action"]) for c in plan["fileChanges"]}
    assert (segments[0].name + ".deleted", "delete") in changes
    assert (swap.name, "rename") in changes
    assert (segments[1].name, "delete") in changes   # replaced by the swapped-in segment
    assert code == 0


def test_leader_epochs_past_the_new_log_end_are_dropped(logs: Path) -> None:
    partition = logs / "a-0"
    last = _segments(partition)[-1]
    batches = _batches(last)
    last.write_bytes(last.read_bytes()[:batches[0][1] + 5])
    keep, drop = EpochEntry(0, 0), EpochEntry(7, 199)
    (partition / "leader-epoch-checkpoint").write_bytes(encode_leader_epoch_checkpoint([keep, drop]))
    code, plan = _plan(logs)
    assert code == 1
    assert plan["leaderEpochsRemoved"] == [{"epoch": 7, "startOffset": 199}]


def test_a_partition_dir_is_planned_with_its_log_dir_checkpoints(logs: Path) -> None:
    code, plan = _plan(logs / "a-0")
    assert code == 0 and plan["highWatermarkCheckpoint"] == 200


@pytest.mark.parametrize("name", ["recovery-point-offset-checkpoint", "log-start-offset-checkpoint"])
def test_an_unparseable_offset_checkpoint_is_a_refusal_naming_the_file(logs: Path, name: str) -> None:
    # CheckpointFileWithFailureHandler.read marks the log dir offline before LogManager's warning
    # (tests/kafka/test_real_broker_refusals.py: the real broker stops).
    (logs / name).write_text("0\n1\n")       # one entry announced, none there
    result = run_kdump("recover", str(logs), "--out", str(logs.parent / "copy"))
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"Error: {logs / name}: the broker refuses to load a-0: Expected [1] entries in checkpoint file "
        f"[{logs / name}], but found only [0] (reading it takes the log dir offline: the broker does not load it "
        f"and stops when it has no other log dir)"]
    assert "REFUSED" in result.stdout and not (logs.parent / "copy").exists()


def test_several_paths_are_planned_in_order_with_one_total(logs: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    assert run_kdump("gen", str(other), "--topics", "b,c", "--partitions", "1", "--records", "20").exit_code == 0
    result = run_kdump("recover", str(other), str(logs / "a-0"))
    assert result.exit_code == 0, result.stderr
    partitions = [line.split()[1] for line in result.stdout.splitlines() if line.startswith("Partition ")]
    assert partitions == ["b-0", "c-0", "a-0"]
    assert result.stdout.splitlines()[-1] == "recover: 3 partitions, 0 would lose data, 0 segments deleted, 0 refused"
    assert run_kdump("recover", str(other), str(logs), "--out", str(tmp_path / "x")).exit_code == 2


def test_a_log_start_past_the_log_end_empties_the_partition(logs: Path, tmp_path: Path) -> None:
    # LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd: every segment and producer snapshot goes,
    # the leader epochs are cleared, and a new empty segment starts at the log start offset.
    (logs / ".kafka_cleanshutdown").write_text("")
    _set_checkpoint(logs, "log-start-offset-checkpoint", 500)
    code, plan = _plan(logs)
    assert code == 1
    assert len(plan["deletedSegments"]) == len(_segments(logs / "a-0")) and plan["logEndOffset"] == 500 and plan["logStartOffset"] == 500
    assert sorted(Path(p).name for p in plan["snapshotsDeleted"]) == sorted(
        p.name for p in (logs / "a-0").glob("*.snapshot"))
    # min(the checkpointed 200, log end 500), then lifted to the log start offset by UnifiedLog's
    # constructor (updateLogStartOffset), as Kafka 4.3.0's loader does (tests/kafka/test_loader_oracle.py)
    assert plan["recoveryPointAfter"] == 500
    out = tmp_path / "salvaged"
    assert run_kdump("recover", str(logs), "--out", str(out)).exit_code == 1
    assert sorted(p.name for p in (out / "a-0").iterdir() if p.name[0].isdigit()) == [
        f"{500:020d}{suffix}" for suffix in (".index", ".log", ".snapshot", ".timeindex")]
    assert (out / "a-0" / f"{500:020d}.log").read_bytes() == b""


def _append_overflowing_copy(log: Path) -> tuple[int, int]:
    """Append the last batch again with its base offset 2^31 + 7 higher (outside the CRC); returns the
    new batch's (position, base offset)."""
    position, size, base_offset, _ = _batches(log)[-1]
    data = log.read_bytes()
    batch = bytearray(data[position:position + size])
    struct.pack_into(">q", batch, 0, base_offset + 2**31 + 7)
    log.write_bytes(data + bytes(batch))
    return len(data), base_offset + 2**31 + 7


def test_an_overflowing_segment_is_split_where_its_offsets_leave_the_index_range(logs: Path, tmp_path: Path) -> None:
    # LocalLog.splitOverflowedSegment: a new segment at the first batch that no index based at the
    # segment's base can hold; then the load starts again and recovers both pieces.
    last = _segments(logs / "a-0")[-1]
    position, new_base = _append_overflowing_copy(last)
    records = _batches(last)[-1][3]
    code, plan = _plan(logs)
    assert code == 0, plan
    assert [c["action"] for c in plan["fileChanges"]] == ["split"]
    assert plan["logEndOffset"] == new_base + records and plan["refused"] is None
    out = tmp_path / "salvaged"
    assert run_kdump("recover", str(logs), "--out", str(out)).exit_code == 0
    piece = out / "a-0" / f"{new_base:020d}.log"
    assert piece.read_bytes() == last.read_bytes()[position:]
    assert (out / "a-0" / last.name).read_bytes() == last.read_bytes()[:position]
    assert run_kdump("verify-index", str(out)).exit_code == 0


@pytest.mark.parametrize(("version", "entries"), [("4.3", True), ("3.9", False)])
def test_split_pieces_are_indexed_as_the_release_appends(logs: Path, tmp_path: Path, version: str,
                                                        entries: bool) -> None:
    # After a clean shutdown only the segment with no offset index is recovered; its split pieces are
    # not recovered again, so their indexes are those LogSegment.appendFromFile wrote: per batch since
    # Kafka 4.1, before that once per chunk of up to 1 MiB (here: one chunk, no offset-index entry).
    (logs / ".kafka_cleanshutdown").write_text("")
    first = _segments(logs / "a-0")[0]
    position, _ = _append_overflowing_copy(first)
    first.with_suffix(".index").unlink()
    out = tmp_path / version
    result = run_kdump("recover", str(logs), "--out", str(out), "--kafka-version", version,
                       "--index-interval-bytes", "512")
    assert result.exit_code == 0, result.stdout + result.stderr
    index = (out / "a-0" / first.name).with_suffix(".index").read_bytes()
    assert (len(index) > 0) == entries and position > 512


def test_a_split_that_meets_a_cut_batch_is_a_refusal(logs: Path) -> None:
    last = _segments(logs / "a-0")[-1]
    _append_overflowing_copy(last)
    with open(last, "ab") as f:
        f.write(last.read_bytes()[:30])        # the start of a batch, cut: the split cannot read it
    result = run_kdump("recover", str(logs))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {last}: the broker refuses to load a-0: ")
    assert "splitting the overflowed segment fails" in result.stderr


# --- --out: the recovered copy --------------------------------------------------------------------


def test_out_writes_a_copy_the_broker_would_load_as_is(logs: Path, tmp_path: Path) -> None:
    partition = logs / "a-0"
    segments = _segments(partition)
    victim = segments[-2]
    position, size, base_offset, _ = _batches(victim)[1]
    data = bytearray(victim.read_bytes())
    data[position + size - 3] ^= 0x40
    victim.write_bytes(bytes(data))
    _set_checkpoint(logs, "recovery-point-offset-checkpoint", 0)
    before = {p.name: p.read_bytes() for p in partition.iterdir()}

    out = tmp_path / "salvaged"
    result = run_kdump("recover", str(logs), "--out", str(out))
    assert result.exit_code == 1, result.stderr
    assert {p.name: p.read_bytes() for p in partition.iterdir()} == before   # the source is never changed
    copy = out / "a-0"
    assert (copy / victim.name).read_bytes() == bytes(data[:position])
    assert not (copy / segments[-1].name).exists()
    assert (out / ".kafka_cleanshutdown").exists()
    code, plan = _plan(out)
    assert code == 0 and plan["recovered"] == [] and plan["logEndOffset"] == base_offset
    assert run_kdump("verify-index", str(out)).exit_code == 0
    rebuilt = tmp_path / "rebuilt"
    assert run_kdump("rebuild-index", str(copy / victim.name), "--out", str(rebuilt)).exit_code == 0
    for suffix in (".index", ".timeindex"):
        name = victim.name.replace(".log", suffix)
        assert (copy / name).read_bytes() == (rebuilt / name).read_bytes()


def test_out_never_replaces_what_it_did_not_write(logs: Path, tmp_path: Path) -> None:
    out = tmp_path / "taken"
    out.mkdir()
    (out / "precious").write_text("x")
    result = run_kdump("recover", str(logs), "--out", str(out), "--force")
    assert result.exit_code == 2 and (out / "precious").read_text() == "x"
    inside = run_kdump("recover", str(logs), "--out", str(logs / "copy"))
    assert inside.exit_code == 2 and not (logs / "copy").exists()
    first = run_kdump("recover", str(logs), "--out", str(tmp_path / "again"))
    assert first.exit_code == 0
    assert run_kdump("recover", str(logs), "--out", str(tmp_path / "again")).exit_code == 2
    assert run_kdump("recover", str(logs), "--out", str(tmp_path / "again"), "--force").exit_code == 0
