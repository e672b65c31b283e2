"""The end-of-run summaries DumpLogSegments prints to stderr (spec §2.7), in Kafka's order."""

from __future__ import annotations

from dataclasses import dataclass, field

from kdump.render.dialect import Dialect


@dataclass
class DumpSummaries:
    """What file handlers found during one run; printed after the last file."""

    # index path (absolute) -> [(index offset, log offset)]
    index_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # time index path -> [(index ts, log ts)]
    timestamp_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # time index path -> [(index ts, previous ts)]
    out_of_order_timestamps: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # [(index offset, found log offset or -1)]
    offsets_not_found: list[tuple[int, int]] = field(default_factory=list)
    # log path (absolute) -> [(previous offset, offset)]
    non_consecutive: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def lines(self, dialect: Dialect) -> list[str]:
        lines: list[str] = []
        for path, pairs in self.index_mismatches.items():
            lines.append(f"Mismatches in :{path}")
            # Both tools print a file's mismatches by descending index offset; J drops duplicates.
            ordered = sorted(set(pairs) if dialect.is_java else pairs, key=lambda p: p[0], reverse=True)
            lines.extend(f"  Index offset: {index}, log offset: {log}" for index, log in ordered)
        for path, pairs in self.timestamp_mismatches.items():
            lines.append(f"Found timestamp mismatch in :{path}")
            lines.extend(f"  Index timestamp: {index}, log timestamp: {log}" for index, log in pairs)
        for path, pairs in self.out_of_order_timestamps.items():
            lines.append(f"Found out of order timestamp in :{path}")
            lines.extend(f"  Index timestamp: {index}, Previously indexed timestamp: {prev}"
                         for index, prev in pairs)
        if self.offsets_not_found:
            lines.append("The following indexed offsets are not found in the log.")
            lines.extend(f"Indexed offset: {index}, found log offset: {log}" for index, log in self.offsets_not_found)
        for path, pairs in self.non_consecutive.items():
            lines.append(f"{dialect.non_consecutive_header}{path}")
            ordered = sorted(pairs) if dialect.non_consecutive_ascending else list(reversed(pairs))
            lines.extend(f"  {prev} is followed by {offset}" for prev, offset in ordered)
        return lines
