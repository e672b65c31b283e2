"""``kdump replicas``' analysis of one partition's replicas: who leads, where replicas diverge, what each
follower truncates and which of those records are lost (the library under the CLI and Spark).

The leader is ``--if-leader``'s broker, else the metadata's (kdump.broker.cluster_metadata: its leader,
or the one the controller elects when it names none), else, without metadata, the replica with the
highest latest epoch and then the longest log (the one an election among all replicas is likeliest to
pick, and the one that loses least). Each live follower's truncation is kdump.broker.follower_truncation
against that leader. A truncated record is lost when the leader does not hold the same batch at its
offset (at or past the pair's common prefix); it was committed when some replica holding that same
batch had checkpointed a high watermark above it (an ``acks=all`` producer was told it was written).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

from kdump.broker.cluster_metadata import (
    ClusterMetadata,
    PartitionRegistration,
    metadata_for,
    predict_leader,
    replay_all,
)
from kdump.broker.follower_truncation import LogView, TruncationPlan, leader_view, plan_truncation
from kdump.broker.replica_divergence import PairResult, common_end, compare_replicas
from kdump.broker.replicas import (
    Replica,
    ReplicaScan,
    discover,
    group_partitions,
    read_replica_files,
    scan_replica,
)
from kdump.errors import KdumpError
from kdump.log.batches import iter_records_at
from kdump.log.headers import ReadCounter, SegmentHeader, partition_headers
from kdump.log.locations import open_any
from kdump.log.logdir import PartitionDir

MAX_LISTED_PRODUCERS = 100
# DirectoryId.MIGRATING, UNASSIGNED and LOST (server-common org/apache/kafka/common/DirectoryId.java,
# 3.9.2 and 4.4.0): Uuid(0, 0), Uuid(0, 1), Uuid(0, 2), printed as Uuid.toString does; no dir of a broker's.
RESERVED_DIRECTORY_IDS = frozenset({"AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg"})


@dataclass
class ReplicasOptions:
    topic: str | None = None
    partition: int | None = None
    if_leader: int | None = None
    explain: bool = False
    release: tuple[int, int] | None = None


@dataclass
class Truncation:
    follower: Replica
    leader: Replica
    plan: TruncationPlan
    records_truncated: int = 0
    records_lost: int = 0
    committed_records_lost: int = 0
    lost_from: int | None = None
    lost_to: int | None = None              # exclusive
    committed_below: int = 0
    producers: list[int] = field(default_factory=list)
    transactional_producers: list[int] = field(default_factory=list)
    control_batches_lost: int = 0


@dataclass
class BatchSide:
    broker: str
    path: str | None
    position: int | None
    header: dict[str, int] | None
    records: list[dict[str, object]] = field(default_factory=list)


@dataclass
class Divergence:
    first: Replica
    second: Replica
    offset: int
    sides: tuple[BatchSide, BatchSide] | None = None


@dataclass
class PartitionReport:
    topic: str
    partition: int
    topic_id: str | None
    replicas: list[Replica]
    leader: Replica | None = None
    leader_broker: int | None = None
    leader_epoch: int | None = None
    leader_source: str = "none"            # metadata / elected / if-leader / chosen / none
    leader_why: str = ""
    registration: PartitionRegistration | None = None
    divergences: list[Divergence] = field(default_factory=list)
    truncations: list[Truncation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    compacted: bool = False

    @property
    def live(self) -> list[Replica]:
        return [r for r in self.replicas if r.state is None]

    @property
    def verdict(self) -> str:
        if any(t.records_lost for t in self.truncations):
            return "data-loss"
        if self.divergences:
            return "diverged"
        if self.leader is not None and any(r.log_end_offset < self.leader.log_end_offset for r in self.live):
            return "lagging"
        return "consistent"

    @property
    def read_errors(self) -> list[str]:
        """Segments that could not be read to their end (the replica is compared up to there)."""
        return [e for r in self.replicas for e in r.read_errors]

    @property
    def problems(self) -> bool:
        return self.verdict in ("data-loss", "diverged")


PartitionWork = tuple[str, int, list[Replica], "ClusterMetadata | None", set[int], ReplicasOptions]
"""The arguments of ``analyze_partition`` for one partition (picklable: a Spark task gets them)."""


def plan_partitions(paths: Iterable[str], options: ReplicasOptions) -> list[PartitionWork]:
    """Discover the replicas under ``paths``, replay the metadata, and group them by partition."""
    found = discover(paths, topic=options.topic, partition=options.partition)
    copies = replay_all(found.metadata_dirs, options.release)
    unclean = {d.broker for d in found.log_dirs if d.broker is not None and not d.state.clean_shutdown}
    return [(topic, number, members, metadata_for(copies, topic), unclean, options)
            for topic, number, members in group_partitions(found.replicas)]


def analyze(paths: Iterable[str], options: ReplicasOptions,
            counter: ReadCounter | None = None) -> Iterator[PartitionReport]:
    """Every partition found under ``paths``, analysed in turn (see the module docstring)."""
    for work in plan_partitions(paths, options):
        yield analyze_partition(*work, counter=counter)


def analyze_partition(topic: str, number: int, members: list[Replica], metadata: ClusterMetadata | None,
                      unclean: set[int], options: ReplicasOptions,
                      counter: ReadCounter | None = None) -> PartitionReport:
    for replica in members:
        read_replica_files(replica)
    report = PartitionReport(topic, number, None, members)
    found = metadata.partition(topic, number) if metadata is not None else None
    if found is not None:
        report.topic_id, report.registration = found
        report.compacted = metadata is not None and metadata.compacted(topic)
    elif metadata is not None:
        # The cluster no longer (or never) has this partition: every copy on disk is a stray.
        for replica in members:
            if replica.state is None:
                replica.partition = _restated(replica, "stray")
        report.notes.append(f"the cluster metadata ({metadata.source}) has no partition {topic}-{number}: "
                            f"the replicas on disk are strays (a deleted topic, or one moved away)")
    _match_topic_ids(report)
    _mark_unassigned(report)
    report.compacted = report.compacted or any(r.cleaner_offset is not None for r in report.live)
    live = report.live
    # One walk over the live replicas' headers: their state and every pair's divergence.
    pairs = compare_replicas(live, compacted=report.compacted, counter=counter,
                             scans=[ReplicaScan(r) for r in live])
    for replica in report.replicas:
        if replica.state is not None:
            scan_replica(replica, counter)
    _metadata_notes(report)
    _choose_leader(report, unclean, options)
    ends = [r.log_end_offset for r in live]
    for pair in pairs:
        if pair.diverged_at is not None:
            report.divergences.append(_divergence(live, pair, options.explain))
    if report.leader is not None:
        lead = live.index(report.leader)
        view = leader_view(report.leader.log_start_offset, report.leader.log_end_offset, report.leader.cache,
                           report.leader_epoch)
        for index, follower in enumerate(live):
            if index == lead:
                continue
            plan = plan_truncation(LogView(follower.log_start_offset, follower.log_end_offset, follower.cache,
                                           follower.committed_end), view)
            truncation = Truncation(follower, report.leader, plan)
            _count_loss(truncation, live, index, lead, pairs, ends, counter)
            report.truncations.append(truncation)
    _unclean_notes(report)
    for replica in report.replicas:
        for problem in replica.log_dir.problems:
            if problem not in report.notes:
                report.notes.append(problem)
        report.notes.extend(f"broker {replica.label}: {p}" for p in replica.problems + replica.epoch_problems)
    return report


def _unclean_notes(report: PartitionReport) -> None:
    """An unclean election: a leader outside the ISR (and ELR), or one that lacks committed records."""
    part, leader = report.registration, report.leader_broker
    if part is not None and leader is not None and part.isr and leader not in part.isr \
            and leader not in (part.elr or []):
        report.notes.append(f"broker {leader} is not in the ISR {part.isr}: its election is unclean")
    committed = sum(t.committed_records_lost for t in report.truncations)
    if committed:
        report.notes.append(f"the leader lacks {committed} record(s) a replica had committed (below its "
                            f"high watermark): the unclean election loses them")


def _match_topic_ids(report: PartitionReport) -> None:
    """Replicas of another incarnation of the topic (another topic id) are strays, not replicas."""
    ids = [r.topic_id for r in report.replicas if r.topic_id is not None and r.state is None]
    expected = report.topic_id or (max(set(ids), key=ids.count) if ids else None)
    report.topic_id = expected
    for replica in report.replicas:
        if replica.state is None and expected is not None and replica.topic_id not in (None, expected):
            replica.partition = _restated(replica, "stray")
            report.notes.append(f"broker {replica.label}: {replica.partition.path} holds topic id "
                                f"{replica.topic_id}, not {expected}: a replica of a deleted topic (stray)")


def _restated(replica: Replica, state: str) -> PartitionDir:
    return replace(replica.partition, state=state)


def _mark_unassigned(report: PartitionReport) -> None:
    """A replica on a broker the metadata does not assign the partition to is a stray."""
    part = report.registration
    if part is None:
        return
    for replica in report.live:
        if replica.broker is not None and replica.broker not in part.replicas:
            replica.partition = _restated(replica, "stray")
            report.notes.append(f"broker {replica.label}: the metadata does not assign this partition here "
                                f"(replicas {part.replicas}): a stray replica")


def _metadata_notes(report: PartitionReport) -> None:
    part = report.registration
    for replica in report.replicas:
        if replica.state == "future":
            report.notes.append(_future_note(report, replica))
        elif replica.state == "delete":
            report.notes.append(f"broker {replica.label}: {replica.partition.path} is marked for deletion")
    if part is None:
        return
    on_disk = {r.broker for r in report.live}
    for broker in part.replicas:
        if broker not in on_disk:
            report.notes.append(f"the metadata assigns a replica to broker {broker}, which is not in the given dirs")
    for replica in report.live:
        latest = replica.cache.latest_epoch
        if latest is not None and latest > part.leader_epoch:
            report.notes.append(f"broker {replica.label}: its leader epoch {latest} runs ahead of the metadata's "
                                f"leader epoch {part.leader_epoch}")


def _future_note(report: PartitionReport, future: Replica) -> str:
    """A ``-future`` replica: a copy of the broker's replica being moved to another of its log dirs
    (alterReplicaLogDirs, kafka-reassign-partitions --reassignment-json-file with "log_dirs"); what the
    broker does with it when it starts.

    Kafka 3.9.2 core/src/main/scala/kafka/log/LogManager.scala and 4.4.0
    storage/src/main/java/org/apache/kafka/storage/internals/log/LogManager.java, recoverAbandonedFutureLogs
    (KAFKA-16082): at startup a future log in the directory the metadata already assigns to the replica
    replaces the current one. Otherwise the broker resumes the copy from its current replica
    (core/src/main/scala/kafka/server/ReplicaAlterLogDirsThread.scala, both releases, throttled by
    replica.alter.log.dirs.io.max.bytes.per.second) and, once the copy has caught up, asks the controller to
    assign the replica to the new dir, renames the future dir to the partition's name and the old one
    to ``-delete`` (LogManager.replaceCurrentWithFutureLog). It is neither a divergent replica nor a stray.
    """
    current = next((r for r in report.live if r.broker == future.broker), None)
    copied = (f"copied up to offset {future.log_end_offset}" +
              (f" of the current replica's {current.log_end_offset}" if current is not None else ""))
    head = (f"broker {future.label}: {future.partition.path} is a -future replica (an intra-broker move "
            f"between log dirs, {copied}); not compared with the other replicas")
    part, broker = report.registration, future.broker
    assigned = None
    if part is not None and broker in part.replicas and len(part.directories) == len(part.replicas):
        assigned = part.directories[part.replicas.index(broker)]
    if assigned in RESERVED_DIRECTORY_IDS:
        assigned = None
    target = future.log_dir.directory_id
    if assigned is not None and target is not None and assigned == target:
        return (f"{head}: the metadata already assigns the replica to its dir ({target}), so at startup the "
                f"broker makes it the current replica and deletes the old one (LogManager."
                f"recoverAbandonedFutureLogs)")
    if assigned is None:
        where = "the metadata names no dir for it"
    else:
        mine = current is not None and assigned == current.log_dir.directory_id
        where = f"the metadata assigns the replica to dir {assigned}" + (" (the current replica's)" if mine else "")
    if current is None:
        return f"{head}: {where}; the broker has no current replica of it in the given dirs"
    return (f"{head}: {where}, so when the broker starts it resumes the copy "
            f"(ReplicaAlterLogDirsThread) and, once caught up, makes it the current replica and renames the "
            f"old one -delete")


def _choose_leader(report: PartitionReport, unclean: set[int], options: ReplicasOptions) -> None:
    live = report.live
    by_broker = {r.broker: r for r in live if r.broker is not None}
    part = report.registration
    disk_epoch = max((r.cache.latest_epoch for r in live if r.cache.latest_epoch is not None), default=-1)
    if options.if_leader is not None:
        report.leader_broker, report.leader_source = options.if_leader, "if-leader"
        report.leader_why = f"--if-leader {options.if_leader}"
        if part is not None:
            report.leader_epoch = part.leader_epoch if part.leader == options.if_leader else part.leader_epoch + 1
    elif part is not None:
        election = predict_leader(part, unclean)
        report.leader_broker, report.leader_why = election.leader, election.why
        same = election.leader == part.leader and part.leader >= 0
        report.leader_source = "metadata" if same else "elected"
        report.leader_epoch = part.leader_epoch if same else part.leader_epoch + 1
    elif live:
        best = max(live, key=lambda r: (r.cache.latest_epoch if r.cache.latest_epoch is not None else -1,
                                        r.log_end_offset))
        report.leader_broker, report.leader_source = best.broker, "chosen"
        report.leader_why = (f"no cluster metadata: broker {best.label} has the highest latest epoch "
                             f"({best.cache.latest_epoch}) and then the longest log ({best.log_end_offset}); "
                             f"--if-leader names another")
        report.leader = best
    if report.leader_epoch is None:
        report.leader_epoch = disk_epoch + 1 if disk_epoch >= 0 else None
    if report.leader is None and report.leader_broker is not None:
        report.leader = by_broker.get(report.leader_broker)
        if report.leader is None:
            report.notes.append(f"the leader, broker {report.leader_broker}, has no replica in the given dirs: "
                                f"truncations are not predicted")


def _divergence(live: Sequence[Replica], pair: PairResult, explain: bool) -> Divergence:
    assert pair.diverged_at is not None
    out = Divergence(live[pair.first], live[pair.second], pair.diverged_at)
    if explain:
        out.sides = (_side(live[pair.first], pair.first_side), _side(live[pair.second], pair.second_side))
    return out


def _side(replica: Replica, head: SegmentHeader | None) -> BatchSide:
    if head is None:
        return BatchSide(replica.label, None, None, None)
    b = head.batch
    header = {"baseOffset": b.base_offset, "lastOffset": b.last_offset,
              "partitionLeaderEpoch": b.partition_leader_epoch,
              "crc": b.crc, "size": b.size, "producerId": b.producer_id, "recordsCount": b.records_count or 1}
    side = BatchSide(replica.label, head.path, b.position, header)
    try:
        with open_any(head.path) as file:
            for group in iter_records_at(file, b):
                for record in group:
                    side.records.append({"offset": record.offset, "timestamp": record.timestamp,
                                         "key": _preview(record.key), "value": _preview(record.value)})
    except KdumpError as err:
        side.records.append({"error": err.reason})
    return side


def _preview(data: object) -> str | None:
    if data is None:
        return None
    raw = bytes(data) if isinstance(data, bytes | bytearray | memoryview) else b""
    text = raw[:64].decode("utf-8", errors="replace")
    return text + ("…" if len(raw) > 64 else "")


def _count_loss(t: Truncation, live: Sequence[Replica], index: int, lead: int, pairs: list[PairResult],
                ends: list[int], counter: ReadCounter | None) -> None:
    """Records the follower drops, those the leader does not hold, and those some replica had committed."""
    follower = t.follower
    cut = follower.log_start_offset if t.plan.truncated_fully else t.plan.truncate_to
    if cut >= follower.log_end_offset:
        return
    lost_from = max(cut, common_end(pairs, index, lead, ends))
    t.committed_below = max(min(other.committed_end, common_end(pairs, index, k, ends))
                            for k, other in enumerate(live))
    if lost_from < follower.log_end_offset:
        t.lost_from, t.lost_to = lost_from, follower.log_end_offset
    producers: set[int] = set()
    transactional: set[int] = set()
    try:
        for head in partition_headers(follower.partition.segments, from_offset=cut, counter=counter):
            b = head.batch
            if b.last_offset < cut:
                continue
            count = b.records_count if b.records_count is not None else 1
            t.records_truncated += _records_from(b.base_offset, b.last_offset, count, cut)
            if b.last_offset < lost_from:
                continue
            lost = _records_from(b.base_offset, b.last_offset, count, lost_from)
            t.records_lost += lost
            t.committed_records_lost += _records_in(b.base_offset, b.last_offset, count, lost_from,
                                                    t.committed_below - 1)
            if b.producer_id >= 0:
                producers.add(b.producer_id)
                if b.is_transactional:
                    transactional.add(b.producer_id)
            t.control_batches_lost += b.is_control
            if len(producers) > MAX_LISTED_PRODUCERS:      # memory stays flat: the lowest ids are listed
                producers = set(sorted(producers)[:MAX_LISTED_PRODUCERS])
                transactional &= producers
    except KdumpError:
        pass   # the replica's scan reported it (an Error: line)
    t.producers, t.transactional_producers = sorted(producers), sorted(transactional)


def _records_from(base: int, last: int, count: int, start: int) -> int:
    """Records of a batch [base, last] holding ``count`` at or after ``start``."""
    return _records_in(base, last, count, start, last)


def _records_in(base: int, last: int, count: int, low: int, high: int) -> int:
    """Records of a batch [base, last] holding ``count`` within offsets [low, high]: exact for a batch
    wholly inside or outside; for one that straddles a bound, its offsets inside, at most ``count``."""
    if last < low or base > high:
        return 0
    if base >= low and last <= high:
        return count
    return min(count, min(last, high) - max(base, low) + 1)


__all__ = ["Divergence", "PartitionReport", "PartitionWork", "ReplicasOptions", "Truncation", "analyze",
           "analyze_partition", "plan_partitions"]
