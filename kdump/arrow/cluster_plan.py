"""``kdump export --cluster``: a cluster's history, each record once, planned from the state after restart.

Several brokers' replicas of a partition hold the same records up to where they diverge; a consumer of the
restarted cluster reads one history: the log of the leader the cluster then has, as its broker's loader
leaves it (kdump.broker.restart.after_restart, which this module reads and never re-derives). So each
partition's offsets are assigned to ONE replica: [log start offset, upper) to the elected leader's loaded
log, where upper is the last stable offset under read_committed and the high watermark (once followers
caught up: the leader's log end) under read_uncommitted, as Fetcher reads up to them (Kafka 4.4.0
core/src/main/scala/kafka/cluster/Partition.scala fetchOffsetSnapshot / UnifiedLog.fetchOffsetSnapshot).

What this plans is the existing ``Split`` (byte ranges of the leader's kept segment bytes, the loader's
``kept_parts``) restricted by ``FatedRange``s: the offsets of a split that belong to the export and the
fate each gets. Reading, columns, Parquet and publishing stay the one path ``kdump export`` and ``kdump
spark export`` share; ``fated_rows`` is the last step of a task's batches. With ``include_lost`` the records
a truncation removes are planned too, from the replica that holds them on disk (``Truncation.lost_from`` ..
``lost_to``, the rule of kdump.broker.replica_loss: committed below the checkpointed high watermark of a
replica that held the batch), and the records a segment still holds below the log start offset (``deleted``).

Reconciliation (``analyze_partition``) reads batch headers only; record bodies are read once, by the tasks,
from the replica each range is assigned to.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

import pyarrow as pa
import pyarrow.compute as pc

from kdump.arrow.discovery import Segment, find_segments
from kdump.arrow.planning import Split, offset_index, partition_aborts, split_segment
from kdump.broker.isolation import READ_COMMITTED
from kdump.broker.replica_discovery import Replica
from kdump.broker.replica_report import PartitionReport, ReplicasOptions, analyze_partition, plan_partitions
from kdump.broker.restart import PartitionAfterRestart, after_restart
from kdump.errors import InputError

KEPT, ABORTED, LOST_COMMITTED, LOST_UNCOMMITTED, DELETED = "kept", "aborted", "lost-committed", "lost-uncommitted", \
    "deleted"
FATES = (KEPT, ABORTED, LOST_COMMITTED, LOST_UNCOMMITTED, DELETED)
MANIFEST_NAME = "_kdump_cluster.json"    # a leading "_": Spark and pyarrow datasets skip it when reading


@dataclass(frozen=True, slots=True)
class FatedRange:
    """Offsets [first, end) of a split that the export writes, and the fate (and reason) of their rows."""

    first: int
    end: int
    fate: str
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class ClusterOptions:
    """What a cluster export asks beyond an export's options (CLI flags, data source options)."""

    include_lost: bool = False
    if_leader: int | None = None


@dataclass
class PartitionPlan:
    """One partition's part of the export: the splits, and what the manifest says about them."""

    topic: str
    partition: int
    splits: list[Split] = field(default_factory=list)
    manifest: dict[str, object] = field(default_factory=dict)


def _segments(replica: Replica) -> dict[str, Segment]:
    """The replica's segments as discovery finds them, by their .log file's name."""
    return {posixpath.basename(s.log): s for s in find_segments([replica.partition.path])
            if s.topic == replica.partition.topic and s.partition == replica.partition.partition}


def _kept_splits(replica: Replica, split_bytes: int) -> list[Split]:
    """Splits over the bytes the replica's loaded log keeps (the loader's ``kept_parts``)."""
    by_name = _segments(replica)
    aborts = partition_aborts(list(by_name.values()))
    splits: list[Split] = []
    for part in replica.kept_parts:
        if part.log is None:
            continue
        segment = by_name.get(posixpath.basename(part.log))
        if segment is None or segment.size == 0:
            continue
        end = segment.size if part.end is None else min(part.end, segment.size)
        if part.start == 0 and end == segment.size:
            pieces = split_segment(segment, split_bytes, offset_index(segment) if segment.size > split_bytes else [])
        else:
            pieces = [Split(segment, part.start, end, part.base_offset, segment.next_base_offset and
                            segment.next_base_offset - 1)]
        in_partition = aborts.get(posixpath.dirname(segment.log), [])
        splits.extend(replace(s, aborted=tuple(in_partition), aborts_known=True) for s in pieces)
    return splits


def _disk_splits(replica: Replica, first: int, end: int, split_bytes: int) -> list[Split]:
    """Splits over every segment of the replica on disk that may hold offsets [first, end)."""
    segments = list(_segments(replica).values())
    aborts = partition_aborts(segments)
    splits: list[Split] = []
    for segment in segments:
        upper = None if segment.next_base_offset is None else segment.next_base_offset - 1
        if segment.size == 0 or segment.base_offset >= end or (upper is not None and upper < first):
            continue
        in_partition = tuple(aborts.get(posixpath.dirname(segment.log), []))
        index = offset_index(segment) if segment.size > split_bytes else []
        splits.extend(replace(s, aborted=in_partition, aborts_known=True)
                      for s in split_segment(segment, split_bytes, index))
    return splits


def _restrict(splits: Iterable[Split], ranges: Sequence[FatedRange]) -> list[Split]:
    """Each split with the ranges that may reach into it (a split none reaches is not read)."""
    out = []
    for s in splits:
        reaching = tuple(r for r in ranges if r.first < r.end and r.end > s.min_offset
                         and (s.max_offset is None or r.first <= s.max_offset))
        if reaching:
            out.append(replace(s, fates=reaching))
    return out


def _where(replica: Replica) -> dict[str, object]:
    return {"broker": replica.broker, "logDir": replica.log_dir.path, "partitionDir": replica.partition.path}


def partition_plan(report: PartitionReport, after: PartitionAfterRestart, isolation: str, include_lost: bool,
                   split_bytes: int) -> PartitionPlan:
    """The splits and manifest entry of one partition (see the module docstring)."""
    leader = after.leader
    upper = after.last_stable_offset if isolation == READ_COMMITTED else after.high_watermark
    start = after.log_start_offset
    local_start = max(start, after.local_log_start_offset)
    ranges = [FatedRange(local_start, upper, KEPT)]
    excluded: list[dict[str, object]] = []
    if start < local_start:
        excluded.append({"from": start, "to": local_start, "why": "in the remote tier only (tiered storage): not "
                                                                  "read by this export"})
    if upper < after.high_watermark:
        excluded.append({"from": upper, "to": after.high_watermark,
                         "why": "at or above the last stable offset: transactions still open when the disks were "
                                "copied (read_committed reads below the LSO)"})
    below = FatedRange(0, start, DELETED, f"below the log start offset {start}")
    if include_lost and start > 0:
        ranges.insert(0, below)
    elif start > 0:
        excluded.append({"from": None, "to": start, "why": "below the log start offset (--include-lost: fate "
                                                            "deleted, where a segment still holds them)"})
    splits = _restrict(_kept_splits(leader, split_bytes), ranges)
    supplied: list[dict[str, object]] = [{"from": local_start, "to": upper, "fate": KEPT, **_where(leader)}]
    if include_lost:
        if start > 0:
            supplied.insert(0, {"from": None, "to": start, "fate": DELETED, **_where(leader)})
        taken: list[tuple[int, int]] = []
        for t in after.truncations:
            if t.lost_from is None or t.lost_to is None:
                continue
            for low, high in _uncovered(t.lost_from, t.lost_to, taken):
                why = (f"truncated from broker {t.follower.broker} when broker {leader.broker} leads at epoch "
                       f"{after.election.leader_epoch}")
                lost = [FatedRange(low, min(high, t.committed_below), LOST_COMMITTED,
                                   f"{why}; below the high watermark {t.committed_below} a replica holding it "
                                   f"checkpointed"),
                        FatedRange(max(low, t.committed_below), high, LOST_UNCOMMITTED, why)]
                lost = [r for r in lost if r.first < r.end]
                splits.extend(_restrict(_disk_splits(t.follower, low, high, split_bytes), lost))
                supplied.extend({"from": r.first, "to": r.end, "fate": r.fate, **_where(t.follower)} for r in lost)
                taken.append((low, high))
    # "afterRestart" is kdump's prediction (kdump.broker.restart); "supplied" and "excluded" the plan made
    # from it; "rows" (added by write_manifest) what the files hold.
    manifest: dict[str, object] = {
        "topic": after.topic, "partition": after.partition,
        "afterRestart": {"leader": _where(leader), "leaderEpoch": after.election.leader_epoch,
                         "logStartOffset": start, "localLogStartOffset": after.local_log_start_offset,
                         "highWatermark": after.high_watermark, "lastStableOffset": after.last_stable_offset,
                         "lostOffsets": [{"from": lo, "to": hi} for lo, hi in after.loss.offsets]},
        "supplied": supplied, "excluded": excluded,
    }
    return PartitionPlan(after.topic, after.partition, splits, manifest)


def _uncovered(low: int, high: int, taken: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """[low, high) minus the ranges already planned (an offset lost from two replicas is written once)."""
    pieces = [(low, high)]
    for a, b in taken:
        pieces = [p for lo, hi in pieces for p in ((lo, min(hi, a)), (max(lo, b), hi)) if p[0] < p[1]]
    return pieces


def plan_cluster(paths: Sequence[str], *, isolation: str, include_lost: bool = False, if_leader: int | None = None,
                 split_bytes: int, topic: str | None = None, partition: int | None = None) -> list[PartitionPlan]:
    """Every partition's plan; an InputError naming the partition when its leader after restart has no dirs."""
    plans = []
    for work in plan_partitions(paths, ReplicasOptions(topic=topic, partition=partition, if_leader=if_leader)):
        report = analyze_partition(*work)
        if report.replicas and all(r.state is not None for r in report.replicas):
            continue                        # -delete, -future, stray or offline copies: no history to export
        after = after_restart(report)
        if after is None:
            missing = report.leader_broker
            why = f"its leader after restart, broker {missing}, has no log dir among the PATHs" \
                if missing is not None else "no replica among the PATHs can lead it"
            raise InputError(f"cannot export {report.topic}-{report.partition}: {why} (give its log dirs, or "
                             f"--if-leader BROKER)", path=report.replicas[0].partition.path)
        plans.append(partition_plan(report, after, isolation, include_lost, split_bytes))
    if not plans:
        raise InputError("no partition replicas found (brokers' log dirs)", path=", ".join(paths))
    return plans


def cluster_splits(paths: Sequence[str], options: ClusterOptions, isolation: str, split_bytes: int) -> list[Split]:
    """Every partition's splits, in topic/partition order (the data source's planning under cluster=true)."""
    plans = plan_cluster(paths, isolation=isolation, include_lost=options.include_lost, if_leader=options.if_leader,
                         split_bytes=split_bytes)
    return [s for p in plans for s in p.splits]


# ---- in the task: a split's rows restricted to its ranges, with their fates ---------------------------

def fated_rows(batches: Iterable[pa.RecordBatch], ranges: Sequence[FatedRange],
               schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Rows whose offset lies in one of ``ranges``, control records dropped (a consumer never returns them),
    with ``fate`` and ``fateReason``; an aborted record in a kept range gets fate ``aborted``."""
    for batch in batches:
        offsets = batch.column("offset")
        keep = pc.fill_null(pc.invert(batch.column("isControl")), False)
        fate = pa.nulls(batch.num_rows, pa.string())
        reason = pa.nulls(batch.num_rows, pa.string())
        inside = pa.repeat(pa.scalar(False), batch.num_rows)
        for r in ranges:
            here = pc.fill_null(pc.and_(pc.greater_equal(offsets, r.first), pc.less(offsets, r.end)), False)
            inside = pc.or_(inside, here)
            fate = pc.if_else(here, pa.scalar(r.fate), fate)
            reason = pc.if_else(here, pa.scalar(r.reason, pa.string()), reason)
            if r.fate == KEPT:
                aborted = pc.and_(here, pc.fill_null(batch.column("aborted"), False))
                fate = pc.if_else(aborted, pa.scalar(ABORTED), fate)
                reason = pc.if_else(aborted, pa.scalar("in a transaction its ABORT marker ended"), reason)
        mask = pc.and_(keep, inside)
        columns = [*batch.columns, fate, reason]
        full = pa.RecordBatch.from_arrays(columns, schema=schema)
        out = full.filter(mask)
        if out.num_rows:
            yield out


# ---- on the driver, once every task is done: the manifest ---------------------------------------------

def fate_counts(dataset: str) -> dict[tuple[str, int], dict[str, int]]:
    """Rows per fate of each partition, counted from the dataset just written (what the files hold)."""
    import pyarrow.dataset as ds

    data = ds.dataset(dataset, format="parquet", partitioning="hive", exclude_invalid_files=True)
    table = data.to_table(columns=["topic", "partition", "fate"])
    counts: dict[tuple[str, int], dict[str, int]] = {}
    for row in table.group_by(["topic", "partition", "fate"], use_threads=False).aggregate([([], "count_all")]) \
            .to_pylist():
        counts.setdefault((str(row["topic"]), int(row["partition"])), {})[str(row["fate"])] = int(row["count_all"])
    return counts


def write_manifest(dataset: str, plans: Sequence[PartitionPlan], isolation: str, include_lost: bool,
                   directory: str, name: str) -> None:
    """The cluster export's manifest beside its data (``directory``/``name``, a new file in the staged output):
    each partition's plan (kdump's prediction of the restarted cluster) and the rows written per fate."""
    from kdump.log.atomic import write_new_file
    from kdump.render import log_json

    counts = fate_counts(dataset)
    partitions = [{**p.manifest, "rows": counts.get((p.topic, p.partition), {})} for p in plans]
    document = {"isolation": isolation, "includeLost": include_lost, "partitions": partitions}
    write_new_file(posixpath.join(directory, name), (log_json.dumps(document) + "\n").encode())


__all__ = [
    "FATES",
    "MANIFEST_NAME",
    "ClusterOptions",
    "FatedRange",
    "PartitionPlan",
    "cluster_splits",
    "fate_counts",
    "fated_rows",
    "plan_cluster",
    "write_manifest",
]
