"""``kdump groups``' output: a Rich table (or plain lines) per group, and one JSON object per group and
partition (type "groupOffset", docs/json-output.md).

Recorded facts (the commit, its epoch, the coordinator copy read) and kdump's predictions (the partition
after restart, the consumer's start) are named apart: the JSON's ``fate`` object and the table's columns
right of "committed" are predictions.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby
from typing import Any

from kdump.broker.group_report import GroupOffset, GroupsReport
from kdump.findings import Finding

GROUPS_SCHEMA_VERSION = 1

# Each fate, the rule it follows (for --explain).
RULES = {
    "resume": "the commit is valid: the consumer fetches from it (ConsumerCoordinator.refreshCommittedOffsetsIfNeeded)",
    "reset-below-log-start": "committed below the log start: the fetch gets OFFSET_OUT_OF_RANGE and auto.offset.reset "
                             "applies; none raises OffsetOutOfRangeException (FetchCollector.handleInitializeErrors)",
    "truncation-detected": "the commit's leader epoch ends below it on the new leader (OffsetsForLeaderEpoch, "
                           "KIP-320): the consumer moves to that end offset; none raises LogTruncationException "
                           "(SubscriptionState.maybeCompleteValidation)",
    "out-of-range-reset": "a commit without a leader epoch beyond the log end: OFFSET_OUT_OF_RANGE, then "
                          "auto.offset.reset; none raises OffsetOutOfRangeException (FetchCollector)",
    "expired": "offsets.retention.minutes removed the commit (OffsetMetadataManager.cleanupExpiredOffsets): "
               "auto.offset.reset applies; none raises NoOffsetForPartitionException (SubscriptionState)",
    "share-start": "a share group resumes at the first record at or above its share-partition start offset (the "
                   "log start if above) not acknowledged or archived (SharePartition.maybeInitialize)",
}


def offset_object(o: GroupOffset) -> dict[str, Any]:
    after, commit, fate = o.after, o.commit, o.fate
    return {
        "type": "groupOffset",
        "schemaVersion": GROUPS_SCHEMA_VERSION,
        "group": o.group,
        "protocol": o.protocol,
        "topic": o.topic,
        "partition": o.partition,
        "coordinator": o.coordinator,
        "transaction": o.transaction,
        "committedOffset": o.committed_offset,
        "committedLeaderEpoch": None if commit is None else commit.leader_epoch,
        "metadata": None if commit is None else commit.metadata,
        "commitTimestamp": None if commit is None else commit.commit_timestamp,
        "expiresAt": o.expires_at,
        "inFlight": None if o.share is None else o.share.available_in_flight(),
        "logStartOffset": None if after is None else after.log_start_offset,
        "highWatermark": None if after is None else after.high_watermark,
        "lastStableOffset": None if after is None else after.last_stable_offset,
        "logEndOffset": None if after is None else after.log_end_offset,
        "leader": None if after is None else after.election.leader,
        "leaderEpoch": None if after is None else after.election.leader_epoch,
        "lag": o.lag,
        "fate": None if fate is None else {
            "policy": fate.policy, "kind": fate.kind, "nextOffset": fate.next_offset, "error": fate.error,
            "skipped": fate.skipped, "reread": fate.reread, "lostConsumed": fate.lost_consumed},
    }


def finding_line(f: Finding) -> str:
    return f"{f.severity}: {f.file}: {f.text}"


def _fate_text(o: GroupOffset) -> str:
    if o.transaction in ("aborted", "open"):
        return f"not committed ({o.transaction} transaction)"
    if o.after is None:
        return "partition not in the given dirs"
    f = o.fate
    if f is None:
        return "-"
    head = f.kind if f.error is None else f"{f.kind}: {f.error}"
    counts = ", ".join(f"{name} {n}" for name, n in (("skipped", f.skipped), ("reread", f.reread),
                                                     ("lost", f.lost_consumed)) if n)
    return head + (f" ({counts})" if counts else "")


def _cells(o: GroupOffset) -> list[str]:
    obj = offset_object(o)
    epoch = obj["committedLeaderEpoch"]
    committed = "-" if obj["committedOffset"] is None else str(obj["committedOffset"]) + \
        ("" if epoch is None else f" (epoch {epoch})")
    nxt = "-" if o.fate is None or o.fate.next_offset is None else str(o.fate.next_offset)

    def text(v: Any) -> str:
        return "-" if v is None else str(v)

    return [f"{o.topic}-{o.partition}", committed, text(obj["logStartOffset"]), text(o.end), text(obj["lag"]),
            nxt, _fate_text(o)]


CAPTION = "committed: on disk; log start, end, lag, next and fate: predicted, after restart"
COLUMNS = ("partition", "committed", "log start", "end", "lag", "next", "fate (predicted)")


def group_renderables(report: GroupsReport, explain: bool) -> Iterator[Any]:
    from rich.table import Table
    from rich.text import Text

    for group, rows in groupby(report.offsets, key=lambda o: o.group):
        items = list(rows)
        table = Table(title=f"{group} ({items[0].protocol})  coordinator {items[0].coordinator}", title_justify="left",
                      caption=CAPTION, caption_justify="left")
        for column in COLUMNS:
            table.add_column(column, justify="right" if column in ("log start", "end", "lag", "next") else "left")
        for o in items:
            table.add_row(*_cells(o))
        yield table
        if explain:
            for kind in sorted({o.fate.kind for o in items if o.fate is not None}):
                yield Text(f"  {kind}: {RULES.get(kind, '')}")
    for f in report.findings:
        yield Text(finding_line(f))


def group_lines(report: GroupsReport, explain: bool) -> Iterator[str]:
    for group, rows in groupby(report.offsets, key=lambda o: o.group):
        items = list(rows)
        yield f"group {group} ({items[0].protocol}), coordinator {items[0].coordinator}"
        for o in items:
            yield "  " + "  ".join(f"{c}: {v}" for c, v in zip(COLUMNS, _cells(o), strict=True))
        if explain:
            for kind in sorted({o.fate.kind for o in items if o.fate is not None}):
                yield f"  {kind}: {RULES.get(kind, '')}"
    for f in report.findings:
        yield finding_line(f)


__all__ = ["GROUPS_SCHEMA_VERSION", "RULES", "group_lines", "group_renderables", "offset_object"]
