"""The end-of-run summaries DumpLogSegments prints to stderr (spec §2.7), in Kafka's order.

With ``--json`` the same entries are JSON objects on stdout, one per line Kafka would print below
its heading, so no line grows with the number of mismatches.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

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
            lines.extend(f"  Index offset: {index}, log offset: {log}"
                         for index, log in _index_mismatch_order(pairs, dialect))
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
            lines.extend(f"  {prev} is followed by {offset}" for prev, offset in _gap_order(pairs, dialect))
        return lines

    def json_objects(self, dialect: Dialect) -> Iterator[dict[str, Any]]:
        """The entries of ``lines`` in the same order, one object each (headings become ``type``/``path``)."""
        for path, pairs in self.index_mismatches.items():
            for index, log in _index_mismatch_order(pairs, dialect):
                yield {"type": "indexMismatch", "path": path, "indexOffset": index, "logOffset": log}
        for path, pairs in self.timestamp_mismatches.items():
            for index, log in pairs:
                yield {"type": "timestampMismatch", "path": path, "indexTimestamp": index, "logTimestamp": log}
        for path, pairs in self.out_of_order_timestamps.items():
            for index, prev in pairs:
                yield {"type": "outOfOrderTimestamp", "path": path, "indexTimestamp": index,
                       "previousTimestamp": prev}
        for index, log in self.offsets_not_found:
            # Kafka's list names no file (it is shared by every index of the run).
            yield {"type": "offsetNotFound", "path": None, "indexOffset": index, "logOffset": log}
        for path, pairs in self.non_consecutive.items():
            for prev, offset in _gap_order(pairs, dialect):
                yield {"type": "nonConsecutiveOffsets", "path": path, "previousOffset": prev, "offset": offset}


def _index_mismatch_order(pairs: list[tuple[int, int]], dialect: Dialect) -> list[tuple[int, int]]:
    # Both tools print a file's mismatches by descending index offset; J drops duplicates.
    return sorted(set(pairs) if dialect.is_java else pairs, key=lambda p: p[0], reverse=True)


def _gap_order(pairs: list[tuple[int, int]], dialect: Dialect) -> list[tuple[int, int]]:
    return sorted(pairs) if dialect.non_consecutive_ascending else list(reversed(pairs))
