"""The end-of-run summaries DumpLogSegments prints to stderr, in Kafka's order.

With ``--json`` the same entries are JSON objects on stdout, one per line Kafka would print below
its heading, so no line grows with the number of mismatches.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kdump.log.spill import PairList
from kdump.render.dialect import Dialect
from kdump.render.kafka_maps import kafka_map_order


@dataclass
class DumpSummaries:
    """What file handlers found during one run; printed after the last file."""

    # index path (absolute) -> [(index offset, log offset)]
    index_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # time index path -> [(index ts, log ts)]
    timestamp_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # time index path -> [(index ts, previous ts)]
    out_of_order_timestamps: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # time index path -> [(index offset, found log offset or -1)]
    offsets_not_found: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # log path (absolute) -> (previous offset, offset) pairs, spilled to a temporary file when many
    non_consecutive: dict[str, PairList] = field(default_factory=dict)

    def absorb(self, other: DumpSummaries) -> None:
        """Add what ``other`` (a worker's share of the files, the next in order) found, as if found here."""
        for name in ("index_mismatches", "timestamp_mismatches", "out_of_order_timestamps", "offsets_not_found"):
            mine = getattr(self, name)
            for path, pairs in getattr(other, name).items():
                mine.setdefault(path, []).extend(pairs)
        for path, gaps in other.non_consecutive.items():
            self.non_consecutive.setdefault(path, PairList()).extend(gaps)
            gaps.close()

    def lines(self, dialect: Dialect) -> Iterator[str]:
        """Kafka's stderr lines, produced one at a time (the offset gaps of a file can be millions)."""
        for path, pairs in _in_kafka_order(self.index_mismatches, dialect):
            yield f"Mismatches in :{path}"
            for index, log in _index_mismatch_order(pairs, dialect):
                yield f"  Index offset: {index}, log offset: {log}"
        for path, pairs in _in_kafka_order(self.timestamp_mismatches, dialect):
            yield f"Found timestamp mismatch in :{path}"
            for index, log in pairs:
                yield f"  Index timestamp: {index}, log timestamp: {log}"
        for path, pairs in _in_kafka_order(self.out_of_order_timestamps, dialect):
            yield f"Found out of order timestamp in :{path}"
            for index, prev in pairs:
                yield f"  Index timestamp: {index}, Previously indexed timestamp: {prev}"
        for path, pairs in _in_kafka_order(self.offsets_not_found, dialect):
            # One block per file; only the Java tool names it.
            yield (f"The following indexed offsets are not found in :{path}" if dialect.is_java
                   else "The following indexed offsets are not found in the log.")
            for index, log in pairs:
                yield f"Indexed offset: {index}, found log offset: {log}"
        for path, gaps in _in_kafka_order(self.non_consecutive, dialect):
            yield f"{dialect.non_consecutive_header}{path}"
            for prev, offset in _gap_order(gaps, dialect):
                yield f"  {prev} is followed by {offset}"

    def json_objects(self, dialect: Dialect) -> Iterator[dict[str, Any]]:
        """The entries of ``lines`` in the same order, one object each (headings become ``type``/``path``)."""
        for path, pairs in _in_kafka_order(self.index_mismatches, dialect):
            for index, log in _index_mismatch_order(pairs, dialect):
                yield {"type": "indexMismatch", "path": path, "indexOffset": index, "logOffset": log}
        for path, pairs in _in_kafka_order(self.timestamp_mismatches, dialect):
            for index, log in pairs:
                yield {"type": "timestampMismatch", "path": path, "indexTimestamp": index, "logTimestamp": log}
        for path, pairs in _in_kafka_order(self.out_of_order_timestamps, dialect):
            for index, prev in pairs:
                yield {"type": "outOfOrderTimestamp", "path": path, "indexTimestamp": index,
                       "previousTimestamp": prev}
        for path, pairs in _in_kafka_order(self.offsets_not_found, dialect):
            for index, log in pairs:
                yield {"type": "offsetNotFound", "path": path, "indexOffset": index, "logOffset": log}
        for path, gaps in _in_kafka_order(self.non_consecutive, dialect):
            for prev, offset in _gap_order(gaps, dialect):
                yield {"type": "nonConsecutiveOffsets", "path": path, "previousOffset": prev, "offset": offset}


T = TypeVar("T")


def _in_kafka_order(by_path: dict[str, T], dialect: Dialect) -> list[tuple[str, T]]:
    # Kafka keeps these in hash maps keyed by path: files come out in hash order.
    return [(path, by_path[path]) for path in kafka_map_order(by_path, dialect.summary_map_order)]


def _index_mismatch_order(pairs: list[tuple[int, int]], dialect: Dialect) -> list[tuple[int, int]]:
    # S prepends to a list (newest first); J keeps a TreeMap by descending index offset, where a
    # repeated index offset keeps the log offset put last.
    return sorted(dict(pairs).items(), reverse=True) if dialect.is_java else list(reversed(pairs))


def _gap_order(pairs: PairList, dialect: Dialect) -> Iterator[tuple[int, int]]:
    return pairs.sorted() if dialect.non_consecutive_ascending else pairs.reversed()
