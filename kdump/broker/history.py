"""A tiered partition's whole history, read as a consumer fetching from its log start gets it.

The broker serves an offset below the local log start offset from the remote segment holding it, and the
rest from the local log (Kafka 4.3.0: ReplicaManager.readFromLog sends a fetch whose offset moved to tiered
storage to RemoteLogManager, storage/.../log/remote/storage/RemoteLogManager.java; UnifiedLog.read serves
local offsets). So the
history is the remote segments in offset order, then the local segments, each offset once: a local segment
still holding offsets already read from the remote tier (local retention has not deleted it yet) is read
from where the remote tier ended. read_committed applies the consumer's rules (``isolation``) with the
aborted transactions of every ``.txnindex`` of both tiers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from kdump.broker.isolation import READ_COMMITTED, AbortedRange, AbortedTransactions
from kdump.errors import FormatError
from kdump.format.control import ControlType, parse_control_key
from kdump.log.batches import LogBatches
from kdump.log.logdir import SegmentFiles
from kdump.log.segment import ReadOnlyFile
from kdump.log.state_files import read_aborted_txns

Opener = Callable[[str], ReadOnlyFile]


class HistoryRecord(NamedTuple):
    offset: int
    key: bytes | None
    value: bytes | None


def _aborted(segments: Iterable[SegmentFiles], opener: Opener) -> list[AbortedRange]:
    out: set[AbortedRange] = set()
    for seg in segments:
        if seg.txn_index is None:
            continue
        with opener(seg.txn_index) as file:
            out.update(AbortedRange(t.producer_id, t.first_offset, t.last_offset)
                       for t in read_aborted_txns(file, seg.txn_index))
    return sorted(out, key=lambda a: (a.first_offset, a.producer_id))


def history_segments(remote: Iterable[SegmentFiles], local: Iterable[SegmentFiles]) -> list[SegmentFiles]:
    """The remote segments (ascending start offset), then the local ones; ``read_history`` skips what an
    earlier segment already gave."""
    return [s for s in (*sorted(remote, key=lambda s: s.base_offset), *local) if s.log is not None]


def read_history(segments: list[SegmentFiles], isolation: str,
                 opener: Opener = ReadOnlyFile) -> Iterator[HistoryRecord]:
    """Every data record of ``segments`` in offset order, each offset once, as ``isolation`` shows them."""
    aborts = AbortedTransactions(_aborted(segments, opener))
    committed = isolation == READ_COMMITTED
    next_offset = -1
    for seg in segments:
        assert seg.log is not None
        with opener(seg.log) as file:
            batches = LogBatches(file)
            for batch in batches:
                if batch.last_offset < next_offset:
                    continue            # already read from the tier before
                records = [r for group in batches.iter_records(batch) for r in group]

                def abort_marker(records: list = records) -> bool:
                    try:
                        return bool(records) and parse_control_key(records[0].key) == ControlType.ABORT
                    except FormatError:
                        return False

                skip = aborts.is_aborted(batch, abort_marker)
                if batch.is_control or (committed and skip):
                    next_offset = batch.last_offset + 1
                    continue
                for record in records:
                    if record.offset >= next_offset:
                        value = record.value if record.value is None or isinstance(record.value, bytes) \
                            else bytes(record.value)
                        yield HistoryRecord(record.offset, record.key, value)
                next_offset = batch.last_offset + 1
