"""`kdump recover` on a transactional partition of a killed broker, against the real broker.

A transactional producer leaves one transaction open from the start (``kdump-hang``), then runs
committed and aborted transactions beside an idempotent producer, opens a second transaction
(``kdump-crash``) and idles; the broker is killed (kill -9). Copies of the dir get the same damage;
kdump plans and writes its copy of one (`recover --out`) and Kafka recovers the other: for BROKER_CASE
a real broker of the same release starts on it and is stopped cleanly, and the release's own loader
(tests/kafka/loader_oracle.py, one JVM per release) recovers a third copy and must leave the same
files; every other case is recovered by the loader alone (run once, loader and broker left the same
files for every case of the three releases). Then the `.txnindex` files (rebuilt by LogSegment.recover
for every recovered segment) and the producer `.snapshot` files must be the same: the same names (the
snapshots the broker keeps, writes and deletes while it loads) and the same bytes. Producer snapshot
entries hold only what the batches say (ids, epochs, sequences, offsets, batch timestamps, the
coordinator epoch of the last marker, the open transaction's first offset), so with records stamped
at produce time (no producer expires while the broker loads) the files are deterministic.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from broker import RECOVER_RELEASES, Broker, run_driver, start_driver
from broker_checks import damaged_copies, recover_plan
from loader_oracle import LoaderOracle, stopped_differences
from make_real_fixtures import SEGMENT_BYTES, segment_config
from real_jars import kafka_lib

from kdump.format.checkpoint import OffsetCheckpointEntry, encode_offset_checkpoint, parse_offset_checkpoint
from kdump.format.snapshot import parse_producer_snapshot
from kdump.format.txnindex import parse_aborted_txns

TOPIC = "txcrash"
PARTITION = f"{TOPIC}-0"
TRANSACTIONS = 40
# The case a real broker restart decides on every run (the others: the release's loader): the one that
# takes the loader furthest (every segment recovered, a truncation, later segments and snapshots deleted).
BROKER_CASE = "flipped-mid-log"


def _restart_from_zero(log_dir: Path) -> None:
    """The partition's recovery point back to 0 (as a broker killed before its first checkpoint flush
    leaves it): the broker then recovers every segment, and rebuilds every transaction index."""
    path = log_dir / "recovery-point-offset-checkpoint"
    entries = [e for e in parse_offset_checkpoint(path.read_bytes(), str(path)).entries if e.topic != TOPIC]
    path.write_bytes(encode_offset_checkpoint([*entries, OffsetCheckpointEntry(TOPIC, 0, 0)]))


def _flip_in_second_segment(log_dir: Path) -> None:
    """Recovery from 0, and a flipped byte in the middle of the second segment: the broker truncates
    there and deletes every later segment, with the markers of the transactions they held."""
    _restart_from_zero(log_dir)
    second = sorted((log_dir / PARTITION).glob("*.log"))[1]
    data = bytearray(second.read_bytes())
    data[len(data) // 2] ^= 0x10
    second.write_bytes(bytes(data))


def _cut_the_last_batch(log_dir: Path) -> None:
    active = max((log_dir / PARTITION).glob("*.log"))
    data = active.read_bytes()
    active.write_bytes(data[:len(data) - 7])


DAMAGE: dict[str, Callable[[Path], None]] = {
    "killed": lambda log_dir: None,
    "from-zero": _restart_from_zero,
    "flipped-mid-log": _flip_in_second_segment,
    "cut-last-batch": _cut_the_last_batch,
}


@pytest.fixture(scope="module", params=RECOVER_RELEASES)
def killed_txn_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    release = request.param
    tmp = tmp_path_factory.mktemp(f"killed-txn-{release}")
    # LogManager's first recovery-point checkpoint runs log.initial.task.delay.ms (30 s) after start; 3.9
    # and 4.x read that delay from the broker config (LogManager.apply; 3.3 has it fixed), so they
    # checkpoint from the first second.
    config = {} if release.startswith("3.3.") else {"log.initial.task.delay.ms": "1000"}
    broker = Broker(kafka_lib(release), tmp / "logdir", tmp / "work", release, config).start()
    try:
        driver = start_driver(broker.lib, "txncrash", broker.bootstrap, TOPIC, segment_config(release),
                              str(SEGMENT_BYTES), str(TRANSACTIONS))
        timer = threading.Timer(180, driver.kill)
        timer.start()
        try:
            lines = []
            for line in driver.stdout:  # type: ignore[union-attr]
                lines.append(line)
                if line.strip() == "idle":
                    break
        finally:
            timer.cancel()
        assert lines and lines[-1].strip() == "idle", "".join(lines) + (driver.stderr.read() if driver.stderr else "")
        # Kill once the broker has checkpointed a recovery point for the topic, so "killed" recovers from there.
        deadline = time.monotonic() + 90
        checkpoint = broker.log_dir / "recovery-point-offset-checkpoint"
        while f"\n{TOPIC} 0 " not in checkpoint.read_text() and time.monotonic() < deadline:
            time.sleep(0.5)
        broker.kill()
        driver.kill()
        driver.wait(10)
    finally:
        broker.kill()
    assert len(list((broker.log_dir / PARTITION).glob("*.log"))) >= 3
    return release, broker.log_dir


def _files(partition: Path, suffix: str) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(partition.glob(f"*{suffix}"))}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_recover_rebuilds_transaction_indexes_and_snapshots_as_the_broker(
        case: str, killed_txn_dir: tuple[str, Path], tmp_path: Path, start_broker: Callable[..., Broker],
        loader_oracles: Callable[[str], LoaderOracle]) -> None:
    release, killed = killed_txn_dir
    for_kdump, for_broker = damaged_copies(killed, tmp_path, DAMAGE[case])
    before = {p.name for p in (for_broker / PARTITION).glob("*.snapshot")}
    salvaged = tmp_path / "salvaged"
    plan = recover_plan(for_kdump / PARTITION, salvaged, release)

    # The release's loader, stopped as a broker stops (the broker's index settings; the topic's own
    # segment.bytes plays no part in loading).
    def load(partition_dir: Path) -> None:
        loader_oracles(release).load(partition_dir, partition=True, stop=True, system_clock=True, index_interval_bytes=512,
                                     segment_index_bytes=4096)

    if case == BROKER_CASE:
        for_loader = tmp_path / "for-loader"
        shutil.copytree(for_broker, for_loader)
        restarted = start_broker(release, log_dir=for_broker)
        # A 3.3 broker listens before it loads its logs (once it has caught up with the metadata): read
        # the partition to the end so the stop comes after the load.
        run_driver(restarted.lib, "count", restarted.bootstrap, TOPIC)
        assert restarted.stop() in (0, 143)
        load(for_loader / PARTITION)
        assert stopped_differences(for_broker / PARTITION, for_loader / PARTITION) == []
    else:
        load(for_broker / PARTITION)

    ours, theirs = salvaged / PARTITION, for_broker / PARTITION
    assert sorted(p.name for p in ours.glob("*.log")) == sorted(p.name for p in theirs.glob("*.log")), plan
    txn_ours, txn_theirs = _files(ours, ".txnindex"), _files(theirs, ".txnindex")
    assert {n: parse_aborted_txns(d, n) for n, d in txn_ours.items() if d} == \
           {n: parse_aborted_txns(d, n) for n, d in txn_theirs.items() if d}
    assert {n: d for n, d in txn_ours.items() if d} == {n: d for n, d in txn_theirs.items() if d}
    snap_ours, snap_theirs = _files(ours, ".snapshot"), _files(theirs, ".snapshot")
    assert sorted(snap_ours) == sorted(snap_theirs), (before, plan["snapshotsDeleted"])
    for name in snap_theirs:
        assert parse_producer_snapshot(snap_ours[name]).entries == parse_producer_snapshot(snap_theirs[name]).entries, name
        assert snap_ours[name] == snap_theirs[name], name
    # The plan names the snapshots the broker deleted and the transactions left open at the new log end.
    assert sorted(Path(p).name for p in plan["snapshotsDeleted"]) == sorted(before - set(snap_theirs))
    written = set() if plan["snapshotWritten"] is None else {f"{plan['snapshotWritten']:020d}.snapshot"}
    assert written == set(snap_theirs) - before
    end = parse_producer_snapshot(snap_theirs[f"{plan['logEndOffset']:020d}.snapshot"])
    open_txns = {e.producer_id: e.ongoing_txn_first_offset for e in end.entries if e.ongoing_txn_first_offset is not None}
    assert {t["producerId"]: t["firstOffset"] for t in plan["openTransactions"]} == open_txns
