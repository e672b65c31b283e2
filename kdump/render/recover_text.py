"""``kdump recover`` output: the load plan of each partition as text lines or JSON objects."""

from __future__ import annotations

from os.path import basename
from typing import Any

from kdump.broker.log_manager import CLEAN_SHUTDOWN_FILE, LogDirState
from kdump.broker.partition_plan import PartitionPlan
from kdump.broker.recovery import SegmentRecovery
from kdump.log.files import segment_base_offset, segment_file_name
from kdump.words import counted

_DIR_KINDS = {"future": ", the future replica of a move between log dirs", "stray": ", a stray replica",
              "delete": ", a deleted partition"}


def log_dir_lines(state: LogDirState) -> list[str]:
    if state.clean_shutdown:
        how = (f"clean-shutdown marker {CLEAN_SHUTDOWN_FILE} present: the broker recovers only segments whose "
               f"offset index is missing or whose transaction index is corrupt")
    else:
        how = (f"no clean-shutdown marker ({CLEAN_SHUTDOWN_FILE}): the broker recovers every segment from each "
               f"partition's recovery point on")
    return [f"Log dir {state.path}: {how}"] + [f"  note: {note}" for note in state.notes]


def log_dir_object(state: LogDirState) -> dict[str, Any]:
    return {"type": "logDir", "path": state.path, "cleanShutdown": state.clean_shutdown, "notes": state.notes}


def totals_line(plans: list[PartitionPlan]) -> str:
    """The last line of the text output, over every log dir planned."""
    lost = sum(1 for p in plans if p.loses_data)
    return (f"recover: {counted(len(plans), 'partition')}, {lost} would lose data, "
            f"{counted(sum(len(p.deleted_segments) for p in plans), 'segment')} deleted, "
            f"{sum(1 for p in plans if p.refused)} refused")


def _loss(r: SegmentRecovery) -> str:
    if r.zero_padding and not r.lost_batches:
        return f"drops {r.truncated_bytes} bytes of zero padding (no data)"
    what = f"loses {r.truncated_bytes} bytes"
    if r.lost_batches:
        assert r.lost_offsets is not None
        what += (f": {counted(r.lost_batches, 'complete batch')}, "
                 f"{counted(r.lost_records, 'record')}, offsets "
                 f"{r.lost_offsets[0]}..{r.lost_offsets[1]}")
        if r.lost_producers:
            what += f" (producer ids {', '.join(map(str, sorted(r.lost_producers)))})"
    else:
        what += " that hold no complete batch"
    return what


def plan_lines(plan: PartitionPlan) -> list[str]:
    kind = _DIR_KINDS.get(plan.dir_state or "", "")
    lines = [f"Partition {plan.topic}-{plan.partition}{kind} ({plan.path})"]
    hw = "none" if plan.high_watermark_checkpoint is None else str(plan.high_watermark_checkpoint)
    lines.append(f"  checkpoints: recovery point {plan.recovery_point}, log start offset {plan.log_start_checkpoint}, "
                 f"high watermark {hw}")
    for change in plan.file_changes:
        target = f" to {basename(change.to)}" if change.to else ""
        lines.append(f"  {change.action} {basename(change.path)}{target}: {change.why}")
    if plan.refused is not None:
        lines.append(f"  REFUSED: {plan.refused}")
        return lines
    if plan.dir_state == "delete":
        return lines
    for r in plan.recovered:
        lines.append(f"  recover {basename(r.log)}: {r.why}")
        if r.truncated_bytes:
            lines.append(f"    truncate at position {r.valid_bytes} ({r.stopped}); {_loss(r)}")
        else:
            kept = counted(r.kept_batches, 'batch')
            lines.append(f"    keeps all {kept} ({r.size} bytes); indexes rebuilt")
    for d in plan.deleted_segments:
        held = f"{counted(d.batches, 'batch')}, {counted(d.records, 'record')}"
        held += f", offsets {d.offsets[0]}..{d.offsets[1]}" if d.offsets else ""
        lines.append(f"  delete segment {basename(d.log)} and its indexes ({d.size} bytes: {held}): {d.why}")
    for entry in plan.epochs_removed:
        lines.append(f"  leader-epoch-checkpoint: drop epoch {entry.epoch} at offset {entry.start_offset}")
    for entry in plan.epochs_added:
        lines.append(f"  leader-epoch-checkpoint: add epoch {entry.epoch} at offset {entry.start_offset}")
    for path in plan.snapshots_deleted:
        above = (segment_base_offset(basename(path)) or 0) > plan.log_end_offset
        lines.append(f"  delete producer snapshot {basename(path)}: " + ("above the new log end offset" if above else
                     "the producer state is dropped with every segment"))
    if plan.snapshot_written is not None:
        lines.append(f"  write producer snapshot {segment_file_name(plan.snapshot_written, '.snapshot')}: the producer "
                     f"state at the new "
                     f"log end offset")
    for txn in plan.transactions.open_after:
        why = "its marker is among the lost batches" if txn.marker_lost else "open before loading too"
        lines.append(f"  open transaction after loading: producer {txn.producer_id} from offset {txn.first_offset} "
                     f"({why})")
    for pid, first in plan.transactions.lost_open:
        lines.append(f"  open transaction lost: producer {pid} from offset {first} (all its batches are dropped)")
    if plan.transactions.lost_producers:
        lines.append(f"  producers with lost batches: {', '.join(map(str, sorted(plan.transactions.lost_producers)))}")
    lines.extend(_unchecked_lines(plan))
    hw_after = "none" if plan.high_watermark is None else str(plan.high_watermark)
    lines.append(f"  after loading: log end offset {plan.log_end_offset} (now {plan.log_end_offset_before}), "
                 f"log start offset {plan.log_start_offset}, recovery point {plan.new_recovery_point}, "
                 f"high watermark {hw_after}")
    records = sum(r.lost_records for r in plan.recovered) + sum(d.records for d in plan.deleted_segments)
    lost = f"DATA LOSS: {counted(records, 'record')} in complete batches" if plan.loses_data else "nothing lost"
    if plan.loses_data and plan.log_end_offset < plan.log_end_offset_before:
        lost += f", offsets {plan.log_end_offset}..{plan.log_end_offset_before - 1}"
    lines.append(f"  verdict: {lost}")
    if plan.loses_data:
        lines.append(f"    high watermark: {_against_high_watermark(plan)}")
    return lines


def _unchecked_lines(plan: PartitionPlan) -> list[str]:
    lines = []
    for u in plan.unchecked:
        name = basename(u.log)
        if u.damage is not None:
            lines.append(f"  not re-checked {name}: {u.damage}; {u.why}, so the broker keeps these bytes and "
                         f"serves them as they are" + ("; an unclean restart would recover it"
                                                       if u.rebuilt_by_unclean_restart else ""))
        elif u.missing_index_entries:
            how = ("a clean restart leaves the missing entries missing, an unclean one rebuilds the index"
                   if u.rebuilt_by_unclean_restart else f"{u.why}, so no restart rebuilds it")
            lines.append(f"  index of {name}: {u.index_entries} offset index entries where recovery writes "
                         f"{u.rebuilt_entries}; {how}")
    return lines


def _against_high_watermark(plan: PartitionPlan) -> str:
    """Which lost offsets the high watermark checkpoint says were committed (below it) and which not."""
    hw = plan.high_watermark_checkpoint
    if hw is None:
        return "no high watermark checkpoint says whether the lost offsets were committed"
    parts = []
    committed = plan.committed_lost
    if committed is not None:
        part = (f"the checkpoint {hw} proves offsets {committed[0]}..{committed[1]} were committed (acknowledged to "
                f"acks=all producers, readable by consumers)")
        if hw > plan.log_end_offset_before:
            part += f", {hw - plan.log_end_offset_before} of them past the last complete batch"
        parts.append(part)
    above = max(plan.log_end_offset, hw)
    if plan.log_end_offset_before > above:
        parts.append(f"offsets {above}..{plan.log_end_offset_before - 1} lie at or above {hw}: never committed")
    return "; ".join(parts)


def plan_object(plan: PartitionPlan) -> dict[str, Any]:
    return {
        "type": "partition", "topic": plan.topic, "partition": plan.partition, "path": plan.path,
        "dirState": plan.dir_state,
        "cleanShutdown": plan.clean_shutdown, "recoveryPoint": plan.recovery_point,
        "logStartOffsetCheckpoint": plan.log_start_checkpoint,
        "highWatermarkCheckpoint": plan.high_watermark_checkpoint,
        "fileChanges": [{"path": c.path, "action": c.action, "why": c.why, "to": c.to} for c in plan.file_changes],
        "recovered": [{"log": r.log, "baseOffset": r.base_offset, "why": r.why, "size": r.size,
                       "validBytes": r.valid_bytes, "truncatedBytes": r.truncated_bytes, "stopped": r.stopped,
                       "zeroPadding": r.zero_padding, "keptBatches": r.kept_batches,
                       "lostBatches": r.lost_batches, "lostRecords": r.lost_records,
                       "lostOffsets": list(r.lost_offsets) if r.lost_offsets else None,
                       "lostProducerIds": sorted(r.lost_producers), "nextOffset": r.next_offset}
                      for r in plan.recovered],
        "deletedSegments": [{"baseOffset": d.base_offset, "log": d.log, "why": d.why, "size": d.size,
                             "batches": d.batches, "records": d.records,
                             "offsets": list(d.offsets) if d.offsets else None} for d in plan.deleted_segments],
        "leaderEpochsRemoved": [{"epoch": e.epoch, "startOffset": e.start_offset} for e in plan.epochs_removed],
        "leaderEpochsAdded": [{"epoch": e.epoch, "startOffset": e.start_offset} for e in plan.epochs_added],
        "snapshotsDeleted": plan.snapshots_deleted, "snapshotWritten": plan.snapshot_written,
        "openTransactions": [{"producerId": t.producer_id, "firstOffset": t.first_offset, "markerLost": t.marker_lost}
                             for t in plan.transactions.open_after],
        "lostOpenTransactions": [{"producerId": pid, "firstOffset": first}
                                 for pid, first in plan.transactions.lost_open],
        "producersWithLostBatches": sorted(plan.transactions.lost_producers),
        "logEndOffsetBefore": plan.log_end_offset_before, "logEndOffset": plan.log_end_offset,
        "logStartOffset": plan.log_start_offset, "recoveryPointAfter": plan.new_recovery_point,
        "highWatermark": plan.high_watermark, "refused": plan.refused, "losesData": plan.loses_data,
        "committedLost": list(plan.committed_lost) if plan.committed_lost else None,
        "unchecked": [{"log": u.log, "baseOffset": u.base_offset, "why": u.why, "damage": u.damage,
                       "indexEntries": u.index_entries, "rebuiltIndexEntries": u.rebuilt_entries,
                       "rebuiltByUncleanRestart": u.rebuilt_by_unclean_restart} for u in plan.unchecked],
    }
