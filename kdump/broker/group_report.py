"""``kdump groups``' analysis: every consumer group's committed offsets, replayed from the ``__consumer_offsets``
(and ``__share_group_state``) partitions as their coordinators load them, joined with each partition's state
after restart (kdump.broker.restart) and the consumer's rules (kdump.broker.consumer_position). The library
under the CLI.

Which copy: each coordinator partition is read from the replica its leader after restart serves (the same
election and loaded log ``kdump replicas`` predicts); a copy on another broker that diverges is named in the
findings, not read. What the files record (the commits, their epochs, the groups) and what kdump predicts
(the partition after restart, the consumer's start) are kept apart in each ``GroupOffset``.

Memory: the shards hold one entry per live key; the data partitions' states after restart are small and
only those some commit names are analysed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from kdump.broker.consumer_position import Fate, end_offset, fate, share_fate
from kdump.broker.coordinator_loader import load_records
from kdump.broker.group_coordinator_shard import GroupCoordinatorShard, GroupState
from kdump.broker.offset_metadata_manager import OffsetAndMetadata, OffsetKey
from kdump.broker.replica_discovery import read_replica_files
from kdump.broker.replica_report import (
    PartitionReport,
    PartitionWork,
    ReplicasOptions,
    analyze_partition,
    plan_partitions,
)
from kdump.broker.restart import PartitionAfterRestart, after_restart
from kdump.broker.share_coordinator_shard import ShareCoordinatorShard, SharePartitionState
from kdump.findings import ERROR, NOTE, WARNING, Finding
from kdump.format.messages import definitions

CONSUMER_OFFSETS, SHARE_GROUP_STATE = "__consumer_offsets", "__share_group_state"
_LISTED_AFTER = {"aborted": 1, "open": 2}     # the offsets that do not count, after the one that does


@dataclass
class GroupsOptions:
    replicas: ReplicasOptions = field(default_factory=ReplicasOptions)
    group: str | None = None
    topic: str | None = None
    partition: int | None = None
    isolation: str = "read_uncommitted"      # the consumer's default isolation.level
    policy: str = "latest"                   # the consumer's default auto.offset.reset
    now: int | None = None                   # ms; kdump does not know the clock
    retention_minutes: int | None = None     # offsets.retention.minutes (the broker's default: 10080)


@dataclass
class GroupOffset:
    """One group's offset on one partition: what the coordinator log records, and kdump's prediction."""

    group: str
    protocol: str                               # classic, consumer, share, streams
    topic: str
    partition: int
    coordinator: str                            # the coordinator partition and the broker whose copy was read
    commit: OffsetAndMetadata | None = None     # None for a share-partition
    share: SharePartitionState | None = None
    transaction: str | None = None              # None: a plain commit; committed, aborted or open
    after: PartitionAfterRestart | None = None  # None: the partition is not among the PATHs (or has no leader)
    fate: Fate | None = None                    # None for aborted/open ones and partitions kdump cannot see
    expires_at: int | None = None
    isolation: str = "read_uncommitted"

    @property
    def end(self) -> int | None:
        """The end lag is measured to: the HW, or the LSO for read_committed (kafka-consumer-groups.sh's
        LOG-END-OFFSET is ListOffsets LATEST at the consumer's isolation level)."""
        return None if self.after is None else end_offset(self.after, self.isolation)

    @property
    def lag(self) -> int | None:
        end, committed = self.end, self.committed_offset
        if end is None or committed is None or self.transaction in ("aborted", "open"):
            return None
        return end - committed

    @property
    def committed_offset(self) -> int | None:
        if self.commit is not None:
            return self.commit.offset
        return None if self.share is None else self.share.start_offset

    @property
    def at_risk(self) -> bool:
        """The consumers would skip, re-read, fail or have lost consumed records (a share group's terminal
        records are not re-read: its start is where delivery resumes)."""
        return self.fate is not None and self.transaction in (None, "committed") and not self.fate.resumes


@dataclass
class GroupsReport:
    offsets: list[GroupOffset] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    read_errors: list[str] = field(default_factory=list)
    coordinators: int = 0


def analyze_groups(paths: Iterable[str], options: GroupsOptions) -> GroupsReport:
    report = GroupsReport()
    base = replace(options.replicas, topic=None, partition=None)
    work = plan_partitions(paths, base)
    release = base.release or definitions.releases()[-1]
    pending: list[GroupOffset] = []
    shares: list[tuple[tuple[str, str, int], SharePartitionState, str]] = []
    for item in work:
        topic = item[0]
        if topic not in (CONSUMER_OFFSETS, SHARE_GROUP_STATE):
            continue
        report.coordinators += 1
        part = _analyze(item, report)
        after = after_restart(part)
        if after is None:
            report.findings.append(Finding(ERROR, "coordinator-missing", part.replicas[0].partition.path,
                                           f"{topic}-{part.partition} has no leader among the given dirs: its "
                                           f"groups are not known"))
            continue
        where = f"{topic}-{part.partition} on broker {after.leader.label}"
        if part.divergences:
            report.findings.append(Finding(NOTE, "coordinator-diverged", after.leader.partition.path,
                                           f"{where}: the copies of this partition diverge; the leader's is read"))
        if topic == CONSUMER_OFFSETS:
            shard = GroupCoordinatorShard(release)
            shard.replay_all(load_records(after.leader, report.read_errors), where)
            report.findings.extend(Finding(ERROR, "coordinator-record", where, p) for p in shard.problems)
            pending.extend(_group_offsets(shard, where, options))
        else:
            share = ShareCoordinatorShard(release)
            share.replay_all(load_records(after.leader, report.read_errors), where)
            report.findings.extend(Finding(ERROR, "coordinator-record", where, p) for p in share.problems)
            shares.extend((key, state, where) for key, state in share.states.items()
                          if options.group in (None, key[0]))
    # The data partitions the offsets name, each analysed once.
    ids = _topic_ids(work)
    for (group, topic_id, number), state, where in shares:
        name = ids.get(topic_id, topic_id)
        if options.topic in (None, name) and options.partition in (None, number):
            pending.append(GroupOffset(group, "share", name, number, where, share=state))
    wanted = {(o.topic, o.partition) for o in pending}
    states: dict[tuple[str, int], PartitionAfterRestart | None] = {}
    for item in work:
        if (item[0], item[1]) in wanted:
            states[(item[0], item[1])] = after_restart(_analyze(item, report))
    for offset in sorted(pending, key=_listing_order):
        offset.after = states.get((offset.topic, offset.partition))
        offset.isolation = options.isolation
        _decide(offset, options)
        report.offsets.append(offset)
    return report


def _listing_order(o: GroupOffset) -> tuple[str, str, int, int]:
    return o.group, o.topic, o.partition, _LISTED_AFTER.get(o.transaction or "", 0)


def _analyze(item: PartitionWork, report: GroupsReport) -> PartitionReport:
    part = analyze_partition(*item)
    report.read_errors.extend(part.read_errors)
    report.findings.extend(f for f in part.findings if f.severity in (ERROR, WARNING))
    return part


def _topic_ids(work: list[PartitionWork]) -> dict[str, str]:
    out: dict[str, str] = {}
    for topic, _, members, metadata, _, _ in work:
        if metadata is not None and (found := metadata.topic_id(topic)) is not None:
            out[found] = topic
            continue
        for replica in members[:1]:
            read_replica_files(replica)
            if replica.topic_id is not None:
                out[replica.topic_id] = topic
    return out


def _group_offsets(shard: GroupCoordinatorShard, where: str, options: GroupsOptions) -> Iterator[GroupOffset]:
    def wanted(key: OffsetKey) -> bool:
        return options.group in (None, key[0]) and options.topic in (None, key[1]) and \
            options.partition in (None, key[2])

    def protocol(name: str) -> str:
        group = shard.groups.get(name)
        return "classic" if group is None else group.protocol

    for key, commit in shard.offsets.offsets.items():
        if wanted(key):
            offset = GroupOffset(key[0], protocol(key[0]), key[1], key[2], where, commit,
                                 transaction="committed" if commit.producer_id >= 0 else None)
            offset.expires_at = _expires_at(shard.groups.get(key[0]), key[1], commit, options)
            yield offset
    for kind, offsets in (("aborted", shard.offsets.aborted), ("open", shard.offsets.open_offsets())):
        for key, commit in offsets.items():
            if wanted(key):
                yield GroupOffset(key[0], protocol(key[0]), key[1], key[2], where, commit, transaction=kind)


def _expires_at(group: GroupState | None, topic: str, commit: OffsetAndMetadata, options: GroupsOptions) -> int | None:
    """When ``offsets.retention.minutes`` removes the commit (None: never while the group is as it is).

    Kafka 4.4.0 group-coordinator/.../OffsetMetadataManager.java ``cleanupExpiredOffsets``: a group's offsets of
    topics it subscribes to never expire; the others by ``OffsetExpirationConditionImpl.isOffsetExpired``: at the
    commit's own expire timestamp when it has one, else ``retention`` after a base: ClassicGroup's
    ``offsetExpirationCondition`` takes the time the group became Empty (``currentStateTimestamp``, KIP-211, the
    commit time without one) and none while it has members; a simple consumer's (no protocol type), a
    consumer-protocol, share or streams group's base is the commit time.
    """
    if options.retention_minutes is None:
        return None
    if commit.expire_timestamp is not None:
        return commit.expire_timestamp
    retention = options.retention_minutes * 60_000
    if group is None or (group.protocol == "classic" and group.protocol_type is None):
        return commit.commit_timestamp + retention
    if group.subscribed(topic):
        return None
    if group.protocol == "classic":
        if not group.empty:
            return None
        base = group.current_state_timestamp
        return (commit.commit_timestamp if base is None else base) + retention
    return commit.commit_timestamp + retention


def _decide(offset: GroupOffset, options: GroupsOptions) -> None:
    after = offset.after
    if after is None or offset.transaction in ("aborted", "open"):
        return
    if offset.share is not None:
        offset.fate = share_fate(after, offset.share.start_offset, offset.share.delivered())
        return
    assert offset.commit is not None
    expired = options.now is not None and offset.expires_at is not None and options.now >= offset.expires_at
    offset.fate = fate(after, offset.commit.offset, offset.commit.leader_epoch, options.policy, options.isolation,
                       expired)


__all__ = ["GroupOffset", "GroupsOptions", "GroupsReport", "analyze_groups"]
