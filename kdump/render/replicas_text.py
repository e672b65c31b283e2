"""``kdump replicas``' output: one JSON object per partition (docs/json-output.md), or a Rich table per
partition with a verdict line. Renderers only; the analysis is kdump.broker.replica_report."""

from __future__ import annotations

from typing import Any

from kdump.broker.replica_report import BatchSide, Divergence, PartitionReport, Truncation
from kdump.broker.replicas import Replica


def broker_id(replica: Replica) -> int | str:
    """The broker's node id, or the log dir's name when no ``meta.properties`` says it."""
    return replica.broker if replica.broker is not None else replica.label


def _pairs(entries: list[Any]) -> list[list[int]]:
    return [[e.epoch, e.start_offset] for e in entries]


def replica_object(r: Replica, leader: Replica | None) -> dict[str, Any]:
    return {
        "broker": broker_id(r),
        "logDir": r.log_dir.path,
        "directoryId": r.log_dir.directory_id,
        "path": r.partition.path,
        "state": r.state or ("leader" if r is leader else "follower"),
        "topicId": r.topic_id,
        "logStartOffset": r.log_start_offset,
        "logEndOffset": r.log_end_offset,
        "highWatermark": r.high_watermark,
        "recoveryPoint": r.recovery_point,
        "lastStableOffset": r.last_stable_offset,
        "cleanerCheckpoint": r.cleaner_offset,
        "cleanShutdown": r.clean_shutdown,
        "leaderEpochs": _pairs(r.checkpoint_epochs),
        "batchEpochs": _pairs(r.batch_epochs),
        "latestEpoch": r.cache.latest_epoch,
        "batches": r.batches,
        "records": r.records,
    }


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
    part = report.registration
    return {
        "type": "partition",
        "topic": report.topic,
        "partition": report.partition,
        "topicId": report.topic_id,
        "leader": report.leader_broker,
        "leaderEpoch": report.leader_epoch,
        "leaderSource": report.leader_source,
        "leaderReason": report.leader_why,
        "isr": None if part is None else part.isr,
        "elr": None if part is None else part.elr,
        "lastKnownElr": None if part is None else part.last_known_elr,
        "assignedReplicas": None if part is None else part.replicas,
        "compacted": report.compacted,
        "replicas": [replica_object(r, report.leader) for r in report.replicas],
        "divergences": [divergence_object(d) for d in report.divergences],
        "truncations": [truncation_object(t) for t in report.truncations],
        "notes": report.notes,
        "verdict": report.verdict,
    }


def verdict_line(report: PartitionReport) -> str:
    name = f"{report.topic}-{report.partition}"
    verdict = report.verdict
    if verdict == "data-loss":
        lost = sum(t.records_lost for t in report.truncations)
        committed = sum(t.committed_records_lost for t in report.truncations)
        return (f"{name}: DATA LOSS: followers would drop {lost} record(s) the leader does not hold, "
                f"{committed} of them committed")
    if verdict == "diverged":
        first = min(d.offset for d in report.divergences)
        return f"{name}: DIVERGED from offset {first}, but no follower would drop a record the leader lacks"
    if verdict == "lagging":
        return f"{name}: consistent; some followers lag and will catch up"
    return f"{name}: consistent: every replica holds the same batches"


def _status(r: Replica, report: PartitionReport) -> str:
    if r.state is not None:
        return r.state
    if r is report.leader:
        return "leader"
    t = next((t for t in report.truncations if t.follower is r), None)
    if t is None:
        return "follower"
    if t.plan.truncated_fully:
        return f"truncate fully, fetch from {t.plan.truncate_to}"
    if t.plan.truncate_to < r.log_end_offset:
        text = f"truncate to {t.plan.truncate_to}"
        if t.records_lost:
            text += f", lose {t.records_lost} ({t.committed_records_lost} committed)"
        return text
    if report.leader is not None and r.log_end_offset < report.leader.log_end_offset:
        return f"lags {report.leader.log_end_offset - r.log_end_offset}"
    return "in sync"


def partition_renderable(report: PartitionReport) -> Any:
    """A Rich table of the partition's replicas, with the verdict and notes under it."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    part = report.registration
    isr = "unknown" if part is None else str(part.isr)
    title = (f"{report.topic}-{report.partition}  leader {report.leader_broker} ({report.leader_source}), "
             f"epoch {report.leader_epoch}, ISR {isr}")
    table = Table(title=title, title_justify="left")
    for column in ("broker", "log start", "log end", "HW", "recovery pt", "LSO", "epochs", "status"):
        table.add_column(column, justify="right" if column not in ("broker", "status", "epochs") else "left")
    for r in report.replicas:
        epochs = " ".join(f"{e.epoch}@{e.start_offset}" for e in r.checkpoint_epochs[-3:])
        table.add_row(str(broker_id(r)), str(r.log_start_offset), str(r.log_end_offset), str(r.high_watermark),
                      str(r.recovery_point), str(r.last_stable_offset), epochs, _status(r, report))
    parts: list[Any] = [table]
    for d in report.divergences:
        parts.append(Text(f"  brokers {broker_id(d.first)} and {broker_id(d.second)} diverge at offset {d.offset}"))
    for t in report.truncations:
        if t.plan.rounds:
            parts.append(Text(f"  broker {broker_id(t.follower)} truncates to {t.plan.truncate_to} in "
                              f"{t.plan.rounds} round(s): {t.records_truncated} record(s) removed, "
                              f"{t.records_lost} lost, {t.committed_records_lost} of them committed"))
    parts.extend(Text(f"  note: {n}") for n in report.notes)
    parts.append(Text(verdict_line(report), style="bold"))
    return Group(*parts)


def partition_lines(report: PartitionReport) -> list[str]:
    """Plain text (piped output): the table's content, one line per replica."""
    part = report.registration
    lines = [f"{report.topic}-{report.partition} leader={report.leader_broker} ({report.leader_source}: "
             f"{report.leader_why}) leaderEpoch={report.leader_epoch} "
             f"isr={'unknown' if part is None else part.isr}"]
    for r in report.replicas:
        lines.append(f"  broker={broker_id(r)} logStart={r.log_start_offset} logEnd={r.log_end_offset} "
                     f"hw={r.high_watermark} recoveryPoint={r.recovery_point} lso={r.last_stable_offset} "
                     f"epochs={_pairs(r.checkpoint_epochs)} status={_status(r, report)}")
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
    lines.extend(f"  note: {n}" for n in report.notes)
    lines.append(verdict_line(report))
    return lines
