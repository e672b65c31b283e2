"""The batches of a ``.log`` (or KRaft ``.checkpoint``) read through one bounded window.

``LogBatches`` gives exactly what ``kdump.format.batch.scan_batches`` gives over the whole file
(Kafka's framing rules: stop at a tail of 17 bytes or fewer or at an entry that runs past the end,
fail on a size field below 14), with file positions, while holding at most one window of the file:

* the window starts at ``WINDOW_BYTES`` and grows to hold one entry of up to ``MAX_HELD_ENTRY_BYTES``;
* a larger entry (a corrupt size field, or a huge ``max.message.bytes``) is never held: its CRC is
  computed a window at a time, and so are its records read when a caller asks for them (a v2 batch,
  compressed ones decompressed as they are read; a v0/v1 wrapper is still read whole, and so is a
  malformed uncompressed batch, for Kafka's error, see ``_stream_held``);
* ``records(batch)`` decodes the batch that was just yielded, from the window, so a deep dump costs
  one read of the log.

The window is reused: a batch's bytes (``view``) and records are valid until the next batch is
requested. A file that shrinks under the reader raises ``FileChangedError`` (from ``ReadOnlyFile``).
"""

from __future__ import annotations

from collections.abc import Iterator

from kdump.errors import CorruptRecordError, FormatError
from kdump.format.batch import (
    FRAMING,
    LEGACY_CRC_START,
    LOG_OVERHEAD,
    MIN_RECORD_OVERHEAD,
    V2_ATTRIBUTES_OFFSET,
    V2_HEADER_SIZE,
    Batch,
    read_batch,
    scan_batch_runs,
)
from kdump.format.crc import crc32, crc32c
from kdump.format.records import (
    Record,
    count_records,
    decode_records,
    iter_records,
    stream_held_v2_records,
)
from kdump.log.segment import ReadOnlyFile

WINDOW_BYTES = 1 << 20
PROBE_WINDOW_BYTES = 64 << 10   # batch_at, and scans expected to stop after a few batches
"""Bytes read per ``pread``: large enough that a call costs nothing per batch, small enough to stay in
the CPU cache while the CRC runs over it (measured in benchmarks/bench_dump.py)."""

MAX_HELD_ENTRY_BYTES = 16 << 20
"""The largest entry read whole into memory; larger ones are CRC-checked a window at a time."""


class LogBatches:
    """Iterate the complete entries of ``file`` in ``[start, end)``; see the module docstring.

    After the iteration, ``valid_end`` is the position after the last complete entry (the scan
    stopped there: end of file, a partial entry, zero padding, or the error that was raised), and
    ``zero_padding_from`` is where zero padding starts when the scan ended on it.
    """

    def __init__(self, file: ReadOnlyFile, start: int = 0, end: int | None = None, *,
                 check_crc: bool = True, window_bytes: int = WINDOW_BYTES) -> None:
        self.zero_padding_from: int | None = None
        self.padding_error: CorruptRecordError | None = None
        self.file = file
        self.start = start
        self.end = file.size if end is None else max(start, min(end, file.size))
        self.check_crc = check_crc
        self.valid_end = start
        # At least a v2 header's worth, so an oversized entry's header always fits.
        self._buf = bytearray(min(max(window_bytes, V2_HEADER_SIZE), max(0, self.end - start)))
        self._base = start          # file position of self._buf[0]
        self._held: Batch | None = None   # an oversized entry whose bytes are not in the window
        self._held_crc = 0                # the CRC its bytes have (when check_crc)

    def __iter__(self) -> Iterator[Batch]:
        """Raises CorruptRecordError where framing breaks, except at zero padding (see ``runs``)."""
        for run in self.runs():
            for batch in run:
                self.valid_end = batch.position + batch.size
                yield batch

    def runs(self) -> Iterator[list[Batch]]:
        """The batches a non-empty list at a time (``scan_batch_runs``): for a shallow reader, whose loop
        then runs per list. ``valid_end`` is the end of the list's last batch; ``records`` is not for these.
        Raises CorruptRecordError where framing breaks, except at zero padding (see below)."""
        try:
            for run in self._scan():
                last = run[-1]
                self.valid_end = last.position + last.size
                yield run
        except CorruptRecordError as err:
            # One rule for every command: a size field of 0 followed by nothing but zero bytes is the
            # preallocated (log.preallocate) or crashed active segment's tail, not corruption. Kafka's
            # dump tool dies there ("Found record size 0 ..."); its log recovery stops there too.
            if err.position is None or not self.file.is_zero(err.position, self.end):
                raise
            self.zero_padding_from = err.position
            self.padding_error = err

    def window(self) -> tuple[memoryview, int] | None:
        """The window holding the run ``runs`` just yielded, and the file position of its first byte (valid
        until the next run is requested); None when the run is an entry too large to hold."""
        if self._held is not None:
            return None
        return memoryview(self._buf), self._base

    def _scan(self) -> Iterator[list[Batch]]:
        file, end = self.file, self.end
        base = self.start
        buf = self._buf
        filled = file.read_into(memoryview(buf), base) if buf else 0
        while True:
            self._base = base
            done = 0
            for run in scan_batch_runs(buf, 0, filled, check_crc=self.check_crc, base=base):
                yield run
                last = run[-1]
                done = last.position + last.size - base
            position = base + done
            if base + filled >= end:
                return  # all of [start, end) was in the window: what is left is a partial tail
            tail = filled - done
            need = len(buf)          # unless the next entry's size says otherwise: refill the window
            oversized = False
            if tail >= LOG_OVERHEAD:
                size = FRAMING.unpack_from(buf, done)[1]
                if size >= MIN_RECORD_OVERHEAD:
                    if LOG_OVERHEAD + size > end - position:
                        return  # the entry runs past the end: a partial tail, as scan_batches stops
                    oversized = LOG_OVERHEAD + size > MAX_HELD_ENTRY_BYTES
                    if not oversized:
                        need = LOG_OVERHEAD + size
            if oversized and tail >= V2_HEADER_SIZE:   # its header is in the window: enough to go on
                need = LOG_OVERHEAD + size
                batch = self._oversized(buf, done, position, need)
                self._held = batch
                yield [batch]
                self._held = None
                base = position + need
                filled = file.read_into(memoryview(buf)[:min(len(buf), end - base)], base)
                continue
            if need > len(buf):
                grown = bytearray(need)
                grown[:tail] = buf[done:filled]
                self._buf = buf = grown
            else:
                buf[:tail] = bytes(buf[done:filled])
            base = position
            want = min(len(buf), end - base)
            filled = tail + file.read_into(memoryview(buf)[tail:want], base + tail)

    def _oversized(self, buf: bytearray, done: int, position: int, size: int) -> Batch:
        """The header of an entry too large to hold, its CRC computed a window at a time."""
        header = read_batch(buf, done, check_crc=False, base=self._base)
        if not self.check_crc:
            return header
        value = self._held_crc = self._crc_in_windows(header._replace(position=position, size=size))
        minimum = LOG_OVERHEAD + MIN_RECORD_OVERHEAD if header.is_legacy else V2_HEADER_SIZE
        return header._replace(is_valid=size >= minimum and value == header.crc)

    def _crc_in_windows(self, batch: Batch) -> int:
        """The CRC of the bytes ``batch``'s checksum covers, read from the file a window at a time
        (crc32c and crc32 take the running value, as Kafka's Checksums.update does). The window is the
        scratch buffer: an oversized entry is not in it, and the scan refills it after the entry."""
        legacy = batch.is_legacy
        pos = batch.position + (LEGACY_CRC_START if legacy else V2_ATTRIBUTES_OFFSET)
        stop = batch.position + batch.size
        crc_of = crc32 if legacy else crc32c
        value = 0
        view = memoryview(self._buf)
        while pos < stop:
            step = min(len(view), stop - pos)
            self.file.read_into(view[:step], pos)
            value = crc_of(view[:step], value)
            pos += step
        return value

    def computed_crc(self, batch: Batch) -> int:
        """The CRC the bytes of the batch just yielded really have (for an oversized entry, computed a
        window at a time, or remembered from the scan), to show beside the stored one."""
        if self._held is not None and batch.position == self._held.position:
            return self._held_crc if self.check_crc else self._crc_in_windows(batch)
        data = self.view(batch)
        return crc32(data[LEGACY_CRC_START:]) if batch.is_legacy else crc32c(data[V2_ATTRIBUTES_OFFSET:])

    def view(self, batch: Batch) -> memoryview:
        """The bytes of the batch just yielded (read from the file for an oversized entry)."""
        if self._held is not None and batch.position == self._held.position:
            return memoryview(self.file.read(batch.position, batch.size))
        start = batch.position - self._base
        return memoryview(self._buf)[start:start + batch.size]

    def iter_records(self, batch: Batch, *, values: bool = True) -> Iterator[list[Record]]:
        """The records of the batch just yielded, a group at a time (see format.records.iter_records).

        Valid, like the window, until the next batch is requested; so are lazy values.
        """
        if self._held is not None and batch.position == self._held.position and not batch.is_legacy:
            yield from self._stream_held(batch, values)
            return
        data = self.view(batch)
        try:
            yield from iter_records(data, batch._replace(position=0), values=values)
        except FormatError as err:
            err.position = batch.position
            raise

    def _stream_held(self, batch: Batch, values: bool) -> Iterator[list[Record]]:
        """The records of a v2 batch too large to hold, read from the file a window at a time (and
        decompressed as they are read); a large value stays a ``LazyValue`` that reads the file again,
        unless ``values``. Where an uncompressed batch is malformed it is read whole and decoded in
        place, as Kafka reads it, for Kafka's error; the records already given are not given again.
        A compressed batch needs no such second reading: Kafka reads it as a stream too."""
        start, stop = batch.position + V2_HEADER_SIZE, batch.position + batch.size

        def read() -> Iterator[bytes]:
            for position in range(start, stop, WINDOW_BYTES):
                yield self.file.read(position, min(WINDOW_BYTES, stop - position))

        given = 0
        try:
            for group in stream_held_v2_records(read, batch, values=values):
                given += len(group)
                yield group
            return
        except (FormatError, IndexError, ValueError, OverflowError):
            if batch.codec_id:
                raise
        data = memoryview(self.file.read(batch.position, batch.size))
        try:
            for group in iter_records(data, batch._replace(position=0), values=values):
                if given < len(group):
                    yield group[given:]
                given = max(0, given - len(group))
        except FormatError as err:
            err.position = batch.position
            raise

    def count_records(self, batch: Batch) -> int:
        """How many records the batch just yielded holds (decoded as a stream, none kept)."""
        try:
            return count_records(self.view(batch), batch._replace(position=0))
        except FormatError as err:
            err.position = batch.position
            raise

    def record_count(self, batch: Batch) -> int:
        """The records a batch holds: its header's count (v2), else its inner messages (a compressed v0/v1
        wrapper, decompressed to count them), else 1 (a v0/v1 message)."""
        if batch.records_count is not None:
            return batch.records_count
        return self.count_records(batch) if batch.codec_id else 1

    def records(self, batch: Batch) -> list[Record]:
        """The records of the batch just yielded; errors name file positions."""
        data = self.view(batch)
        try:
            return decode_records(data, batch._replace(position=0))
        except FormatError as err:
            err.position = batch.position
            raise


def batch_at(file: ReadOnlyFile, position: int, end: int | None = None, *,
             check_crc: bool = False) -> Batch | None:
    """The complete entry starting at ``position`` (before ``end``), or None when there is none.

    Raises FormatError when the bytes there cannot be an entry (size field below Kafka's minimum).
    A probe reads one small window (it grows for a larger entry), not the scan's.
    """
    for batch in LogBatches(file, position, end, check_crc=check_crc, window_bytes=PROBE_WINDOW_BYTES):
        return batch
    return None


def iter_records_at(file: ReadOnlyFile, batch: Batch) -> Iterator[list[Record]]:
    """The records of ``batch`` read from ``file`` on their own, a group at a time."""
    data = file.read(batch.position, batch.size)
    try:
        yield from iter_records(data, batch._replace(position=0))
    except FormatError as err:
        err.position = batch.position
        raise
