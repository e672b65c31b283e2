"""``kdump replicas``' output: one JSON object per partition (docs/json-output.md), or a Rich table per
partition with a verdict line. Renderers only; the analysis is kdump.broker.replica_report."""

from __future__ import annotations

from typing import Any

from kdump.broker.replica_discovery import Replica
from kdump.broker.replica_loss import LoadTruncation, Truncation
from kdump.broker.replica_report import BatchSide, Divergence, PartitionReport
from kdump.findings import Finding

REPLICAS_SCHEMA_VERSION = 2
"""2: ``leader``/``leaderEpoch`` are what the metadata records and ``election`` what kdump predicts; replicas'
offsets and epochs are the loaded ones beside ``logEndOffsetOnDisk``/``highWatermarkCheckpoint``; ``loss``;
``findings`` replace ``notes``."""


def broker_id(replica: Replica) -> int | str:
    """The broker's node id, or the log dir's name when no ``meta.properties`` says it."""
    return replica.broker if replica.broker is not None else replica.label


def _pairs(entries: list[Any]) -> list[list[int]]:
    return [[e.epoch, e.start_offset] for e in entries]


def replica_object(r: Replica, leader: Replica | None, loads: list[LoadTruncation]) -> dict[str, Any]:
    load = next((lt for lt in loads if lt.replica is r), None)
    return {
        "broker": broker_id(r),
        "logDir": r.log_dir.path,
        "directoryId": r.log_dir.directory_id,
        "path": r.partition.path,
        "state": r.state or ("leader" if r is leader else "follower"),
        "offline": r.offline,
        "topicId": r.topic_id,
        "logStartOffset": r.log_start_offset,
        "logEndOffset": r.log_end_offset,
        "logEndOffsetOnDisk": r.disk.log_end_offset,
        "highWatermark": r.high_watermark,
        "highWatermarkCheckpoint": r.high_watermark_checkpoint,
        "recoveryPoint": r.recovery_point_checkpoint,
        "lastStableOffset": r.last_stable_offset,
        "cleanerCheckpoint": r.cleaner_offset,
        "cleanShutdown": r.clean_shutdown,
        "leaderEpochs": _pairs(r.epochs),
        "leaderEpochCheckpoint": _pairs(r.checkpoint_epochs),
        "batchEpochs": _pairs(r.disk.batch_epochs),
        "latestEpoch": r.cache.latest_epoch,
        "batches": r.disk.batches,
        "records": r.disk.records,
        "loadTruncation": None if load is None else {"from": load.from_offset, "to": load.to_offset,
                                                     "records": load.records,
                                                     "committedRecords": load.committed_records},
    }


def finding_object(f: Finding) -> dict[str, Any]:
    return {"check": f.check, "severity": f.severity, "message": f.text}


def _side_object(side: BatchSide) -> dict[str, Any]:
    return {"broker": side.broker, "file": side.path, "position": side.position, "batch": side.header,
            "records": side.records}


def divergence_object(d: Divergence) -> dict[str, Any]:
    obj: dict[str, Any] = {"brokers": [broker_id(d.first), broker_id(d.second)], "firstDivergentOffset": d.offset}
    if d.sides is not None:
        obj["sides"] = [_side_object(s) for s in d.sides]
    return obj


def truncation_object(t: Truncation) -> dict[str, Any]:
    return {
        "broker": broker_id(t.follower),
        "leader": broker_id(t.leader),
        "truncateTo": t.plan.truncate_to,
        "truncatedFully": t.plan.truncated_fully,
        "fetchOffset": t.plan.fetch_offset,
        "rounds": t.plan.rounds,
        "recordsTruncated": t.records_truncated,
        "recordsLost": t.records_lost,
        "committedRecordsLost": t.committed_records_lost,
        "lostOffsets": None if t.lost_from is None else [t.lost_from, t.lost_to],
        "committedBelow": t.committed_below,
        "producers": t.producers,
        "transactionalProducers": t.transactional_producers,
        "controlBatchesLost": t.control_batches_lost,
        "steps": [{"fetchOffset": s.fetch_offset, "fetchEpoch": s.fetch_epoch, "leaderEpoch": s.leader_epoch,
                   "leaderEndOffset": s.leader_end_offset, "truncateTo": s.truncate_to, "reason": s.reason}
                  for s in t.plan.steps],
    }


def partition_object(report: PartitionReport) -> dict[str, Any]:
    part, election = report.registration, report.election
    return {
        "type": "partition",
        "schemaVersion": REPLICAS_SCHEMA_VERSION,
        "topic": report.topic,
        "partition": report.partition,
        "topicId": report.topic_id,
        "leader": None if part is None else part.leader,
        "leaderEpoch": None if part is None else part.leader_epoch,
        "election": None if election is None or not election.predicted else {
            "leader": election.leader, "leaderEpoch": election.leader_epoch, "reason": election.reason,
            "source": election.source},
        "isr": None if part is None else part.isr,
        "elr": None if part is None else part.elr,
        "lastKnownElr": None if part is None else part.last_known_elr,
        "assignedReplicas": None if part is None else part.replicas,
        "compacted": report.compacted,
        "replicas": [replica_object(r, report.leader, report.load_truncations) for r in report.replicas],
        "divergences": [divergence_object(d) for d in report.divergences],
        "truncations": [truncation_object(t) for t in report.truncations],
        "loss": {"records": report.loss.records, "committedRecords": report.loss.committed_records,
                 "offsets": [list(r) for r in report.loss.offsets]},
        "findings": [finding_object(f) for f in report.findings],
        "verdict": report.verdict,
    }


def verdict_line(report: PartitionReport) -> str:
    name = f"{report.topic}-{report.partition}"
    verdict = report.verdict
    loading = sum(lt.records for lt in report.load_truncations)
    if verdict == "data-loss":
        loss = report.loss
        own = next((lt for lt in report.load_truncations if lt.lost), None)
        if own is None:
            return (f"{name}: DATA LOSS: followers would drop {loss.records} record(s) the leader does not hold, "
                    f"{loss.committed_records} of them committed")
        return (f"{name}: DATA LOSS: the leader, broker {broker_id(own.replica)}, loads to {own.to_offset} and its "
                f"followers truncate to it: the partition loses {loss.records} record(s) (offsets "
                f"{_ranges(loss.offsets)}), {loss.committed_records} of them committed")
    if verdict == "diverged":
        first = min(d.offset for d in report.divergences)
        return f"{name}: DIVERGED from offset {first}, but no follower would drop a record the leader lacks"
    if verdict == "lagging":
        refetch = f" (loading removes {loading} record(s) the leader still holds)" if loading else ""
        return f"{name}: consistent; some followers lag and will catch up{refetch}"
    if loading:
        return (f"{name}: consistent once loaded: loading removes {loading} record(s) no committed record among "
                f"them, and every replica then holds the same batches")
    return f"{name}: consistent: every replica holds the same batches"


def _ranges(ranges: list[tuple[int, int]]) -> str:
    return ", ".join(f"{low}..{high - 1}" for low, high in ranges) or "none"


def leader_line(report: PartitionReport) -> str:
    """What the metadata records, then what kdump predicts at restart, named apart."""
    part, election = report.registration, report.election
    if part is None:
        recorded = "no cluster metadata"
    elif part.leader < 0:
        recorded = f"no leader at epoch {part.leader_epoch}"
    else:
        recorded = f"leader {part.leader} at epoch {part.leader_epoch} (metadata)"
    if election is None or not election.predicted:
        return recorded
    if election.leader is None:
        return f"{recorded}; at restart no broker would be elected: {election.reason}"
    verb = "leads (--if-leader)" if election.source == "if-leader" else "would be elected"
    return (f"{recorded}; at restart broker {election.leader} {verb} at epoch {election.leader_epoch} "
            f"({election.source}: {election.reason})")


def _status(r: Replica, report: PartitionReport) -> str:
    if r.state is not None:
        return r.state
    load = next((lt for lt in report.load_truncations if lt.replica is r), None)
    loaded = f"loads to {load.to_offset} ({load.records} record(s) dropped), " if load is not None else ""
    if r is report.leader:
        return f"{loaded}leader"
    t = next((t for t in report.truncations if t.follower is r), None)
    if t is None:
        return f"{loaded}follower"
    if t.plan.truncated_fully:
        return f"{loaded}truncate fully, fetch from {t.plan.truncate_to}"
    if t.plan.truncate_to < r.log_end_offset:
        text = f"{loaded}truncate to {t.plan.truncate_to}"
        if t.records_lost:
            text += f", lose {t.records_lost} ({t.committed_records_lost} committed)"
        return text
    if report.leader is not None and r.log_end_offset < report.leader.log_end_offset:
        return f"{loaded}lags {report.leader.log_end_offset - r.log_end_offset}"
    return f"{loaded}in sync"


def _finding_line(f: Finding) -> str:
    return f"  {f.severity}: {f.text}"


def partition_renderable(report: PartitionReport) -> Any:
    """A Rich table of the partition's replicas (loaded values; the log end on disk where loading changes it),
    with the verdict and findings under it."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    part = report.registration
    isr = "unknown" if part is None else str(part.isr)
    table = Table(title=f"{report.topic}-{report.partition}  {leader_line(report)}, ISR {isr}", title_justify="left")
    for column in ("broker", "log start", "log end", "HW", "recovery pt", "LSO", "epochs", "status"):
        table.add_column(column, justify="right" if column not in ("broker", "status", "epochs") else "left")
    for r in report.replicas:
        epochs = " ".join(f"{e.epoch}@{e.start_offset}" for e in r.epochs[-3:])
        table.add_row(str(broker_id(r)), str(r.log_start_offset), _log_end(r), _hw(r),
                      str(r.recovery_point_checkpoint), str(r.last_stable_offset), epochs, _status(r, report))
    parts: list[Any] = [table]
    for d in report.divergences:
        parts.append(Text(f"  brokers {broker_id(d.first)} and {broker_id(d.second)} diverge at offset {d.offset}"))
    for t in report.truncations:
        if t.plan.rounds:
            parts.append(Text(f"  broker {broker_id(t.follower)} truncates to {t.plan.truncate_to} in "
                              f"{t.plan.rounds} round(s): {t.records_truncated} record(s) removed, "
                              f"{t.records_lost} lost, {t.committed_records_lost} of them committed"))
    parts.extend(Text(_finding_line(f)) for f in report.findings)
    parts.append(Text(verdict_line(report), style="bold"))
    return Group(*parts)


def _log_end(r: Replica) -> str:
    """The loaded log end, with the one on disk when loading changes it."""
    if r.loaded is not None and r.disk.log_end_offset != r.log_end_offset:
        return f"{r.log_end_offset}(on-disk:{r.disk.log_end_offset})"
    return str(r.log_end_offset)


def _hw(r: Replica) -> str:
    """The loaded high watermark, with the checkpoint's when loading clamps it."""
    if r.high_watermark_checkpoint is not None and r.high_watermark != r.high_watermark_checkpoint:
        return f"{r.high_watermark}(checkpoint:{r.high_watermark_checkpoint})"
    return str(r.high_watermark)


def partition_lines(report: PartitionReport) -> list[str]:
    """Plain text (piped output): the table's content, one line per replica."""
    part = report.registration
    lines = [f"{report.topic}-{report.partition} {leader_line(report)} isr={'unknown' if part is None else part.isr}"]
    for r in report.replicas:
        lines.append(f"  broker={broker_id(r)} logStart={r.log_start_offset} logEnd={_log_end(r)} hw={_hw(r)} "
                     f"recoveryPoint={r.recovery_point_checkpoint} lso={r.last_stable_offset} "
                     f"epochs={_pairs(r.epochs)} status={_status(r, report)}")
    for d in report.divergences:
        lines.append(f"  divergence: brokers {broker_id(d.first)} and {broker_id(d.second)} at offset {d.offset}")
        for side in d.sides or ():
            lines.append(f"    broker {side.broker}: {side.path} position {side.position} batch {side.header}")
            lines.extend(f"      {rec}" for rec in side.records)
    for t in report.truncations:
        if t.plan.truncate_to < t.follower.log_end_offset or t.plan.truncated_fully:
            lines.append(f"  truncation: broker {broker_id(t.follower)} to {t.plan.truncate_to} in "
                         f"{t.plan.rounds} round(s), {t.records_truncated} record(s) removed, {t.records_lost} lost, "
                         f"{t.committed_records_lost} committed")
            lines.extend(f"    fetch at {s.fetch_offset} epoch {s.fetch_epoch}: {s.reason}" for s in t.plan.steps)
    lines.extend(_finding_line(f) for f in report.findings)
    lines.append(verdict_line(report))
    return lines
