"""The end-of-run summaries DumpLogSegments prints to stderr (spec §2.7), in Kafka's order.

With ``--json`` the same entries are JSON objects on stdout, one per line Kafka would print below
its heading, so no line grows with the number of mismatches.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kdump.log.spill import PairList
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
    # log path (absolute) -> (previous offset, offset) pairs, spilled to a temporary file when many
    non_consecutive: dict[str, PairList] = field(default_factory=dict)

    def lines(self, dialect: Dialect) -> Iterator[str]:
        """Kafka's stderr lines, produced one at a time (the offset gaps of a file can be millions)."""
        for path, pairs in self.index_mismatches.items():
            yield f"Mismatches in :{path}"
            for index, log in _index_mismatch_order(pairs, dialect):
                yield f"  Index offset: {index}, log offset: {log}"
        for path, pairs in self.timestamp_mismatches.items():
            yield f"Found timestamp mismatch in :{path}"
            for index, log in pairs:
                yield f"  Index timestamp: {index}, log timestamp: {log}"
        for path, pairs in self.out_of_order_timestamps.items():
            yield f"Found out of order timestamp in :{path}"
            for index, prev in pairs:
                yield f"  Index timestamp: {index}, Previously indexed timestamp: {prev}"
        if self.offsets_not_found:
            yield "The following indexed offsets are not found in the log."
            for index, log in self.offsets_not_found:
                yield f"Indexed offset: {index}, found log offset: {log}"
        for path, gaps in self.non_consecutive.items():
            yield f"{dialect.non_consecutive_header}{path}"
            for prev, offset in _gap_order(gaps, dialect):
                yield f"  {prev} is followed by {offset}"

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


def _gap_order(pairs: PairList, dialect: Dialect) -> Iterator[tuple[int, int]]:
    return pairs.sorted() if dialect.non_consecutive_ascending else pairs.reversed()
