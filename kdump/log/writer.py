"""Writing a partition's segments the way a broker does: append, sparse indexes, roll (LogSegment).

``PartitionLog`` appends encoded entries (``kdump.format.encode``) to the active segment, keeps
the offset and time index with ``SegmentIndexBuilder`` and rolls by Kafka's ``shouldRoll``:

1. ``size > segment.bytes - incoming`` (strict, so a batch that exactly fills the segment stays);
2. non-empty segment and ``max timestamp of the incoming data - first batch's timestamp >
   segment.ms`` (record time, never the wall clock; no roll jitter);
3. offset index full or time index full;
4. the incoming last offset does not fit a non-negative int32 relative to the base offset.

Crash safety: the active segment's data lives under ``<name>.log.tmp`` until the segment is
finished; all-or-nothing output comes from writing the partition directories inside
``kdump.log.atomic.staged_directory``, which renames the whole tree into place only when it is
complete (what ``kdump gen`` does).
"""

from __future__ import annotations

import os
from contextlib import suppress
from dataclasses import dataclass
from typing import BinaryIO

from kdump.errors import UsageError
from kdump.format.batch import INT32_MAX, Batch, scan_batches
from kdump.format.index import DEFAULT_MAX_INDEX_BYTES
from kdump.log.atomic import write_new_file
from kdump.log.files import segment_file_name
from kdump.log.index_builder import DEFAULT_INDEX_INTERVAL_BYTES, SegmentIndexBuilder

DEFAULT_SEGMENT_BYTES = 1024 * 1024 * 1024
DEFAULT_SEGMENT_MS = 7 * 24 * 60 * 60 * 1000
TMP_SUFFIX = ".tmp"


@dataclass(frozen=True, slots=True)
class LogConfig:
    """The topic configs that shape a segment on disk."""

    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    segment_ms: int = DEFAULT_SEGMENT_MS
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES
    max_index_bytes: int = DEFAULT_MAX_INDEX_BYTES        # segment.index.bytes
    preallocate: bool = False                             # Kafka's `preallocate`: .log sized to segment.bytes
    per_append_index: bool = False                        # Kafka <= 4.0 leader rule instead of per batch

    def __post_init__(self) -> None:
        if self.segment_bytes < 14:
            raise UsageError(f"segment.bytes must be at least 14, not {self.segment_bytes}")
        if self.segment_ms < 1:
            raise UsageError(f"segment.ms must be at least 1, not {self.segment_ms}")
        if self.index_interval_bytes < 0:
            raise UsageError("index.interval.bytes must be >= 0")
        if self.max_index_bytes < 24:
            raise UsageError(f"segment.index.bytes must be at least 24, not {self.max_index_bytes}")


class LogObserver:
    """Hooks for broker state kept beside the segments (producer snapshots, txn index). No-ops here."""

    def on_batch(self, batch: Batch, data: bytes | memoryview, segment_base: int) -> None:
        """``batch`` was appended; its bytes are ``data[batch.position:batch.end]``."""

    def on_segment_finished(self, directory: str, base_offset: int) -> None:
        """The segment's files were written (roll, or close)."""

    def on_roll(self, directory: str, new_base_offset: int) -> None:
        """A new segment starts at ``new_base_offset`` (the broker takes a producer snapshot here)."""


class _ActiveSegment:
    def __init__(self, directory: str, base_offset: int, config: LogConfig) -> None:
        self.base_offset = base_offset
        self.index = SegmentIndexBuilder(base_offset, config.index_interval_bytes, config.max_index_bytes)
        self.log_path = os.path.join(directory, segment_file_name(base_offset, ".log"))
        self.file: BinaryIO = open(self.log_path + TMP_SUFFIX, "wb")  # noqa: SIM115 (closed at roll)
        self.size = 0
        self.rolling_timestamp: int | None = None   # first batch's max timestamp (segment.ms rule)


class PartitionLog:
    """One partition directory being written. Not thread-safe; call ``close`` (or use ``with``)."""

    def __init__(self, directory: str, config: LogConfig | None = None, *, observer: LogObserver | None = None) -> None:
        self.directory = directory
        self.config = config or LogConfig()
        self.observer = observer or LogObserver()
        os.makedirs(directory, exist_ok=True)
        self.segments_written = 0
        self.log_end_offset = 0
        self._active: _ActiveSegment | None = _ActiveSegment(directory, 0, self.config)

    # -- appending ------------------------------------------------------------------------------
    def append(self, data: bytes) -> list[Batch]:
        """Append one or more complete entries (one produce request's records) and return their headers.

        Positions in the returned headers are positions in the segment file.
        """
        batches = list(scan_batches(data, check_crc=False))
        if not batches or batches[-1].end != len(data):
            raise UsageError("append() needs whole log entries")
        if len(data) > self.config.segment_bytes:
            # Kafka's RecordBatchTooLargeException: no segment could ever hold it.
            raise UsageError(f"a batch of {len(data)} bytes does not fit segment.bytes={self.config.segment_bytes}")
        active = self._require_active()
        last_offset = max(b.last_offset for b in batches)
        max_ts = max(b.max_timestamp for b in batches)
        if self._should_roll(active, len(data), max_ts, last_offset):
            # New base offset = max(first offset of the incoming data, log end offset); legacy
            # wrappers only name their last offset, so the log end offset is the bound for them.
            first = batches[0].base_offset if not batches[0].is_legacy or batches[0].codec_id == 0 \
                else self.log_end_offset
            active = self.roll(max(first, self.log_end_offset))
        if last_offset - active.base_offset > INT32_MAX or batches[0].base_offset < active.base_offset:
            raise UsageError(f"offset {last_offset} cannot be stored in the segment at {active.base_offset}")
        start = active.size
        active.file.write(data)
        placed = [_moved(b, start) for b in batches]
        if self.config.per_append_index:
            active.index.add_append([(b.last_offset, b.position, b.size, b.max_timestamp) for b in placed])
        else:
            for b in placed:
                active.index.add_batch(b.last_offset, b.position, b.size, b.max_timestamp)
        if active.rolling_timestamp is None:
            active.rolling_timestamp = batches[0].max_timestamp
        active.size += len(data)
        self.log_end_offset = max(self.log_end_offset, last_offset + 1)
        for b in batches:
            # Positions here are within ``data``, so the observer can decode records from it.
            self.observer.on_batch(b, data, active.base_offset)
        return placed

    def _should_roll(self, active: _ActiveSegment, incoming: int, max_ts: int, last_offset: int) -> bool:
        cfg = self.config
        if active.size == 0:
            return False  # Kafka re-creates an empty segment at the same offset: nothing changes
        if active.size > cfg.segment_bytes - incoming:
            return True
        if active.rolling_timestamp is not None and active.rolling_timestamp >= 0 \
                and max_ts - active.rolling_timestamp > cfg.segment_ms:
            return True
        if active.index.is_full:
            return True
        return not 0 <= last_offset - active.base_offset <= INT32_MAX

    # -- rolling and closing --------------------------------------------------------------------
    def roll(self, base_offset: int) -> _ActiveSegment:
        """Finish the active segment (trimmed) and start a new one at ``base_offset``."""
        self._finish(self._require_active(), live=False)
        self.observer.on_roll(self.directory, base_offset)
        self._active = _ActiveSegment(self.directory, base_offset, self.config)
        return self._active

    def close(self, *, live: bool = False) -> None:
        """Finish the active segment.

        ``live=False`` is a clean shutdown: final time-index entry, indexes trimmed. ``live=True``
        leaves it as a running (or crashed) broker has it: indexes zero-padded to
        segment.index.bytes, no final time-index entry, and with ``preallocate`` the ``.log``
        zero-padded to segment.bytes.
        """
        if self._active is not None:
            self._finish(self._active, live=live)
            self._active = None

    def abort(self) -> None:
        """Drop the active segment's temporary file (used when a run fails)."""
        if self._active is not None:
            self._active.file.close()
            with suppress(FileNotFoundError):
                os.remove(self._active.log_path + TMP_SUFFIX)
            self._active = None

    def __enter__(self) -> PartitionLog:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    @property
    def active_base_offset(self) -> int | None:
        return None if self._active is None else self._active.base_offset

    def _require_active(self) -> _ActiveSegment:
        if self._active is None:
            raise UsageError("the log is closed")
        return self._active

    def _finish(self, seg: _ActiveSegment, *, live: bool) -> None:
        cfg = self.config
        index = seg.index
        if live:
            offset_data = index.offset_index_bytes(pad_to=cfg.max_index_bytes)
            time_data = index.time_index_bytes(pad_to=cfg.max_index_bytes)
            if cfg.preallocate and seg.size < cfg.segment_bytes:
                seg.file.write(bytes(cfg.segment_bytes - seg.size))
        else:
            index.close()
            offset_data = index.offset_index_bytes()
            time_data = index.time_index_bytes()
        seg.file.close()
        base = seg.log_path[:-len(".log")]
        write_new_file(base + ".index", offset_data)
        write_new_file(base + ".timeindex", time_data)
        os.replace(seg.log_path + TMP_SUFFIX, seg.log_path)
        self.segments_written += 1
        self.observer.on_segment_finished(self.directory, seg.base_offset)


def _moved(batch: Batch, delta: int) -> Batch:
    """The same header at another position (the positions scan_batches gave are in the append)."""
    if not delta:
        return batch
    return batch._replace(position=batch.position + delta)


__all__ = ["LogConfig", "LogObserver", "PartitionLog"]
