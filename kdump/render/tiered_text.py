"""``kdump tiered``'s output: one JSON object or a block of text per partition (docs/json-output.md, docs/tiered.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kdump.verify.tiered_check import TieredPartition
from kdump.words import counted

TIERED_SCHEMA_VERSION = 1


def tiered_object(part: TieredPartition) -> dict[str, Any]:
    return {
        "type": "tieredPartition", "schemaVersion": TIERED_SCHEMA_VERSION,
        "topic": part.topic, "partition": part.partition, "topicId": part.topic_id,
        "logStartOffset": part.log_start_offset, "localLogStartOffset": part.local_log_start_offset,
        "logEndOffset": part.log_end_offset,
        "remoteSegments": [{"startOffset": r.start_offset, "endOffset": r.end_offset, "segmentId": r.segment_id,
                            "state": r.state, "present": r.present, "sizeInBytes": r.size} for r in part.remote],
        "localSegments": [{"baseOffset": base} for base in part.local_segments],
        "problems": [{"kind": p.kind, "severity": p.severity, "offset": p.offset, "message": p.message,
                      "file": p.file} for p in part.problems],
    }


def _offset(value: int | None) -> str:
    return "-" if value is None else str(value)


def tiered_lines(part: TieredPartition) -> Iterator[str]:
    yield (f"{part.topic}-{part.partition} (topic id {part.topic_id or 'unknown'}): log start "
           f"{_offset(part.log_start_offset)}, local log start {_offset(part.local_log_start_offset)}, "
           f"log end {_offset(part.log_end_offset)}")
    for r in part.remote:
        where = "present" if r.present else "absent"
        yield (f"  remote {r.start_offset:>12}-{_offset(r.end_offset):<12} {r.segment_id}  "
               f"{r.state or 'NO METADATA'}  {where}")
    if part.local_segments:
        yield "  local  " + ", ".join(str(b) for b in part.local_segments)
    for p in part.problems:
        at = "" if p.offset is None else f" at offset {p.offset}"
        yield f"  {p.severity.upper()} {p.kind}{at}: {p.message}"


def summary_line(partitions: int, errors: int, notes: int) -> str:
    state = "ok" if errors == 0 else counted(errors, "error")
    return f"{counted(partitions, 'tiered partition')}: {state}, {counted(notes, 'note')}"
