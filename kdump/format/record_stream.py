"""Decoding a compressed v2 batch's records from a stream of decompressed chunks.

A compressed batch can inflate to gigabytes (a few kilobytes of zstd hold twenty million records,
or one 2 GB value), so its records are never decoded from one buffer holding all of them. The
decompressed bytes arrive in chunks of at most ``CHUNK_SIZE``; records are decoded a group at a
time from a window over them, and a record cut by a chunk boundary is carried into the next
window. A record too large for the window is read field by field, and when the caller does not
need values (deep iteration prints sizes only), a large value is kept as a ``LazyValue``: its size,
and the means to read it again.

Like Kafka's DefaultRecord.readFrom(DataInput), a record is read within its declared length:
a field running past it is "Found invalid record structure", a stream ending inside it is
"Incorrect declared batch size, premature EOF reached".
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator

from kdump.errors import InvalidRecordError
from kdump.format.batch import Batch, increment_sequence
from kdump.format.varint import decode_uvarint

Buffer = bytes | bytearray | memoryview

GROUP_SIZE = 4096
"""Records decoded and handed out at a time."""

WINDOW_RECORD_LIMIT = 1 << 20
"""Records up to this size are assembled whole in the window; larger ones are read field by field."""

LAZY_VALUE_MIN = 1 << 20
"""Values at least this large become ``LazyValue``s when the caller does not need values."""

PREMATURE_EOF = "Incorrect declared batch size, premature EOF reached"
INVALID_STRUCTURE = "Found invalid record structure"
RECORDS_REMAINING = "Incorrect declared batch size, records still remaining in file"

_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF


def wrap64(value: int) -> int:
    """Java ``long`` arithmetic: the low 64 bits as a signed number."""
    value &= _M64
    return value - (1 << 64) if value >> 63 else value


class LazyValue:
    """A record value that was not read into memory: ``len()`` is its size, ``bytes()`` reads it."""

    __slots__ = ("_offset", "_reopen", "_size")

    def __init__(self, reopen: Callable[[], Iterator[Buffer]], offset: int, size: int) -> None:
        self._reopen = reopen   # a fresh iterator over the batch's decompressed chunks
        self._offset = offset   # where the value starts in the decompressed stream
        self._size = size

    def __len__(self) -> int:
        return self._size

    def chunks(self) -> Iterator[bytes]:
        """The value in pieces, decompressing the batch again up to its end."""
        skip, left = self._offset, self._size
        for chunk in self._reopen():
            if skip >= len(chunk):
                skip -= len(chunk)
                continue
            piece = bytes(chunk[skip:skip + left])
            skip = 0
            left -= len(piece)
            yield piece
            if not left:
                return
        raise InvalidRecordError(PREMATURE_EOF)

    def __bytes__(self) -> bytes:
        out = io.BytesIO()
        for piece in self.chunks():
            out.write(piece)
        return out.getvalue()

    def __repr__(self) -> str:
        return f"LazyValue(size={self._size})"


class ChunkReader:
    """A window over a chunk stream: ``data[pos:]`` is what has been decompressed and not yet read."""

    def __init__(self, chunks: Iterator[Buffer]) -> None:
        self._chunks = chunks
        self.data: bytes = b""
        self.pos = 0
        self.base = 0  # stream offset of data[0]

    @property
    def offset(self) -> int:
        return self.base + self.pos

    def more(self) -> bool:
        """Add the next chunk to the window (dropping what was read); False at the end of the stream."""
        chunk = next(self._chunks, None)
        if chunk is None:
            return False
        rest = self.data[self.pos:]
        self.base += self.pos
        self.pos = 0
        self.data = rest + chunk if rest else bytes(chunk)
        return True

    def need(self, n: int) -> bool:
        """At least ``n`` unread bytes in the window; False if the stream ends first."""
        while len(self.data) - self.pos < n:
            if not self.more():
                return False
        return True

    def at_end(self) -> bool:
        return not self.need(1)

    def take(self, n: int) -> bytes:
        """The next ``n`` bytes (the caller checked they belong to the record)."""
        if n <= WINDOW_RECORD_LIMIT:
            if not self.need(n):
                raise InvalidRecordError(PREMATURE_EOF)
            piece = self.data[self.pos:self.pos + n]
            self.pos += n
            return piece
        out = io.BytesIO()  # no second copy: getvalue() hands over the buffer it filled
        for part in self._pieces(n):
            out.write(part)
        return out.getvalue()

    def skip(self, n: int) -> None:
        for _ in self._pieces(n):
            pass

    def _pieces(self, n: int) -> Iterator[Buffer]:
        while n:
            if self.pos >= len(self.data) and not self.more():
                raise InvalidRecordError(PREMATURE_EOF)
            piece = memoryview(self.data)[self.pos:self.pos + n]
            self.pos += len(piece)
            n -= len(piece)
            yield piece
            piece.release()

    def uvarint(self, max_bytes: int) -> int:
        """An unsigned varint, wrapped like Kafka's ByteUtils (see ``varint.decode_uvarint``)."""
        if not self.need(max_bytes):
            self.need(1)  # near the end of the stream: decode from what there is
        value, self.pos = decode_uvarint(self.data, self.pos, max_bytes)
        return value

    def varint(self) -> int:
        u = self.uvarint(5) & _M32
        return (u >> 1) ^ -(u & 1)

    def varlong(self) -> int:
        u = self.uvarint(10) & _M64
        return (u >> 1) ^ -(u & 1)


def next_record_length(reader: ChunkReader) -> tuple[int, int] | None:
    """(length field, bytes of the length field) of the record at the reader's position, without
    moving it; None at the end of the stream."""
    if not reader.need(5):
        if reader.at_end():
            return None
    try:
        u, after = decode_uvarint(reader.data, reader.pos)
    except InvalidRecordError as err:
        if "runs past the end" in err.reason:
            raise InvalidRecordError(PREMATURE_EOF) from None
        raise
    u &= _M32
    return (u >> 1) ^ -(u & 1), after - reader.pos


def read_large_record(reader: ChunkReader, batch: Batch, *, values: bool,
                      reopen: Callable[[], Callable[[], Iterator[Buffer]]]) -> tuple:
    """One record larger than the window, read field by field; the reader is at its length field.

    Returns the fields of a ``Record`` as a tuple (the caller builds the record).
    """
    length = reader.varint()
    start = reader.offset
    end = start + length

    def room(n: int) -> None:
        if n > end - reader.offset:
            _fail(reader, end, INVALID_STRUCTURE)

    room(1)
    reader.take(1)  # attributes: unused
    ts_delta = reader.varlong()
    offset_delta = reader.varint()
    room(0)
    key = _bytes_field(reader, room, materialize=True, reopen=reopen)
    value = _bytes_field(reader, room, materialize=values, reopen=reopen)
    header_count = reader.varint()
    room(0)
    if header_count < 0:
        _fail(reader, end, f"Found invalid number of record headers {header_count}")
    if header_count > end - reader.offset:
        _fail(reader, end, f"Found invalid number of record headers {header_count}: more than the bytes left")
    headers = []
    for _ in range(header_count):
        n = reader.varint()
        if n < 0:
            _fail(reader, end, f"Invalid negative header key size {n}")
        room(n)
        hkey = reader.take(n)
        hval = _bytes_field(reader, room, materialize=True, reopen=reopen)
        headers.append((hkey, hval))
    if reader.offset != end:
        _fail(reader, end, f"Invalid record size: expected to read {length} bytes in record payload, "
                           f"but instead read {reader.offset - start}")
    log_append = batch.log_append_time
    timestamp = wrap64(batch.base_timestamp + ts_delta) if log_append is None else log_append
    sequence = -1 if batch.base_sequence < 0 else increment_sequence(batch.base_sequence, offset_delta)
    return (wrap64(batch.base_offset + offset_delta), timestamp, key, value, tuple(headers), sequence, None, None)


def _bytes_field(reader: ChunkReader, room: Callable[[int], None], *, materialize: bool,
                 reopen: Callable[[], Callable[[], Iterator[Buffer]]]) -> bytes | LazyValue | None:
    n = reader.varint()
    if n < 0:
        return None
    room(n)
    if materialize or n < LAZY_VALUE_MIN:
        return reader.take(n)
    lazy = LazyValue(reopen(), reader.offset, n)
    reader.skip(n)
    return lazy


def _fail(reader: ChunkReader, end: int, reason: str) -> None:
    # Kafka reads the whole record body before parsing it: a stream too short for it is the error.
    if end > reader.offset:
        reader.skip(end - reader.offset)
    raise InvalidRecordError(reason)


def stream_v2_records(chunks: Iterator[Buffer], count: int, batch: Batch,
                      decode_group: Callable[[bytes, int, int], tuple[list, int, Exception | None]], *,
                      values: bool,
                      reopen: Callable[[], Callable[[], Iterator[Buffer]]], new_record: Callable[[tuple], object],
                      group_size: int = GROUP_SIZE) -> Iterator[list]:
    """The ``count`` records of a compressed batch in groups of at most ``group_size``.

    ``reopen()`` returns what a ``LazyValue`` calls to read the batch again. ``decode_group(data, start, n)``
    decodes up to ``n`` whole records of ``data`` from ``start`` (stopping before one the window does
    not hold entirely) and returns them with the next position, and the error that stopped it, if any
    (then the records are those before the failing one).
    """
    reader = ChunkReader(chunks)
    reader.more()  # the first chunk, which holds the whole of most batches
    left = count
    while left:
        records, pos, error = decode_group(reader.data, reader.pos, min(left, group_size))
        reader.pos = pos
        if error is not None:
            if records:  # Kafka prints the records before the one that fails
                yield records
            raise error
        if records:
            left -= len(records)
            yield records
            continue
        # The next record is not whole in the window: widen the window, or read it as a stream.
        field = next_record_length(reader)
        if field is None:
            raise InvalidRecordError(PREMATURE_EOF)
        length, field_size = field
        if length > WINDOW_RECORD_LIMIT:
            left -= 1
            yield [new_record(read_large_record(reader, batch, values=values, reopen=reopen))]
        elif not reader.need(field_size + max(length, 0)):
            raise InvalidRecordError(PREMATURE_EOF)
    # Kafka reads one more byte after the declared records: any byte at all is an error.
    if not reader.at_end():
        raise InvalidRecordError(RECORDS_REMAINING)
