"""The transactions a broker finds open after it loads a partition, and what truncation did to them.

A broker rebuilds its producer state from the batches it keeps (UnifiedLog.rebuildProducerState over
storage/src/main/java/org/apache/kafka/storage/internals/log/ProducerStateManager.java, Kafka 4.3.0):
a transaction whose first batch is kept but whose COMMIT/ABORT marker was truncated away is open
again, and holds back the last stable offset until the coordinator ends it. ``replay_transactions``
replays the kept batches, then the lost ones, with ``BrokerStateObserver`` (the producer state rules
``kdump gen`` and ``recover --out`` write), and compares the open transactions at both ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kdump.broker.broker_files import BrokerStateObserver
from kdump.errors import KdumpError
from kdump.log.batches import LogBatches
from kdump.log.segment import ReadOnlyFile

# (segment base offset, .log path, first byte, end byte or None for the whole file)
SegmentPart = tuple[int, str, int, int | None]


@dataclass
class OpenTransaction:
    producer_id: int
    first_offset: int
    marker_lost: bool        # closed in the log before truncation: its marker is among the lost batches


@dataclass
class TransactionEffect:
    open_after: list[OpenTransaction] = field(default_factory=list)
    lost_open: list[tuple[int, int]] = field(default_factory=list)   # (producer id, first offset): all lost
    lost_producers: set[int] = field(default_factory=set)            # producers with a lost batch


def _open(observer: BrokerStateObserver) -> dict[int, int]:
    return {pid: p.txn_first_offset for pid, p in observer.producers.items() if p.txn_first_offset >= 0}


def _feed(observer: BrokerStateObserver, part: SegmentPart, seen: set[int] | None = None) -> None:
    base, path, start, end = part
    with ReadOnlyFile(path) as log:
        batches = LogBatches(log, start, end, check_crc=False)
        try:
            for batch in batches:
                observer.on_batch(batch._replace(position=0), batches.view(batch), base)
                if seen is not None and not batch.is_legacy and batch.producer_id >= 0:
                    seen.add(batch.producer_id)
        except KdumpError:
            pass    # what follows the last complete batch is not data (cut, garbage, padding)


def replay_transactions(kept: Sequence[SegmentPart], lost: Sequence[SegmentPart]) -> TransactionEffect:
    """The open transactions after loading ``kept``, and what losing ``lost`` (in log order) changed."""
    observer = BrokerStateObserver(snapshots=False)
    for part in kept:
        _feed(observer, part)
    after = _open(observer)
    effect = TransactionEffect()
    for part in lost:
        _feed(observer, part, effect.lost_producers)
    before = _open(observer)
    effect.open_after = [OpenTransaction(pid, first, before.get(pid) != first) for pid, first in sorted(after.items())]
    effect.lost_open = sorted((pid, first) for pid, first in before.items() if after.get(pid) != first)
    return effect
