"""``kdump verify`` and ``kdump verify-index`` output: one line per finding and a summary, as text or JSON Lines.

Renderers take findings and counts and return strings; the command writes them. Notes that repeat
the same rule for the same file (a pre-4.1 follower index notes every entry) are folded into the
first one plus a count, so real errors stay visible; errors are never folded.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kdump.findings import Finding
from kdump.render import log_json
from kdump.verify.engine import Tally, nothing_checked
from kdump.words import counted

JSON_SCHEMA_VERSION = 1


@dataclass
class VerifyCounts:
    """What a run looked at (the engine's ``Tally``) and found."""

    tally: Tally = field(default_factory=Tally)
    errors: int = 0
    notes: int = 0

    @property
    def nothing_checked(self) -> str | None:
        """Why a run without errors still is not OK (None when something was checked, or unreadable)."""
        return None if self.tally.unreadable else nothing_checked(self.tally)

    @property
    def ok(self) -> bool:
        return not self.errors and not self.tally.unreadable and self.nothing_checked is None


def where(finding: Finding) -> str:
    parts = []
    if finding.offset is not None:
        parts.append(f"offset {finding.offset}")
    if finding.position is not None:
        parts.append(f"position {finding.position}")
    if finding.timestamp is not None:
        parts.append(f"timestamp {finding.timestamp}")
    text = ", ".join(parts)
    if finding.entry is not None:
        return f" entry {finding.entry}" + (f" ({text})" if text else "")
    return f" ({text})" if text else ""


def finding_line(finding: Finding) -> str:
    """``error: FILE entry N (offset O, position P): what is wrong; log: what the log holds``."""
    line = f"{finding.severity}: {finding.file}{where(finding)}: {finding.text}"
    if finding.log_says:
        line += f"; log: {finding.log_says}"
    return line


def text_lines(findings: Iterable[Finding], *, errors_only: bool = False) -> Iterator[str]:
    """Lines for one segment's findings, folding repeated notes."""
    folded: dict[tuple[str, str], int] = {}
    firsts: list[tuple[tuple[str, str], Finding]] = []
    for finding in findings:
        if finding.is_error:
            yield finding_line(finding)
            continue
        if errors_only:
            continue
        key = (finding.file, finding.check)
        if key in folded:
            folded[key] += 1
        else:
            folded[key] = 0
            firsts.append((key, finding))
    for key, finding in firsts:
        more = folded[key]
        line = finding_line(finding)
        yield line + (f" (and {more} more like it in this file)" if more else "")


def summary_line(counts: VerifyCounts, command: str = "verify-index") -> str:
    t = counts.tally
    checked = f"{counted(t.files, 'file')} in {counted(t.segments, 'segment')}"
    if t.partitions:
        checked += f" of {counted(t.partitions, 'partition')}"
    if command == "verify":
        checked += f" ({counted(t.batches, 'batch')}, {counted(t.records, 'record')})"
    verdict = "OK" if counts.ok else "FAILED"
    unreadable = f", {counted(len(t.unreadable), 'unreadable path')}" if t.unreadable else ""
    why = f"; {counts.nothing_checked}" if counts.nothing_checked else ""
    found = f"{counted(counts.errors, 'error')}, {counted(counts.notes, 'note')}"
    return f"{command} {verdict}: {checked} checked: {found}{unreadable}{why}"


def finding_json(finding: Finding) -> str:
    return log_json.dumps({"type": "finding", **finding.as_dict()})


def unreadable_json(path: str, reason: str) -> str:
    return log_json.dumps({"type": "unreadable", "path": path, "reason": reason})


def summary_json(counts: VerifyCounts, command: str = "verify-index") -> str:
    t = counts.tally
    body: dict[str, Any] = {"type": "summary", "schemaVersion": JSON_SCHEMA_VERSION, "command": command,
                            "ok": counts.ok, "partitions": t.partitions, "segments": t.segments, "files": t.files}
    if command == "verify":
        body.update(batches=t.batches, records=t.records)
    body.update(errors=counts.errors, notes=counts.notes, unreadable=t.unreadable,
                nothingChecked=counts.nothing_checked)
    return log_json.dumps(body)
