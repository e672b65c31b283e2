"""The one cross-check of the ``.txnindex`` files against the aborts the producer state expects.

``expected`` holds the transactions the markers complete (kdump.broker.producer_state: Kafka's
ProducerAppendInfo.appendEndTxnMarker, so a marker from a producer with no ongoing transaction
completes nothing and needs no entry); ``entries`` what the ``.txnindex`` files hold, keyed by
(producer id, marker offset). ``verify`` and ``txn`` both report through ``check_txn_index``.

A fetch collects aborted transactions from the segment holding its start offset onwards
(LocalLog.collectAbortedTransactions, Kafka 4.3.0), so an entry stored in an earlier segment's
index than its marker's is missed by read_committed consumers.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterator, Mapping, Sequence

from kdump.broker.producer_state import CompletedTxn
from kdump.findings import ERROR, NOTE, Finding

IndexEntries = Mapping[tuple[int, int], tuple[str, int, int]]
"""(producer id, last offset) -> (.txnindex path, first offset, lastStableOffset)."""


def _owner(bases: Sequence[int], offset: int) -> int | None:
    i = bisect.bisect_right(bases, offset)
    return bases[i - 1] if i else None


def _file_base(path: str) -> int | None:
    name = os.path.basename(path).split(".", 1)[0]
    return int(name) if name.isdigit() else None


def check_txn_index(partition_path: str, expected: Sequence[CompletedTxn], entries: IndexEntries,
                    bases: Sequence[int], log_start: int | None,
                    entries_before: IndexEntries | None = None) -> Iterator[Finding]:
    """Every abort ``expected`` against ``entries`` (``entries_before``: those read before the log was, the
    only ones an extra entry is told from, so a live broker's new abort raises no false alarm)."""
    aborted = {(t.producer_id, t.last_offset): t for t in expected if t.is_aborted}
    for (pid, last), txn in aborted.items():
        found = entries.get((pid, last))
        if found is None:
            yield Finding(ERROR, "txn-index-missing", partition_path, f"the abort of producer {pid}'s transaction "
                          f"(offsets {txn.first_offset}..{last}) has no .txnindex entry: read_committed consumers see "
                          f"its records", offset=last)
            continue
        path, first, lso = found
        kept = log_start is None or first >= log_start
        if first != txn.first_offset and kept:
            yield Finding(ERROR, "txn-index-range", path, f"the entry for producer {pid}'s abort at offset {last} "
                          f"starts at {first}; the log's transaction starts at {txn.first_offset}", offset=last)
        elif lso != txn.last_stable_offset and kept:
            yield Finding(NOTE, "txn-index-lso", path, f"the entry for producer {pid}'s abort at offset {last} says "
                          f"lastStableOffset {lso}; replaying the log gives {txn.last_stable_offset}", offset=last)
        owner, stored = _owner(bases, last), _file_base(path)
        if owner is not None and stored is not None and stored != owner:
            yield Finding(ERROR if stored < owner else NOTE, "txn-index-segment", path,
                          f"the entry for producer {pid}'s abort at offset {last} is stored in the .txnindex of "
                          f"segment {stored}, not of the segment holding the marker ({owner:020d}.txnindex)",
                          offset=last)
    for (pid, last), (path, first, _lso) in (entries if entries_before is None else entries_before).items():
        if (pid, last) in aborted:
            continue
        if log_start is not None and (last < log_start or first < log_start):
            continue    # its records, or the data before its marker, were deleted with their segments
        yield Finding(ERROR, "txn-index-extra", path, f"entry for producer {pid} (offsets {first}..{last}) matches "
                      f"no ABORT marker in the log", offset=last)
