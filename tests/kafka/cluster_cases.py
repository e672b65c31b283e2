"""The replica cases of `kdump replicas` played on one real cluster (tests/kafka/cluster.py), with the
brokers' own record of what then happened.

One timeline serves every case, each on its own topic, so the cluster's brokers are stopped, killed and
restarted as few times as the cases need:

  phase A   all three brokers up: every topic created and written in sync; broker 3 stopped (case 4's
            leader deletes by retention past its end, case 5's other replicas clean, case 6 reassigned
            away from it); broker 2 stopped (cases 2 and 3 get acks=1 writes on broker 1 alone); then
            broker 1 killed and 2 elected uncleanly (case 2 and 3), 2 killed and 1 elected uncleanly
            (case 3), 1 killed and 2 back (case 3 elected uncleanly again, case 2 cleanly) with a second
            log dir, to which case 6's `moving` replica starts moving (held open by broker 2's
            replica.alter.log.dirs.io.max.bytes.per.second of 1 and replica.fetch.max.bytes of 1024: one
            batch copied about every 11 s); 2 stopped.
            Case 7 (3.9.2 only, see LOAD_LOSS_RELEASES) rides on the same stops: written in sync before broker
            3 stops, its followers leave the ISR as 3 and 2 stop, broker 1 (its last ISR member) is killed
            with its last segment unflushed. With every broker down, one value byte of a batch in that
            segment is flipped in broker 1's own log dir and the log dirs are copied (copy 7, its input);
            broker 1 is the first to start on it (2 killed, 3 stopped): its loader truncates at the damaged
            batch, and it leads again (the last ISR member) until it is killed again.
  copy 1    every broker's log dirs, all brokers stopped: the input for cases 2 to 6.
  phase B   brokers 2, 3, 1 restarted in that order; the test waits until every replica is back in sync and
            reads what each broker did (its truncation log lines, leader-epoch-checkpoint, log end); broker
            2's move unthrottled and awaited until the future replica replaced the current one. Case 7's
            followers 2 and 3 fetch from broker 1 and truncate to its loaded log end.
  phase C   case 1's partitions back on their preferred leaders (1, 2, 3) and written in sync, brokers
            stopped cleanly one by one (3, 2, 1), each stop moving leaderships.
  copy 2    the input for case 1.

Expected values come from the brokers: the offsets the producer was acknowledged, the files Kafka wrote
and the lines it logged; never from kdump.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

from cluster import Cluster, high_watermark, leader_epochs, read_checkpoint

C1, C2, C3, C4, C5, C6 = "in-sync", "unclean", "kip279", "retention", "compacted", "stray"
C6F = "moving"  # case 6's second half: a replica moving between broker 2's log dirs (a -future dir)
C7 = "loadloss"  # case 7: the last ISR member's own restart recovery truncates it (issue 31, case 1)
LOAD_LOSS_RECORDS = 70  # about ten batches of at most 1 KiB: three segments of 4 KiB, the last one of two batches
# Case 7 needs the uncleanly stopped broker to lead again. Without KIP-966's eligible leader replicas (3.9.2's
# default) the controller elects the last ISR member when it comes back; with them (on by default in 4.x) an
# uncleanly shut down broker is first removed from the ISR and ELR (ReplicationControlManager.
# handleBrokerUncleanShutdown) and the partition stays offline. Formatting 4.4.0 with
# eligible.leader.replicas.version=0 would take ELR from every other case of the 4.4.0 run too.
LOAD_LOSS_RELEASES = ("3.9.2",)
MOVING = 150  # its records: about 20 batches of at most 1 KiB (the driver's batch.size)
ALTER_DIRS_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
# LogManager.replaceCurrentWithFutureLog (3.9.2 kafka/log/LogManager.scala, 4.4.0 storage LogManager.java)
# and LogManager.recoverAbandonedFutureLogs, the two ways a future replica becomes the current one.
REPLACED = r"The current replica is successfully replaced with the future replica for {tp}\b"
ABANDONED = r"Attempting to recover abandoned future log for {tp}\b"
INITIAL = 10  # records every case topic gets while all replicas are in sync
ACKS1 = 7  # case 2: acks=1 records only broker 1 ever holds
LATER = 12  # case 2: records broker 2 takes after its unclean election
# "Truncating partition T-P with TruncationState(offset=N, completed=B)" (AbstractFetcherThread)
TRUNCATING = r"Truncating partition {tp} with TruncationState\(offset=(\d+), completed=(\w+)\)"
# LogManager.loadLog's line once a partition is loaded (3.9.2 kafka/log/LogManager.scala)
LOADED = r"Completed load of \w+\(dir=\S*/{tp}, .*? log-end-offset (\d+) "
# LogSegment.recover's warning at the first batch that fails its checks
INVALID = r"Found invalid messages in log segment \S*/{tp}/(\d+)\.log at byte offset (\d+)"
# A follower behind the leader's log start (AbstractFetcherThread.fetchOffsetAndTruncate ->
# truncateFullyAndStartAt): "Truncate fully and reset fetch offset" in 4.x, "Reset fetch offset" in 3.x.
RESET = (r"(?:Truncate fully and reset fetch offset|Reset fetch offset) for partition {tp} from (\d+) to "
         r"(?:the )?current leader(?: \d+)?'s start offset (\d+)")


@dataclass
class Replica:
    """What the broker did with one replica when it rejoined (phase B)."""

    truncations: list[tuple[int, bool]] = field(default_factory=list)  # TruncationState lines, in order
    reset: tuple[int, int] | None = None  # (its log end, the leader's start) of a full truncation
    epochs_after: list[tuple[int, int]] = field(default_factory=list)
    log_bytes_after: bytes = b""  # its .log files end to end, once back in the ISR


@dataclass
class Truth:
    """One case's partition: the broker-made facts the test compares kdump's prediction with."""

    topic: str
    partition: int = 0
    leader: int = -1  # the leader when the replicas rejoined (phase B)
    log_end_before: dict[int, int] = field(default_factory=dict)  # from the producer's acknowledged offsets
    high_watermark_before: dict[int, int | None] = field(default_factory=dict)  # replication-offset-checkpoint
    epochs_before: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    log_end_after: int = -1
    replicas: dict[int, Replica] = field(default_factory=dict)

    @property
    def tp(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass
class LoadLoss:
    """Case 7: what broker 1's log dir held when it was killed and damaged, and what its loader then did."""

    copy: Path  # every broker's log dirs, all stopped, broker 1's damaged
    truth: Truth  # log_end_before from the producer's acknowledged offsets, the rest from copy 7 and phase B
    segments: list[int] = field(default_factory=list)  # broker 1's segment base offsets
    damaged: tuple[int, int] = (-1, -1)  # the damaged batch's base offset and its file position
    recovery_point: int | None = None  # broker 1's recovery-point-offset-checkpoint in the copy
    clean_shutdown: bool = True  # broker 1's log dir held .kafka_cleanshutdown in the copy
    loaded_end: int = -1  # "Completed load of ... log-end-offset N": broker 1's log end after loading
    invalid_at: tuple[int, int] | None = None  # "Found invalid messages in log segment": (base offset, position)
    led_end: int = -1  # ListOffsets' latest offset once broker 1 led again
    led_epochs: list[tuple[int, int]] = field(default_factory=list)  # its leader-epoch-checkpoint then


@dataclass
class Run:
    release: str
    copy1: Path  # cases 2 to 6
    copy2: Path  # case 1
    truths: dict[str, Truth]
    case1_partitions: int = 3
    stray_gone: bool = False  # case 6: broker 3 removed its stray replica dir when it came back
    moving_end: int = -1  # case 6: the moving replica's log end offset (the producer's acknowledged offsets)
    future_replaced: bool = False  # case 6: broker 2 finished the move (its copy thread's swap) after restart
    future_recovered: bool = False  # case 6: ... or promoted the future replica at startup instead
    moved_bytes: bytes = b""  # case 6: the replica's .log bytes in broker 2's second dir after the move
    notes: list[str] = field(default_factory=list)
    load_loss: LoadLoss | None = None  # case 7 (LOAD_LOSS_RELEASES only)


def log_bytes(log_dir: Path, tp: str) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((log_dir / tp).glob("*.log")))


def _batches(log: Path) -> list[tuple[int, int, int]]:
    """(position, size, base offset) of each complete batch of a .log, read with struct."""
    data, out, pos = log.read_bytes(), [], 0
    while pos + 12 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        if pos + 12 + length > len(data):
            break
        out.append((pos, 12 + length, base))
        pos += 12 + length
    return out


def _flip_value_byte(partition: Path) -> tuple[int, int]:
    """Flip one byte of the last record's value in the second batch (the only one, if alone) of the last
    segment; (the batch's base offset, its position). ClusterDriver's values end in 100 'x's, then comes the
    record's header count (one byte, 0): the byte 10 before the batch's end is a value byte."""
    last = max(partition.glob("*.log"))
    batches = _batches(last)
    position, size, base = batches[min(1, len(batches) - 1)]
    with open(last, "r+b") as f:  # in place: the broker's own file
        f.seek(position + size - 10)
        tail = f.read(10)
        assert tail[0] == ord("x") and tail[-1] == 0, f"not a value byte: {tail!r}"
        f.seek(position + size - 10)
        f.write(bytes([tail[0] ^ 0x01]))
    return base, position


def play(cluster: Cluster, work: Path) -> Run:
    """Play every case on a started cluster; return the copies and the brokers' facts."""
    c = cluster
    seg = c.segment_config(4096)
    load_loss = c.release in LOAD_LOSS_RELEASES
    # ----- phase A -----
    c.create_topic(C1, [(1, 2, 3), (2, 3, 1), (3, 1, 2)], **seg)
    c.create_topic(C2, [(1, 2, 3)], **seg)
    c.create_topic(C3, [(1, 2)], **seg)
    c.create_topic(C4, [(1, 2, 3)], **seg)
    # Nothing cleanable while the records are younger than a day: no broker cleans until told to.
    c.create_topic(C5, [(1, 2, 3)], **seg, cleanup_policy="compact", min_cleanable_dirty_ratio="0.01",
                   delete_retention_ms="0", min_compaction_lag_ms="86400000")
    c.create_topic(C6, [(1, 2, 3)], **seg)
    c.create_topic(C6F, [(2, 3)], **seg)
    if load_loss:
        c.create_topic(C7, [(1, 2, 3)], **seg)
    c.call("alter", "broker:2", f"{ALTER_DIRS_RATE}=1")
    _, moving_last = c.produce(C6F, 0, MOVING, "all", "moving")
    for topic in (C2, C3, C4, C6):
        c.produce(topic, 0, INITIAL, "all", "in-sync")
    for p in range(3):
        c.produce(C1, p, 40, "all", "first")
    for _ in range(4):  # keys key-0..9 written 4 times: three of every four records are cleanable
        _, last5 = c.produce(C5, 0, INITIAL, "all", "key")
    truths = {t: Truth(t) for t in (C2, C3, C4, C5, C6)}
    truths[C5].log_end_before = dict.fromkeys((1, 2, 3), last5 + 1)
    if load_loss:
        # case 7: in sync, and every replica's replication-offset-checkpoint at the log end before any stops
        _, last7 = c.produce(C7, 0, LOAD_LOSS_RECORDS, "all", "in-sync")
        truths[C7] = Truth(C7, log_end_before=dict.fromkeys((1, 2, 3), last7 + 1))
        for n in (1, 2, 3):
            c.wait_for(f"broker {n} checkpointed {C7}'s high watermark",
                       lambda n=n: high_watermark(c.brokers[n].log_dir, C7, 0) == last7 + 1, timeout=30)

    c.stop_broker(3)
    # case 4: the leader (1) and follower 2 delete by retention everything broker 3 holds.
    _, last = c.produce(C4, 0, 60, "all", "after-3-left")
    c.call("alter", C4, "retention.bytes=6000")
    c.wait_for(f"{C4} log start past broker 3's end", lambda: c.offsets(C4, 0)[0] > INITIAL, timeout=60)
    truths[C4].log_end_before = {1: last + 1, 2: last + 1, 3: INITIAL}
    # case 5: brokers 1 and 2 clean their replicas; 3 keeps every record.
    c.call("alter", C5, "min.compaction.lag.ms=0")
    for n in (1, 2):
        c.wait_for(f"broker {n} cleaned {C5}", lambda n=n: _cleaned(c.brokers[n].log_dir, C5), timeout=60)
    # case 6: the partition leaves broker 3 while it is down: its dir there becomes a stray.
    c.call("reassign", C6, 0, "1,2")
    c.wait_partition(C6, 0, "replicas 1,2", lambda p: p.replicas == (1, 2))

    c.stop_broker(2)
    c.wait_partition(C2, 0, "ISR [1]", lambda p: p.isr == (1,))
    if load_loss:
        c.wait_partition(C7, 0, "ISR [1]", lambda p: p.isr == (1,))
    _, last1 = c.produce(C2, 0, ACKS1, "1", "only-on-1")
    c.produce(C3, 0, 5, "1", "e0-only-on-1")
    # The old leader's own high watermark covers its acks=1 records (an ISR of one commits them): wait
    # until its replication-offset-checkpoint says so, then crash it.
    c.wait_for("broker 1 checkpointed its high watermark",
               lambda: high_watermark(c.brokers[1].log_dir, C2, 0) == last1 + 1, timeout=30)
    c.kill_broker(1)
    run7 = None
    if load_loss:
        # case 7: every broker down; broker 1's last segment damaged where broker 1 will load it, then copied
        d1 = c.brokers[1].log_dir
        run7 = LoadLoss(work / "copy7", truths[C7], segments=sorted(int(p.name[:20]) for p in
                                                                    (d1 / f"{C7}-0").glob("*.log")))
        run7.damaged = _flip_value_byte(d1 / f"{C7}-0")
        c.copy_log_dirs(run7.copy)
        b1 = run7.copy / "broker-1"
        run7.clean_shutdown = (b1 / ".kafka_cleanshutdown").exists()
        run7.recovery_point = next((int(r[2]) for r in read_checkpoint(b1 / "recovery-point-offset-checkpoint")
                                    if r[0] == C7 and int(r[1]) == 0), None)
        for n in (1, 2, 3):
            run7.truth.epochs_before[n] = leader_epochs(run7.copy / f"broker-{n}", C7, 0)
            run7.truth.high_watermark_before[n] = high_watermark(run7.copy / f"broker-{n}", C7, 0)
    c.start_broker(2)
    for topic in (C2, C3):
        c.wait_partition(topic, 0, "no leader", lambda p: p.leader == -1)
        c.elect("unclean", topic, 0)
        c.wait_partition(topic, 0, "broker 2 leads", lambda p: p.leader == 2)
    _, last2 = c.produce(C2, 0, LATER, "1", "after-unclean")
    c.produce(C3, 0, 10, "1", "l1-on-2")
    truths[C2].log_end_before = {1: last1 + 1, 2: last2 + 1, 3: INITIAL}

    # case 3: a second and a third unclean election, alternating between brokers 1 and 2.
    c.kill_broker(2)
    if run7 is not None:
        c.mark_logs()
    c.start_broker(1)
    if run7 is not None:
        # case 7: broker 1 loaded its damaged replica and leads it again, the ISR's only member
        c.wait_partition(C7, 0, "broker 1 leads", lambda p: p.leader == 1)
        tp = re.escape(f"{C7}-0")
        run7.loaded_end = int(c.wait_log(1, LOADED.format(tp=tp))[1])
        invalid = c.log_lines(1, INVALID.format(tp=tp))
        run7.invalid_at = (int(invalid[0][1]), int(invalid[0][2])) if invalid else None
        run7.led_end = c.offsets(C7, 0)[1]
        run7.led_epochs = c.wait_for("broker 1 checkpointed its new leader epoch",
                                     lambda: len(e := leader_epochs(c.brokers[1].log_dir, C7, 0)) > 1 and e)
    c.wait_partition(C3, 0, "no leader", lambda p: p.leader == -1)
    c.elect("unclean", C3, 0)
    c.wait_partition(C3, 0, "broker 1 leads", lambda p: p.leader == 1)
    _, f_last = c.produce(C3, 0, 5, "1", "f1-on-1")
    c.kill_broker(1)
    dir2 = c.add_log_dir(2, **{"replica.fetch.max.bytes": "1024"})
    c.start_broker(2)
    # case 6: the moving replica starts its move to broker 2's new dir, the copy held open by the throttle.
    c.call("movedir", 2, dir2, C6F, 0)
    c.wait_for("broker 2's -future replica", lambda: list(dir2.glob(f"{C6F}-0.*-future")), timeout=30)
    c.wait_partition(C3, 0, "no leader", lambda p: p.leader == -1)
    c.elect("unclean", C3, 0)
    c.wait_partition(C3, 0, "broker 2 leads", lambda p: p.leader == 2)
    _, l_last = c.produce(C3, 0, 3, "1", "l2-on-2")
    truths[C3].log_end_before = {1: f_last + 1, 2: l_last + 1}
    c.wait_partition(C2, 0, "broker 2 leads again", lambda p: p.leader == 2)
    c.stop_broker(2)

    # ----- copy 1 -----
    copy1 = c.copy_log_dirs(work / "copy1")
    for truth in (truths[t] for t in (C2, C3, C4, C5, C6)):  # case 7's input is copy 7
        for n in (1, 2, 3):
            d = copy1 / f"broker-{n}"
            if (d / truth.tp).exists():
                truth.epochs_before[n] = leader_epochs(d, truth.topic, 0)
                truth.high_watermark_before[n] = high_watermark(d, truth.topic, 0)

    # ----- phase B -----
    c.mark_logs()
    for n in (2, 3, 1):
        c.start_broker(n)
    run = Run(c.release, copy1, work / "copy2", truths, moving_end=moving_last + 1, load_loss=run7)
    for topic in (C2, C3, C4, C5, *([C7] if load_loss else [])):
        t = truths[topic]
        part = c.wait_partition(topic, 0, "every replica back in sync",
                                lambda p: p.leader >= 0 and set(p.isr) == set(p.replicas), timeout=90)
        t.leader = part.leader
        t.log_end_after = c.offsets(topic, 0)[1]
    run.stray_gone = bool(c.wait_for("broker 3 dropped its stray replica",
                                     lambda: not (c.brokers[3].log_dir / f"{C6}-0").exists(), timeout=60))
    # case 6: the move resumed after the restart; unthrottled, the future replica catches up and replaces
    # the current one.
    c.call("alter", "broker:2", f"{ALTER_DIRS_RATE}=1000000000")
    tp = re.escape(f"{C6F}-0")
    c.wait_for("broker 2 finished the move", lambda: c.log_lines(2, REPLACED.format(tp=tp))
               or c.log_lines(2, ABANDONED.format(tp=tp)), timeout=90)
    run.future_replaced = bool(c.log_lines(2, REPLACED.format(tp=tp)))
    run.future_recovered = bool(c.log_lines(2, ABANDONED.format(tp=tp)))
    run.moved_bytes = log_bytes(dir2, f"{C6F}-0")
    for t in truths.values():
        for n in (1, 2, 3):
            if not (c.brokers[n].log_dir / t.tp).exists():
                continue
            r = t.replicas[n] = Replica()
            r.truncations = [(int(m[1]), m[2] == "true")
                             for m in c.log_lines(n, TRUNCATING.format(tp=re.escape(t.tp)))]
            resets = c.log_lines(n, RESET.format(tp=re.escape(t.tp)))
            r.reset = (int(resets[-1][1]), int(resets[-1][2])) if resets else None
            r.epochs_after = leader_epochs(c.brokers[n].log_dir, t.topic, 0)
            r.log_bytes_after = log_bytes(c.brokers[n].log_dir, t.tp)

    # ----- phase C -----
    for p, preferred in enumerate((1, 2, 3)):
        # Each partition back on its preferred leader, so stopping the brokers one by one moves leaderships.
        c.wait_partition(C1, p, "every replica in sync", lambda p: set(p.isr) == {1, 2, 3}, timeout=90)
        if c.describe(C1)[p].leader != preferred:
            c.elect("preferred", C1, p)
            c.wait_partition(C1, p, f"broker {preferred} leads", lambda p, n=preferred: p.leader == n)
        c.produce(C1, p, 40, "all", "second")
    for n in (3, 2, 1):
        c.stop_broker(n)
    c.copy_log_dirs(run.copy2)
    return run


def _cleaned(log_dir: Path, topic: str) -> bool:
    return any(row[0] == topic and int(row[2]) > 0 for row in read_checkpoint(log_dir / "cleaner-offset-checkpoint"))
