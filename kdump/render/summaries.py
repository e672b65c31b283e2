"""The end-of-run summaries DumpLogSegments prints to stderr (spec §2.7), in Kafka's order."""

from __future__ import annotations

from dataclasses import dataclass, field

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
    # log path (absolute) -> [(previous offset, offset)]
    non_consecutive: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def lines(self, dialect: Dialect) -> list[str]:
        def in_kafka_order(by_path: dict[str, list[tuple[int, int]]]) -> list[tuple[str, list[tuple[int, int]]]]:
            # Kafka keeps these in hash maps keyed by path: files come out in hash order.
            return [(path, by_path[path]) for path in kafka_map_order(by_path, dialect.major_minor)]

        lines: list[str] = []
        for path, pairs in in_kafka_order(self.index_mismatches):
            lines.append(f"Mismatches in :{path}")
            # S prepends to a list (newest first); J keeps a TreeMap by descending index offset,
            # where a repeated index offset keeps the log offset put last.
            ordered = (sorted(dict(pairs).items(), reverse=True) if dialect.is_java
                       else list(reversed(pairs)))
            lines.extend(f"  Index offset: {index}, log offset: {log}" for index, log in ordered)
        for path, pairs in in_kafka_order(self.timestamp_mismatches):
            lines.append(f"Found timestamp mismatch in :{path}")
            lines.extend(f"  Index timestamp: {index}, log timestamp: {log}" for index, log in pairs)
        for path, pairs in in_kafka_order(self.out_of_order_timestamps):
            lines.append(f"Found out of order timestamp in :{path}")
            lines.extend(f"  Index timestamp: {index}, Previously indexed timestamp: {prev}"
                         for index, prev in pairs)
        for path, pairs in in_kafka_order(self.offsets_not_found):
            # One block per file; only the Java tool names it.
            lines.append(f"The following indexed offsets are not found in :{path}" if dialect.is_java
                         else "The following indexed offsets are not found in the log.")
            lines.extend(f"Indexed offset: {index}, found log offset: {log}" for index, log in pairs)
        for path, pairs in in_kafka_order(self.non_consecutive):
            lines.append(f"{dialect.non_consecutive_header}{path}")
            ordered = sorted(pairs) if dialect.non_consecutive_ascending else list(reversed(pairs))
            lines.extend(f"  {prev} is followed by {offset}" for prev, offset in ordered)
        return lines
