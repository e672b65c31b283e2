"""`kdump recover` against Kafka 4.3.0's own loader (`UnifiedLog.create`, tests/kafka/LoaderOracle4.java).

Each case damages two copies of a `kdump gen` log dir the same way: kdump plans and writes its
recovered copy from one (`recover --json --out`), the loader oracle loads the other in place and closes
it as at a clean stop. What the plan says (log end offset, log start offset, recovery point, high
watermark) and what the copy holds (every segment's name and size, its `.txnindex` entries, the
leader-epoch checkpoint) must be what the loader did. One JVM serves every case of the session.
Needs java and mvn (skipped with the reason otherwise; failed under CI=true).
"""

from __future__ import annotations

import json
import shutil
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from loader_oracle import LoaderOracle, partition

from kdump.format.checkpoint import (
    OffsetCheckpointEntry,
    encode_offset_checkpoint,
    parse_leader_epoch_checkpoint,
)
from kdump.format.control import ControlType, encode_control_key, encode_end_txn_marker
from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump.format.txnindex import iter_aborted_txns
from kdump_testing import run_kdump

TOPIC = "t"
PART = f"{TOPIC}-0"


def _gen(out: Path, *args: str) -> Path:
    result = run_kdump("gen", str(out), "--topics", TOPIC, "--partitions", "1", "--seed", "5", *args)
    assert result.exit_code == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def big_batches(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Batches of about 700 bytes, segments of about 4 KiB: with index.interval.bytes 512 every batch
    but a segment's first gets an offset index entry."""
    return _gen(tmp_path_factory.mktemp("big") / "logs", "--records", "200", "--records-per-batch", "5",
                "--value-size", "110-120", "--segment-bytes", "4096", "--index-interval-bytes", "512")


def _batches(log: Path) -> list[tuple[int, int]]:
    """(position, size) of each complete batch of a .log (read with struct, not kdump)."""
    data = log.read_bytes()
    out, pos = [], 0
    while pos + 12 <= len(data):
        size = 12 + struct.unpack_from(">i", data, pos + 8)[0]
        if pos + size > len(data):
            break
        out.append((pos, size))
        pos += size
    return out


def _swap(log: Path, first: int) -> None:
    """Swap batches ``first`` and ``first + 1`` of ``log``: offsets go backwards, every CRC still holds."""
    data = log.read_bytes()
    (pa, sa), (pb, sb) = _batches(log)[first:first + 2]
    log.write_bytes(data[:pa] + data[pb:pb + sb] + data[pa:pa + sa] + data[pb + sb:])


def _set_checkpoint(log_dir: Path, name: str, offset: int) -> None:
    (log_dir / name).write_bytes(encode_offset_checkpoint([OffsetCheckpointEntry(TOPIC, 0, offset)]))


def _txn_entries(out_partition: Path) -> dict[int, list[dict[str, int]]]:
    found = {}
    for path in sorted(out_partition.glob("*.txnindex")):
        found[int(path.name[:20])] = [{"producerId": e.producer_id, "firstOffset": e.first_offset,
                                       "lastOffset": e.last_offset, "lastStableOffset": e.last_stable_offset}
                                      for e in iter_aborted_txns(path.read_bytes(), str(path))]
    return found


def _recover(copy: Path, out: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    result = run_kdump("recover", str(copy), "--json", "--out", str(out), *args)
    assert result.exit_code in (0, 1), result.stderr
    return result.exit_code, [json.loads(line) for line in result.stdout.splitlines()]


def check_against_oracle(oracle: LoaderOracle, source: Path, tmp_path: Path, damage: Callable[[Path], None],
                         *args: str, dir_name: str = PART, **config: object) -> tuple[dict[str, Any], dict[str, Any]]:
    """Damage two copies of ``source``; compare kdump's plan and copy of ``dir_name`` with the loader's."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for copy in (ours, theirs):
        shutil.copytree(source, copy)
        damage(copy)
    code, objects = _recover(ours, tmp_path / "out", *args)
    loaded = partition(oracle.load(theirs, **config), dir_name)
    plan = next(o for o in objects if o["type"] == "partition" and o["path"].endswith(dir_name))
    assert code == (1 if plan["losesData"] else 0)
    assert plan["logEndOffset"] == loaded["logEndOffset"], (plan, loaded)
    assert plan["logStartOffset"] == loaded["logStartOffset"]
    assert plan["recoveryPointAfter"] == loaded["recoveryPoint"]
    if "highWatermark" in loaded:
        assert plan["highWatermark"] == loaded["highWatermark"]
    copy = tmp_path / "out" / dir_name
    assert {p.name: p.stat().st_size for p in copy.glob("*.log")} == \
        {f"{s['baseOffset']:020d}.log": s["size"] for s in loaded["segments"]}
    assert _txn_entries(copy) == {s["baseOffset"]: s["abortedTxns"] for s in loaded["segments"] if s["abortedTxns"]}
    epochs = parse_leader_epoch_checkpoint((copy / "leader-epoch-checkpoint").read_bytes(), "epochs").entries
    assert [{"epoch": e.epoch, "startOffset": e.start_offset} for e in epochs] == loaded["leaderEpochs"]
    return plan, loaded


# -- case 2: batches out of order in an unflushed segment -------------------------------------------

def _swapped_in_second_segment(log_dir: Path) -> None:
    _swap(sorted((log_dir / PART).glob("*.log"))[1], 1)
    _set_checkpoint(log_dir, "recovery-point-offset-checkpoint", 0)


def test_swapped_indexed_batches_truncate_the_segment(loader_oracle: LoaderOracle, big_batches: Path,
                                                      tmp_path: Path) -> None:
    """Both swapped batches get an offset index entry: OffsetIndex.append throws InvalidOffsetException,
    LogLoader.recoverLog truncates the segment to its base offset and deletes every later one."""
    segments = sorted((big_batches / PART).glob("*.log"))
    plan, loaded = check_against_oracle(loader_oracle, big_batches, tmp_path, _swapped_in_second_segment,
                                        "--index-interval-bytes", "512", index_interval_bytes=512)
    second = int(segments[1].name[:20])
    assert loaded["logEndOffset"] == second
    assert plan["losesData"]
    recovered = next(r for r in plan["recovered"] if r["baseOffset"] == second)
    assert recovered["validBytes"] == 0 and "InvalidOffsetException" in recovered["stopped"]
    lost = sum(r["lostRecords"] for r in plan["recovered"]) + sum(d["records"] for d in plan["deletedSegments"])
    assert lost == 200 - second     # every record from the truncated segment on
    assert [d["baseOffset"] for d in plan["deletedSegments"]] == [int(p.name[:20]) for p in segments[2:]]


def test_swapped_batches_without_index_entries_are_kept(loader_oracle: LoaderOracle, big_batches: Path,
                                                        tmp_path: Path) -> None:
    """With the default index.interval.bytes (4096) neither swapped batch gets an entry: recovery keeps
    the segment as it is, and so must the plan."""
    plan, loaded = check_against_oracle(loader_oracle, big_batches, tmp_path, _swapped_in_second_segment)
    assert not plan["losesData"]
    assert loaded["logEndOffset"] == 200


def test_swapped_batches_in_a_segment_without_index_stop_the_loading(loader_oracle: LoaderOracle, big_batches: Path,
                                                                     tmp_path: Path) -> None:
    """A segment with no .index is recovered while the files load (LogLoader.loadSegmentFiles), where
    InvalidOffsetException is not caught: UnifiedLog.create fails, and kdump refuses the partition."""
    def damage(log_dir: Path) -> None:
        _swapped_in_second_segment(log_dir)
        min((log_dir / PART).glob("*.index")).with_name(sorted((log_dir / PART).glob("*.log"))[1].stem +
                                                         ".index").unlink()
        (log_dir / ".kafka_cleanshutdown").touch()

    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for copy in (ours, theirs):
        shutil.copytree(big_batches, copy)
        damage(copy)
    loaded = partition(loader_oracle.load(theirs, index_interval_bytes=512), PART)
    assert "InvalidOffsetException" in loaded["error"]
    result = run_kdump("recover", str(ours), "--index-interval-bytes", "512")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "InvalidOffsetException" in result.stderr and "does not start" in result.stderr


# -- case 7: replicas being moved, deleted partitions ---------------------------------------------

FUTURE = f"{PART}.{'ab' * 16}-future"
DELETED = f"{PART}.{'cd' * 16}-delete"
STRAY = f"{PART}.{'ef' * 16}-stray"


def _cut_last_batch(partition_dir: Path) -> None:
    active = max(partition_dir.glob("*.log"))
    active.write_bytes(active.read_bytes()[:-20])


def _future_and_deleted(log_dir: Path) -> None:
    """The partition's dir becomes a -future dir (a replica being moved into this log dir) and a copy of
    it a -delete and a -stray dir; the last batch of each is cut, and nothing was flushed (recovery point 0)."""
    shutil.copytree(log_dir / PART, log_dir / DELETED)
    shutil.copytree(log_dir / PART, log_dir / STRAY)
    (log_dir / PART).rename(log_dir / FUTURE)
    for name in (FUTURE, DELETED, STRAY):
        _cut_last_batch(log_dir / name)
    _set_checkpoint(log_dir, "recovery-point-offset-checkpoint", 0)


def test_future_dirs_are_recovered_and_deleted_dirs_are_not(loader_oracle: LoaderOracle, big_batches: Path,
                                                            tmp_path: Path) -> None:
    """LogManager.loadLogs loads every dir of a log dir: a -future one is recovered like any log
    (LogLoader.recoverLog), a -delete one is loaded without recovery and handed to the deleter."""
    plan, loaded = check_against_oracle(loader_oracle, big_batches, tmp_path, _future_and_deleted, dir_name=FUTURE)
    assert plan["dirState"] == "future" and plan["losesData"]
    assert loaded["logEndOffset"] == 195
    objects = [json.loads(line) for line in run_kdump("recover", str(tmp_path / "ours"), "--json").stdout.splitlines()]
    deleted = next(o for o in objects if o.get("dirState") == "delete")
    assert deleted["recovered"] == [] and not deleted["losesData"]
    assert not (tmp_path / "out" / DELETED).exists()
    stray = next(o for o in objects if o.get("dirState") == "stray")
    assert stray["logEndOffset"] == partition(loader_oracle.load(tmp_path / "theirs"), STRAY)["logEndOffset"] == 195
    # The loader left the -delete dir's cut segment as it was: no recovery.
    assert max((tmp_path / "theirs" / DELETED).glob("*.log")).stat().st_size == \
        max((tmp_path / "ours" / DELETED).glob("*.log")).stat().st_size


# -- case 6: losses against the high watermark, damage the broker does not re-check ----------------

def test_a_torn_last_batch_is_tied_to_the_high_watermark(loader_oracle: LoaderOracle, big_batches: Path,
                                                         tmp_path: Path) -> None:
    """The replication-offset-checkpoint says 200: offsets 195..199 of the torn batch were committed."""
    def damage(log_dir: Path) -> None:
        _cut_last_batch(log_dir / PART)
        _set_checkpoint(log_dir, "replication-offset-checkpoint", 200)

    plan, loaded = check_against_oracle(loader_oracle, big_batches, tmp_path, damage)
    assert loaded["logEndOffset"] == 195 and loaded["highWatermark"] == 195
    assert plan["committedLost"] == [195, 199]
    text = run_kdump("recover", str(tmp_path / "ours")).stdout
    assert "verdict: DATA LOSS: 0 records in complete batches" in text
    assert "high watermark: the checkpoint 200 proves offsets 195..199 were committed" in text


def test_damage_below_the_recovery_point_is_not_rechecked(loader_oracle: LoaderOracle, big_batches: Path,
                                                          tmp_path: Path) -> None:
    """A CRC failure in the first segment, below the recovery point: recovery starts at the segment
    holding the recovery point, so the broker keeps the damaged segment whole."""
    first = sorted((big_batches / PART).glob("*.log"))[0]

    def damage(log_dir: Path) -> None:
        log = log_dir / PART / first.name
        data = bytearray(log.read_bytes())
        data[_batches(log)[2][0] + 70] ^= 0x01        # in the third batch's records: its CRC fails
        log.write_bytes(bytes(data))
        _set_checkpoint(log_dir, "recovery-point-offset-checkpoint", 100)

    plan, loaded = check_against_oracle(loader_oracle, big_batches, tmp_path, damage)
    assert loaded["segments"][0]["size"] == first.stat().st_size
    assert [u["baseOffset"] for u in plan["unchecked"]] == [0]
    assert "fails its CRC check" in plan["unchecked"][0]["damage"]
    assert "below the recovery point 100" in run_kdump("recover", str(tmp_path / "ours")).stdout


@pytest.mark.parametrize("clean", [True, False])
def test_a_missing_index_entry_is_rebuilt_only_by_an_unclean_restart(loader_oracle: LoaderOracle, big_batches: Path,
                                                                     tmp_path: Path, clean: bool) -> None:
    """The second segment's .index loses its last entry. After a clean shutdown the broker keeps the index
    as it is; after an unclean one it rebuilds it (every segment from the recovery point 0 on)."""
    second = sorted((big_batches / PART).glob("*.index"))[1]

    def damage(log_dir: Path) -> None:
        index = log_dir / PART / second.name
        index.write_bytes(index.read_bytes()[:-8])
        _set_checkpoint(log_dir, "recovery-point-offset-checkpoint", 0)
        if clean:
            (log_dir / ".kafka_cleanshutdown").touch()

    plan, _ = check_against_oracle(loader_oracle, big_batches, tmp_path, damage, "--index-interval-bytes", "512",
                                   index_interval_bytes=512)
    theirs = (tmp_path / "theirs" / PART / second.name).stat().st_size
    assert theirs == second.stat().st_size - (8 if clean else 0)
    assert (tmp_path / "out" / PART / second.name).stat().st_size == theirs
    if clean:
        unchecked = plan["unchecked"]
        assert [(u["baseOffset"], u["indexEntries"], u["rebuiltByUncleanRestart"]) for u in unchecked] == \
            [(int(second.name[:20]), theirs // 8, True)]
        assert "a clean restart leaves the missing entries missing, an unclean one rebuilds the index" in \
            run_kdump("recover", str(tmp_path / "ours"), "--index-interval-bytes", "512").stdout
    else:
        assert plan["unchecked"] == []


# -- case 1: an ABORT marker from a producer with no ongoing transaction -----------------------------

EMPTY_TXN_PRODUCER = 5000


@pytest.fixture(scope="module")
def empty_abort(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Plain records, then an ABORT marker from a transactional producer that wrote nothing here (it
    added the partition to its transaction and aborted before sending); nothing flushed."""
    logs = _gen(tmp_path_factory.mktemp("empty-abort") / "logs", "--records", "50")
    active = max((logs / PART).glob("*.log"))
    marker = Record(50, 1_700_000_100_000, encode_control_key(ControlType.ABORT), encode_end_txn_marker(0))
    with open(active, "ab") as f:
        f.write(encode_batch_v2([marker], base_offset=50, producer_id=EMPTY_TXN_PRODUCER, producer_epoch=0,
                                partition_leader_epoch=0, is_transactional=True, is_control=True))
    for snapshot in (logs / PART).glob("*.snapshot"):
        snapshot.unlink()           # the state at 50 is not the state at the new end
    _set_checkpoint(logs, "recovery-point-offset-checkpoint", 0)
    return logs


def test_an_abort_marker_with_no_ongoing_transaction_writes_no_txnindex_entry(
        loader_oracle: LoaderOracle, empty_abort: Path, tmp_path: Path) -> None:
    """ProducerAppendInfo.appendEndTxnMarker completes no transaction when the producer has none
    ongoing: the rebuilt .txnindex holds no entry, and the producer is known with no ongoing txn."""
    _, loaded = check_against_oracle(loader_oracle, empty_abort, tmp_path, lambda log_dir: None)
    assert all(not s["abortedTxns"] for s in loaded["segments"])
    assert [(p["producerId"], p["currentTxnFirstOffset"]) for p in loaded["producers"]] == \
        [(EMPTY_TXN_PRODUCER, None)]
    assert loaded["logEndOffset"] == 51


# -- case 5: a log start offset inside the first segment --------------------------------------------

def test_a_log_start_offset_inside_the_first_segment_is_kept(loader_oracle: LoaderOracle, big_batches: Path,
                                                              tmp_path: Path) -> None:
    """log-start-offset-checkpoint 45 with segments from 0: LogLoader.load keeps
    max(checkpoint, first segment's base offset) = 45 (the segment stays; offsets below 45 are gone
    for consumers)."""
    _, loaded = check_against_oracle(
        loader_oracle, big_batches, tmp_path,
        lambda log_dir: _set_checkpoint(log_dir, "log-start-offset-checkpoint", 45))
    assert loaded["logStartOffset"] == 45 and loaded["segments"][0]["baseOffset"] == 0


# The other commands' answers on the same inputs, from the partition-state model (kdump/broker/
# unified_log.py and producer_state.py), must be the loader's too.

def test_verify_agrees_with_the_loader_on_an_empty_abort(loader_oracle: LoaderOracle, empty_abort: Path,
                                                         tmp_path: Path) -> None:
    """No .txnindex entry is expected for the empty abort, in the partition or in its recovered copy."""
    _, loaded = check_against_oracle(loader_oracle, empty_abort, tmp_path, lambda log_dir: None)
    assert all(not s["abortedTxns"] for s in loaded["segments"])
    for path in (tmp_path / "ours", tmp_path / "out"):
        result = run_kdump("verify", str(path))
        assert result.exit_code == 0, result.stdout + result.stderr


def test_summary_and_find_agree_with_the_loader_on_the_log_start(loader_oracle: LoaderOracle, big_batches: Path,
                                                                 tmp_path: Path) -> None:
    """summary says the log starts at 45, and find --offset 44 finds nothing there (OffsetOutOfRange)."""
    _, loaded = check_against_oracle(
        loader_oracle, big_batches, tmp_path,
        lambda log_dir: _set_checkpoint(log_dir, "log-start-offset-checkpoint", 45))
    summary = json.loads(run_kdump("summary", str(tmp_path / "ours"), "--json").stdout.splitlines()[0])
    assert summary["logStartOffset"] == loaded["logStartOffset"] == 45
    found = run_kdump("find", str(tmp_path / "ours" / PART), "--offset", "44")
    assert "offset: 44 " not in found.stdout and "45" in found.stdout + found.stderr


def _after_retention(log_dir: Path, *, checkpointed: bool) -> None:
    """Retention deleted every segment below the first one whose aborted transaction began in an earlier
    segment (the producer snapshot at its base holds that transaction); nothing flushed since. A broker
    leaves the partition out of log-start-offset-checkpoint when its log start is its first segment's
    base offset; ``checkpointed`` writes it anyway."""
    partition_dir = log_dir / PART
    txn = next(p for p in sorted(partition_dir.glob("*.txnindex"))
               if any(e.first_offset < int(p.name[:20]) for e in iter_aborted_txns(p.read_bytes(), str(p))))
    base = int(txn.name[:20])
    for path in partition_dir.iterdir():
        if path.name[:20].isdigit() and int(path.name[:20]) < base:
            path.unlink()
    if checkpointed:
        _set_checkpoint(log_dir, "log-start-offset-checkpoint", base)
    else:
        (log_dir / "log-start-offset-checkpoint").write_bytes(encode_offset_checkpoint([]))
    _set_checkpoint(log_dir, "recovery-point-offset-checkpoint", 0)


@pytest.mark.parametrize("checkpointed", [False, True])
def test_a_transaction_begun_in_a_deleted_segment(loader_oracle: LoaderOracle, tmp_path_factory: pytest.TempPathFactory,
                                                  tmp_path: Path, checkpointed: bool) -> None:
    """Recovery rebuilds the producer state from the snapshot at the first kept segment
    (UnifiedLog.rebuildProducerState), which holds the transaction begun in a segment retention deleted,
    and writes its .txnindex entry at the ABORT marker (first offset below the log start). But
    ProducerStateManager.truncateAndReload deletes snapshots at or below the log start checkpoint: when
    the checkpoint names the first segment's base offset, the state is gone and no entry is written."""
    logs = _gen(tmp_path_factory.mktemp("retention") / "logs", "--records", "300", "--transactional",
                "--abort-ratio", "1", "--segment-bytes", "4096")
    _, loaded = check_against_oracle(loader_oracle, logs, tmp_path,
                                     lambda log_dir: _after_retention(log_dir, checkpointed=checkpointed))
    first = loaded["segments"][0]
    assert any(e["firstOffset"] < first["baseOffset"] for e in first["abortedTxns"]) is not checkpointed


def test_a_log_start_past_the_log_end_empties_the_partition(loader_oracle: LoaderOracle, big_batches: Path,
                                                            tmp_path: Path) -> None:
    """LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd deletes every segment and starts an empty one
    at the log start offset; UnifiedLog's constructor lifts the recovery point to it."""
    def damage(log_dir: Path) -> None:
        _set_checkpoint(log_dir, "log-start-offset-checkpoint", 500)
        _set_checkpoint(log_dir, "recovery-point-offset-checkpoint", 100)
        (log_dir / ".kafka_cleanshutdown").touch()

    plan, loaded = check_against_oracle(loader_oracle, big_batches, tmp_path, damage)
    assert loaded["logStartOffset"] == loaded["logEndOffset"] == loaded["recoveryPoint"] == 500
    assert plan["losesData"]


@pytest.mark.parametrize("variant", [
    ("--transactional", "--abort-ratio", "0.5", "--compression", "gzip", "--txn-batches", "4"),
    ("--idempotent", "--compression", "zstd", "--records-per-batch", "7"),
])
def test_recovering_every_segment_of_a_healthy_partition_loses_nothing(
        loader_oracle: LoaderOracle, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path,
        variant: tuple[str, ...]) -> None:
    """No clean-shutdown marker and recovery point 0: every segment is recovered and kept; the copy's
    segments, .txnindex entries and leader epochs are the loader's."""
    logs = _gen(tmp_path_factory.mktemp("healthy") / "logs", "--records", "400", "--segment-bytes", "4096",
                "--index-interval-bytes", "512", *variant)
    plan, loaded = check_against_oracle(
        loader_oracle, logs, tmp_path, lambda log_dir: _set_checkpoint(log_dir, "recovery-point-offset-checkpoint", 0),
        "--index-interval-bytes", "512", index_interval_bytes=512)
    assert not plan["losesData"] and loaded["logEndOffset"] == plan["logEndOffsetBefore"]
    copy = tmp_path / "out" / PART
    for index in sorted((tmp_path / "theirs" / PART).glob("*.index")) + sorted(
            (tmp_path / "theirs" / PART).glob("*.timeindex")):
        assert (copy / index.name).read_bytes() == index.read_bytes(), index.name
