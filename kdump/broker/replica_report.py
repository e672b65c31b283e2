"""``kdump replicas``' analysis of one partition's replicas: the report that puts together what each replica
holds on disk and once loaded (kdump.broker.replica_state), where their loaded logs diverge
(kdump.broker.replica_divergence), who leads at restart (kdump.broker.election), what each follower's
fetcher truncates (kdump.broker.follower_truncation) and what the partition's history loses
(kdump.broker.replica_loss). The library under the CLI and Spark.

What the files record (checkpoints, the metadata's leader, ISR and ELR) and what kdump predicts (the loaded
state, an election, the truncations) are kept apart: ``registration`` is the metadata's record,
``election`` the leader at restart and whether it is predicted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

from kdump.broker.cluster_metadata import ClusterMetadata, PartitionRegistration, metadata_for, replay_all
from kdump.broker.election import Election, elect
from kdump.broker.follower_truncation import LogView, leader_view, plan_truncation
from kdump.broker.replica_discovery import Replica, discover, group_partitions, read_replica_files
from kdump.broker.replica_divergence import PairResult, compare_replicas
from kdump.broker.replica_loss import (
    LoadTruncation,
    PartitionLoss,
    Truncation,
    committed_below,
    follower_loss,
    leader_loss,
    load_truncation,
    partition_loss,
)
from kdump.broker.replica_state import DiskWalk, load_replica, walk_replica
from kdump.errors import KdumpError
from kdump.findings import ERROR, NOTE, WARNING, Finding, Severity
from kdump.log.batches import iter_records_at
from kdump.log.headers import ReadCounter, SegmentHeader
from kdump.log.index_builder import DEFAULT_INDEX_INTERVAL_BYTES
from kdump.log.locations import open_any
from kdump.log.logdir import PartitionDir

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
    index_interval_bytes: int | None = None      # None: the topic's config in the metadata, else Kafka's default


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
    registration: PartitionRegistration | None = None     # what the metadata records
    election: Election | None = None                      # the leader at restart (recorded or predicted)
    leader: Replica | None = None                         # its replica among the PATHs
    divergences: list[Divergence] = field(default_factory=list)
    truncations: list[Truncation] = field(default_factory=list)
    load_truncations: list[LoadTruncation] = field(default_factory=list)
    loss: PartitionLoss = field(default_factory=PartitionLoss)
    findings: list[Finding] = field(default_factory=list)
    compacted: bool = False

    @property
    def live(self) -> list[Replica]:
        return [r for r in self.replicas if r.state is None]

    @property
    def leader_broker(self) -> int | None:
        return None if self.election is None else self.election.leader

    @property
    def leader_epoch(self) -> int | None:
        return None if self.election is None else self.election.leader_epoch

    @property
    def verdict(self) -> str:
        if any(t.records_lost for t in self.truncations) or \
                any(lt.lost and lt.committed_records for lt in self.load_truncations):
            return "data-loss"
        if self.divergences:
            return "diverged"
        if self.leader is not None and any(r.log_end_offset < self.leader.log_end_offset for r in self.live):
            return "lagging"
        return "consistent"

    @property
    def read_errors(self) -> list[str]:
        """Segments that could not be read to their end (the replica is compared up to there)."""
        return [e for r in self.replicas for e in r.disk.read_errors]

    @property
    def problems(self) -> bool:
        return self.verdict in ("data-loss", "diverged")

    def add(self, severity: Severity, check: str, where: str, text: str) -> None:
        self.findings.append(Finding(severity, check, where, text))


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
    report = PartitionReport(topic, number, None, members)
    for replica in members:
        read_replica_files(replica)
    found = metadata.partition(topic, number) if metadata is not None else None
    if found is not None:
        report.topic_id, report.registration = found
        report.compacted = metadata is not None and metadata.compacted(topic)
    elif metadata is not None:
        # The cluster no longer (or never) has this partition: every copy on disk is a stray.
        for replica in members:
            if replica.state is None:
                replica.partition = _restated(replica.partition, "stray")
        report.add(WARNING, "stray", members[0].partition.path,
                   f"the cluster metadata ({metadata.source}) has no partition {topic}-{number}: the replicas on "
                   f"disk are strays (a deleted topic, or one moved away)")
    _match_topic_ids(report)
    _mark_unassigned(report)
    interval = options.index_interval_bytes
    if interval is None:   # recovery's index appends depend on it (LogSegment.recover)
        configured = metadata.configs.get(topic, {}).get("index.interval.bytes") if metadata is not None else None
        interval = int(configured) if configured is not None and configured.isdigit() else DEFAULT_INDEX_INTERVAL_BYTES
    for replica in report.replicas:
        load_replica(replica, interval)   # what the broker's loader leaves (an offline replica is not live)
    report.compacted = report.compacted or any(r.cleaner_offset is not None for r in report.live)
    live = report.live
    # One walk over the live replicas' headers: what each holds on disk, and every pair's divergence in
    # their loaded logs.
    pairs = compare_replicas(live, compacted=report.compacted, counter=counter, walks=[DiskWalk(r) for r in live])
    for replica in report.replicas:
        if replica.state is not None:
            walk_replica(replica, counter)
    _metadata_findings(report)
    report.election, report.leader = elect(report.registration, live, unclean, options.if_leader)
    if report.leader is None and report.leader_broker is not None:
        report.add(WARNING, "leader-missing", report.replicas[0].partition.path,
                   f"the leader, broker {report.leader_broker}, has no live replica in the given dirs: truncations "
                   f"are not predicted")
    for pair in pairs:
        if pair.diverged_at is not None:
            report.divergences.append(_divergence(live, pair, options.explain))
    _restart(report, live, pairs, counter)
    _unclean_findings(report)
    for replica in report.replicas:
        for problem in replica.log_dir.problems:
            if all(f.text != problem for f in report.findings):
                report.add(WARNING, "log-dir", replica.log_dir.path, problem)
        report.findings.extend(replica.findings)
    return report


def _restart(report: PartitionReport, live: list[Replica], pairs: list[PairResult],
             counter: ReadCounter | None) -> None:
    """Each replica's load truncation, each follower's fetcher truncation, and what the history loses."""
    for index, replica in enumerate(live):
        below = committed_below(live, index, pairs)
        found = load_truncation(replica, below, counter)
        if found is not None:
            report.load_truncations.append(found)
    if report.leader is None:
        return
    lead = live.index(report.leader)
    leader = report.leader
    view = leader_view(leader.log_start_offset, leader.log_end_offset, leader.cache, report.leader_epoch)
    own = next((lt for lt in report.load_truncations if lt.replica is leader), None)
    ranges = [r for r in [leader_loss(own, committed_below(live, lead, pairs))] if r is not None]
    for index, follower in enumerate(live):
        if index == lead:
            continue
        plan = plan_truncation(LogView(follower.log_start_offset, follower.log_end_offset, follower.cache,
                                       follower.committed_end), view)
        truncation = Truncation(follower, leader, plan)
        lost = follower_loss(truncation, live, index, lead, pairs, counter)
        if lost is not None:
            ranges.append(lost)
        report.truncations.append(truncation)
    report.loss = partition_loss(ranges, counter)


def _unclean_findings(report: PartitionReport) -> None:
    """An unclean election: a leader outside the ISR (and ELR), or one that lacks committed records."""
    part, leader = report.registration, report.leader_broker
    where = report.replicas[0].partition.path
    if part is not None and leader is not None and part.isr and leader not in part.isr \
            and leader not in (part.elr or []):
        report.add(WARNING, "unclean-election", where, f"broker {leader} is not in the ISR {part.isr}: its "
                                                       f"election is unclean")
    if report.loss.committed_records:
        report.add(ERROR, "committed-loss", where,
                   f"the partition loses {report.loss.committed_records} record(s) a replica had committed (below "
                   f"its high watermark checkpoint), offsets {_ranges(report.loss.offsets)}")


def _ranges(ranges: Sequence[tuple[int, int]]) -> str:
    return ", ".join(f"{low}..{high - 1}" for low, high in ranges)


def _match_topic_ids(report: PartitionReport) -> None:
    """Replicas of another incarnation of the topic (another topic id) are strays, not replicas."""
    ids = [r.topic_id for r in report.replicas if r.topic_id is not None and r.state is None]
    expected = report.topic_id or (max(set(ids), key=ids.count) if ids else None)
    report.topic_id = expected
    for replica in report.replicas:
        if replica.state is None and expected is not None and replica.topic_id not in (None, expected):
            replica.partition = _restated(replica.partition, "stray")
            report.add(WARNING, "stray", replica.partition.path,
                       f"broker {replica.label}: {replica.partition.path} holds topic id {replica.topic_id}, not "
                       f"{expected}: a replica of a deleted topic (stray)")


def _restated(partition: PartitionDir, state: str) -> PartitionDir:
    return replace(partition, state=state)


def _mark_unassigned(report: PartitionReport) -> None:
    """A replica on a broker the metadata does not assign the partition to is a stray."""
    part = report.registration
    if part is None:
        return
    for replica in report.live:
        if replica.broker is not None and replica.broker not in part.replicas:
            replica.partition = _restated(replica.partition, "stray")
            report.add(WARNING, "stray", replica.partition.path,
                       f"broker {replica.label}: the metadata does not assign this partition here (replicas "
                       f"{part.replicas}): a stray replica")


def _metadata_findings(report: PartitionReport) -> None:
    part = report.registration
    for replica in report.replicas:
        if replica.state == "future":
            report.add(NOTE, "future-replica", replica.partition.path, _future_note(report, replica))
        elif replica.state == "delete":
            report.add(NOTE, "delete-replica", replica.partition.path,
                       f"broker {replica.label}: {replica.partition.path} is marked for deletion")
    if part is None:
        return
    on_disk = {r.broker for r in report.live}
    for broker in part.replicas:
        if broker not in on_disk:
            report.add(NOTE, "replica-missing", report.replicas[0].partition.path,
                       f"the metadata assigns a replica to broker {broker}, which is not in the given dirs")
    for replica in report.live:
        latest = replica.cache.latest_epoch
        if latest is not None and latest > part.leader_epoch:
            report.add(WARNING, "epoch-ahead", replica.partition.path,
                       f"broker {replica.label}: its leader epoch {latest} runs ahead of the metadata's leader "
                       f"epoch {part.leader_epoch}")


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


__all__ = ["BatchSide", "Divergence", "PartitionReport", "PartitionWork", "ReplicasOptions", "analyze",
           "analyze_partition", "plan_partitions"]
