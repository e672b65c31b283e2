"""Index rules, checked while the log is walked once: each checker is fed the batches in order.

The rules check what Kafka's lookups rely on, not the dump tool's strict comparison, which raises
false alarms on healthy data:

* followers before Kafka 4.1 indexed (last offset of a fetched chunk, position of its first batch);
* the log cleaner writes its own entries the same chunked way;
* time-index entries may name the record with the largest timestamp, inside a batch;
* live and crashed segments carry preallocated zero padding.

Strict mode is Kafka's ``--verify-index-only``: an offset entry must name the last offset of the
batch at its position, a time entry the last offset of a batch; those layouts become errors.

Entries are read from the index file a window at a time, in slot order, beside the batches: a
healthy index is sorted by position and offset, so each entry is settled when the walk reaches the
batch it names. An out-of-order entry is an error by itself and is looked up on its own
(``batch_at``). Memory does not grow with the log: only entries waiting for their batch are held.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from kdump.errors import KdumpError
from kdump.findings import ERROR, NOTE, Finding
from kdump.format.batch import Batch
from kdump.log.batches import batch_at
from kdump.log.index_builder import InvalidOffsetError, SegmentIndexBuilder
from kdump.log.indexes import OffsetIndex, TimeIndex
from kdump.log.segment import FileChangedError

_NEVER = 2**63


def describe(batch: Batch) -> str:
    return f"batch at position {batch.position} holds offsets {batch.base_offset}..{batch.last_offset}"


def check_size(path: str, size: int, entry_size: int) -> Iterator[Finding]:
    if size % entry_size:
        yield Finding(ERROR, "index-size", path, f"{size} bytes is not a multiple of {entry_size} (Kafka's sanity "
                                                 f"check fails; the trailing {size % entry_size} bytes are ignored)")


def check_padding(path: str, index: OffsetIndex | TimeIndex, *, active: bool = False) -> Iterator[Finding]:
    if not index.padding_slots:
        return
    if index.padding_is_zero() or (active and zero_after_appends(index)):
        yield Finding(NOTE, "padding", path, f"preallocated, {index.entries} valid entries then {index.padding_slots} "
                                             f"zero slots (active segment, or the broker stopped without "
                                             f"closing it)", entry=index.entries)
    else:
        entry = index.entry(index.entries)
        yield Finding(ERROR, "padding-not-zero", path, "an entry with relative offset 0 after the first slot ends "
                      "the entries, but non-zero bytes follow it (Kafka's lookups read them as entries)",
                      entry=index.entries, offset=entry.offset)


def zero_after_appends(index: OffsetIndex | TimeIndex) -> bool:
    """Whether the slots after the counted entries are entries a broker wrote since, then zeros.

    A broker fills the zero slots of the active segment's preallocated index in order while kdump
    reads it, so a later read sees some of them written: read again from the first zero slot until
    the rest is zero (True) or a zero slot is followed by non-zero bytes that are not appends (False).
    """
    size = index.entry_size
    slot = index.entries
    while slot < index.slots:
        for s, a, b in index.raw_entries(slot, index.slots):
            if a == 0 and b == 0:
                slot = s
                break
            if index._is_padding(s, a, b):
                return False          # relative offset 0 with other bytes set: not an append
        else:
            return True
        if index.file.is_zero(slot * size, index.slots * size):
            return True
        a, b = index._unpack(slot)
        if a == 0 and b == 0:
            return False              # still zero here, yet bytes after it are not
    return True


class OffsetIndexChecker:
    """Every entry must let a lookup start at a batch boundary no later than the target's batch."""

    def __init__(self, index: OffsetIndex, log: Any, *, strict: bool = False) -> None:
        self.path = index.path or ""
        self.base = index.base_offset
        self.log = log
        self.strict = strict
        self._entries = index.raw_entries()
        self._next: tuple[int, int, int] | None = None   # (slot, offset, position) not yet reached
        self._waiting: deque[tuple[int, int, int, Batch]] = deque()  # offsets above their batch's last
        self._prev_offset = self._prev_position = -1
        self.unchecked = 0

    def _refresh(self) -> None:
        """``due_position``: the first batch position at which ``on_batch`` has something to settle."""
        if self._waiting:
            self.due_position = -1
        else:
            self.due_position = self._next[2] if self._next is not None else _NEVER

    def _pull(self) -> Iterator[Finding]:
        """Take the next in-order entry into ``_next``; out-of-order ones are settled on their own."""
        for slot, relative, p in self._entries:
            o = self.base + relative
            in_order = True
            if relative < 0:
                yield Finding(ERROR, "offset-below-base", self.path, f"offset is below the base offset {self.base}",
                              slot, o, p)
                in_order = False
            elif slot and o <= self._prev_offset:
                yield Finding(ERROR, "offset-not-increasing", self.path,
                              f"offset is not above the previous entry's {self._prev_offset}", slot, o, p)
            if slot and p <= self._prev_position:
                yield Finding(ERROR, "position-not-increasing", self.path,
                              f"position is not above the previous entry's {self._prev_position}", slot, o, p)
                in_order = False
            self._prev_offset, self._prev_position = o, p
            if p < 0 or p > self.log.size:
                yield Finding(ERROR, "position-past-log", self.path,
                              f"position is outside the log ({self.log.size} bytes)", slot, o, p)
                continue
            if in_order:
                self._next = (slot, o, p)
                return
            yield from self._alone(slot, o, p)
        self._next = None

    def _alone(self, slot: int, o: int, p: int) -> Iterator[Finding]:
        try:
            batch = batch_at(self.log, p, check_crc=True)
        except FileChangedError:
            raise
        except KdumpError:
            batch = None
        if batch is None or not batch.is_valid:
            yield Finding(ERROR, "position-not-batch", self.path, "position is not the start of a batch", slot, o, p)

    def start(self) -> Iterator[Finding]:
        yield from self._pull()
        self._refresh()

    def on_batch(self, batch: Batch, prev_last: int | None, prev_batch: Batch | None) -> Iterator[Finding]:
        while self._waiting and self._waiting[0][1] <= batch.last_offset:
            yield self._follower_layout(*self._waiting.popleft())
        while self._next is not None and self._next[2] <= batch.position:
            slot, o, p = self._next
            if p < batch.position:
                inside = prev_batch
                yield Finding(ERROR, "position-not-batch", self.path, "position is not the start of a batch",
                              slot, o, p, log_says=describe(inside) if inside is not None else
                              f"before the first batch at position {batch.position}")
            elif o == batch.last_offset and (prev_last is None or o > prev_last):
                pass  # the leader layout: nothing to say
            elif prev_last is not None and o <= prev_last:
                yield Finding(ERROR, "offset-behind-position", self.path,
                              f"offset is not above the batches before this position: a lookup for offsets "
                              f"{o}..{prev_last} would start after them; Kafka's dump reports \"Index offset: "
                              f"{o}, log offset: {batch.last_offset}\"", slot, o, p,
                              log_says=f"the batch before this position ends at offset {prev_last}")
            elif o < batch.last_offset:
                yield self._follower_layout(slot, o, p, batch)
            else:
                self._waiting.append((slot, o, p, batch))  # settled once the log reaches offset o
            yield from self._pull()
        self._refresh()

    def _follower_layout(self, slot: int, o: int, p: int, batch: Batch) -> Finding:
        kafka = f"Kafka's dump reports \"Index offset: {o}, log offset: {batch.last_offset}\""
        if self.strict:
            return Finding(ERROR, "index-mismatch", self.path, f"offset is not the last offset of the batch at this "
                           f"position; {kafka}", slot, o, p, log_says=describe(batch))
        return Finding(NOTE, "offset-not-batch-last", self.path, f"not the last offset of the batch here (pre-4.1 "
                       f"follower or log-cleaner layout); {kafka}", slot, o, p, log_says=describe(batch))

    def finish(self, log_last: int | None, valid_end: int, broken: bool) -> Iterator[Finding]:
        """After the walk: entries past the log's last offset or beyond its last complete batch."""
        for slot, o, p, _ in self._waiting:
            yield Finding(ERROR, "offset-past-log", self.path, f"offset is beyond the log's last offset {log_last}",
                          slot, o, p)
        self._waiting.clear()
        while self._next is not None:
            slot, o, p = self._next
            if broken:
                self.unchecked += 1
            else:
                yield Finding(ERROR, "position-not-batch", self.path, "position is not the start of a batch", slot,
                              o, p, log_says=f"the log's last complete batch ends at {valid_end}")
            yield from (f for f in self._pull() if not broken)


class TimeIndexChecker:
    """Each entry must hold the largest timestamp up to its offset, first reached in that batch."""

    def __init__(self, index: TimeIndex, *, strict: bool = False,
                 kafka_found: Callable[[int], int] | None = None) -> None:
        self.path = index.path or ""
        self.base = index.base_offset
        self.strict = strict
        # Strict mode: what Kafka's --verify-index-only finds for an entry's offset, starting where the
        # offset index points (a corrupt .index makes it find another batch, and Kafka reports that).
        self.kafka_found = kafka_found
        self.index = index
        self._entries = index.raw_entries()
        self._next: tuple[int, int, int] | None = None   # (slot, timestamp, offset)
        self._prev_ts = self._prev_offset = 0
        self.unchecked = 0

    def _refresh(self) -> None:
        """``due_offset``: the last offset from which ``on_batch`` has something to settle."""
        self.due_offset = self._next[2] if self._next is not None else _NEVER

    def _pull(self) -> Iterator[Finding]:
        for slot, t, relative in self._entries:
            o = self.base + relative
            if relative < 0:
                yield Finding(ERROR, "offset-below-base", self.path, f"offset is below the base offset {self.base}",
                              slot, o, timestamp=t)
                continue
            if slot and t <= self._prev_ts:
                yield Finding(ERROR, "timestamp-not-increasing", self.path,
                              f"timestamp is not above the previous entry's {self._prev_ts}", slot, o, timestamp=t)
            decreasing = slot and o < self._prev_offset
            if decreasing:
                yield Finding(ERROR, "offset-decreasing", self.path,
                              f"offset is below the previous entry's {self._prev_offset}", slot, o, timestamp=t)
            self._prev_ts, self._prev_offset = t, o
            if not decreasing:
                self._next = (slot, t, o)
                return
        self._next = None

    def start(self) -> Iterator[Finding]:
        yield from self._pull()
        self._refresh()

    def on_batch(self, batch: Batch, max_before: int, max_after: int, first: bool) -> Iterator[Finding]:
        """``max_before``/``max_after``: the largest timestamp of the log before/through this batch."""
        while self._next is not None and self._next[2] <= batch.last_offset:
            slot, t, o = self._next
            if max_after != t:
                yield Finding(ERROR, "timestamp-not-max", self.path,
                              f"timestamp is not the largest timestamp of the records up to offset {o}", slot, o,
                              timestamp=t, log_says=f"largest timestamp up to the {describe(batch)} is {max_after}")
            elif not first and max_before >= t:
                yield Finding(ERROR, "timestamp-reached-earlier", self.path,
                              f"the log reaches timestamp {t} before offset {o}: a lookup for it would skip records",
                              slot, o, timestamp=t,
                              log_says=f"largest timestamp before the {describe(batch)} is {max_before}")
            elif self.strict and self.kafka_found is not None:
                found = self.kafka_found(o)
                if found != o:
                    yield Finding(ERROR, "index-mismatch", self.path, f"offset is not the last offset of the batch "
                                  f"Kafka's lookup finds; Kafka's dump reports \"Indexed offset: {o}, found log "
                                  f"offset: {found}\"", slot, o, timestamp=t, log_says=describe(batch))
            elif o != batch.last_offset:
                kafka = f"Kafka's dump reports \"Indexed offset: {o}, found log offset: {batch.last_offset}\""
                if self.strict:
                    yield Finding(ERROR, "index-mismatch", self.path, f"offset is not the last offset of a batch; "
                                  f"{kafka}", slot, o, timestamp=t, log_says=describe(batch))
                else:
                    yield Finding(NOTE, "offset-inside-batch", self.path, f"points inside a batch (at the record "
                                  f"with the largest timestamp); {kafka}", slot, o, timestamp=t,
                                  log_says=describe(batch))
            yield from self._pull()
        self._refresh()

    def finish(self, log_last: int | None, largest: int, rolled: bool, broken: bool) -> Iterator[Finding]:
        while self._next is not None:
            slot, t, o = self._next
            if broken:
                self.unchecked += 1
            else:
                says = f"the log's last offset is {log_last}" if log_last is not None else "the log holds no batch"
                yield Finding(ERROR, "offset-past-log", self.path, f"offset is beyond the end of the log; Kafka's "
                              f"dump reports \"Indexed offset: {o}, found log offset: -1\"", slot, o,
                              timestamp=t, log_says=says)
            yield from (f for f in self._pull() if not broken)
        if rolled and not broken and largest >= 0:
            last = self.index.last_entry()
            if last is None or last.timestamp < largest:
                held = "no entry" if last is None else f"last entry has {last.timestamp}"
                yield Finding(NOTE, "time-index-no-roll-entry", self.path,
                              f"the segment's largest timestamp {largest} is not in the time index ({held}); Kafka "
                              f"then chooses segments for ListOffsets by the .log's mtime or misses this one")


FETCH_BYTES = 1024 * 1024
"""replica.fetch.max.bytes' default (ReplicationConfigs, Kafka 4.3.0): a follower before Kafka 4.1 appended
what one fetch brought, up to this much (a larger batch alone), with one index test per append."""


class OffsetIndexDensity:
    """``--deep``: whether a segment's offset index holds as many entries as a broker writes for its batches.

    LogSegment.append (Kafka 4.3.0) adds an entry at a batch only when MORE than index.interval.bytes were
    appended since the last entry (``bytesSinceLastIndexEntry > indexIntervalBytes``; the first batch never
    gets one), and LogSegment.recover rebuilds an index by the same rule; before Kafka 4.1 the test was
    made once per append (a produce request, a follower's fetch, a cleaner's chunk), which only spaces the
    entries further. So the most entries are those of the rule applied at every batch (the entries
    LogSegment.recover appends, kdump.log.index_builder), and more is an index no broker wrote with that
    interval. The fewest: an entry at least every interval plus one append, twice that across a broker
    restart (a reopened segment counts from zero again); far fewer than that is noted too.
    """

    def __init__(self, base_offset: int, interval: int) -> None:
        self.interval = interval
        self._densest = SegmentIndexBuilder(base_offset, interval, None, keep_entries=False)
        self.largest_batch = 0

    def add(self, batch: Batch) -> None:
        """The next batch of the segment, in file order."""
        try:
            self._densest.add_batch(batch.last_offset, batch.position, batch.size, batch.max_timestamp)
        except InvalidOffsetError:
            pass    # batches out of order: the offset rules report them
        if batch.size > self.largest_batch:
            self.largest_batch = batch.size

    @property
    def most(self) -> int:
        """The entries of the densest index a broker writes for the batches so far."""
        return self._densest.offset_count

    def least(self, valid_end: int) -> int:
        """The fewest entries a broker writes for ``valid_end`` bytes: n + 1 stretches without an entry
        (before the first, between, after the last), none longer than ``2 x (interval + one append)``."""
        stretch = 2 * (self.interval + max(self.largest_batch, FETCH_BYTES))
        return max(-(-valid_end // stretch) - 1, 0)

    def findings(self, path: str, entries: int, valid_end: int, batches: int) -> Iterator[Finding]:
        if not batches:
            return
        said = f"{entries} entries for {valid_end} bytes of log (average batch {valid_end / batches:.0f} bytes)"
        interval, least = self.interval, self.least(valid_end)
        if entries > self.most:
            yield Finding(NOTE, "density", path, f"{said}, more than the {self.most} a broker writes with "
                          f"index.interval.bytes={interval} (an entry only after more than {interval} bytes since "
                          f"the last one): the topic's interval is smaller (--index-interval-bytes), or no broker "
                          f"wrote this index")
        elif entries < least:
            append = max(self.largest_batch, FETCH_BYTES)
            yield Finding(NOTE, "density", path, f"{said}, fewer than the {least} a broker writes at least with "
                          f"index.interval.bytes={interval} (an entry at least every 2 x ({interval} + {append}) "
                          f"bytes: the interval and one append, twice across a restart)")
