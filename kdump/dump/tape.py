"""A dump's stdout and stderr recorded in order to a temporary file, and played back later.

``--jobs`` dumps files in worker processes; each records what it would have written, and the parent
plays the recordings back in the order of the files, so the output is byte for byte that of one
process, including how stdout and stderr lines interleave when both go to one terminal or file.
Nothing is held in memory beyond a small buffer: a ``--print-data-log`` of a large segment writes
gigabytes of text.
"""

from __future__ import annotations

import codecs
import io
import os
import struct
import sys
import tempfile
from typing import BinaryIO, TextIO, cast

OUT, ERR = 0, 1
_TEXT_ONLY = 2                        # a piece that holds surrogates: only text writes give its bytes
_HEADER = struct.Struct("<BI")        # stream (| _TEXT_ONLY), byte length
_BUFFER = 1 << 16                     # characters encoded and written at a time
_PIECE_BYTES = 1 << 30                # a run of one stream longer than this is cut into pieces of it
_READ_BYTES = 1 << 20                 # bytes of a piece read at a time where it is played back as text


class Tape:
    """What one worker writes: ``out`` and ``err`` are text streams that append to one file, a piece per run
    of writes to one of them (its header written with its length once the run ends)."""

    def __init__(self, directory: str) -> None:
        fd, self.name = tempfile.mkstemp(prefix="kdump-tape-", dir=directory)
        self._file = os.fdopen(fd, "wb", buffering=0)
        self._stream = OUT
        self._pending: list[str] = []
        self._pending_chars = 0
        self._piece: tuple[int, int] | None = None   # (header position, flags) of the piece being written
        self._piece_bytes = 0
        self.out: TextIO = cast(TextIO, _TapeStream(self, OUT))
        self.err: TextIO = cast(TextIO, _TapeStream(self, ERR))

    def write(self, stream: int, text: str) -> None:
        if stream != self._stream:
            self._flush()
            self._end_piece()
            self._stream = stream
        self._pending.append(text)
        self._pending_chars += len(text)
        if self._pending_chars >= _BUFFER:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        text = "".join(self._pending)
        flags = 0
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            data = text.encode("utf-8", "surrogatepass")
            flags = _TEXT_ONLY
        if self._piece is None:
            self._piece = (self._file.tell(), 0)
            self._file.write(bytes(_HEADER.size))   # the header, once the length is known
        self._piece = (self._piece[0], self._piece[1] | flags)
        self._file.write(data)
        self._piece_bytes += len(data)
        self._pending, self._pending_chars = [], 0
        if self._piece_bytes >= _PIECE_BYTES:
            self._end_piece()

    def _end_piece(self) -> None:
        if self._piece is not None:
            position, flags = self._piece
            os.pwrite(self._file.fileno(), _HEADER.pack(self._stream | flags, self._piece_bytes), position)
            self._piece, self._piece_bytes = None, 0

    def close(self) -> None:
        self._flush()
        self._end_piece()
        self._file.close()


class _TapeStream(io.TextIOBase):
    def __init__(self, tape: Tape, stream: int) -> None:
        self._tape = tape
        self._number = stream

    def write(self, text: str) -> int:
        self._tape.write(self._number, text)
        return len(text)

    def flush(self) -> None:
        pass   # the order of the pieces is kept; the parent flushes the real streams


def play(name: str, out: TextIO, err: TextIO) -> None:
    """Write the recording ``name`` to ``out`` and ``err`` in its order, then delete it (never write over it:
    ``sendfile`` to a pipe may hand the pipe the file's pages rather than a copy of them).

    A piece without surrogates goes to a stream's bytes (``_Bytes``) as it was recorded: a ``--print-data-log``
    of a large segment records gigabytes, which would otherwise be read and decoded here only to be encoded
    and written again."""
    streams = (out, err)
    raw = (_Bytes.of(out), _Bytes.of(err))
    try:
        with open(name, "rb", buffering=0) as recorded:
            previous = None
            while header := recorded.read(_HEADER.size):
                stream, length = _HEADER.unpack(header)
                text_only = bool(stream & _TEXT_ONLY)
                stream &= ~_TEXT_ONLY
                if previous is not None and previous != stream:
                    streams[previous].flush()   # a terminal shows the lines in the order written
                target = raw[stream]
                if target is not None and not text_only:
                    target.copy(recorded, length)
                else:
                    decoder = codecs.getincrementaldecoder("utf-8")("surrogatepass")
                    for left in range(length, 0, -_READ_BYTES):
                        streams[stream].write(decoder.decode(recorded.read(min(left, _READ_BYTES)),
                                                             final=left <= _READ_BYTES))
                previous = stream
    finally:
        os.unlink(name)


class _Bytes:
    """The bytes under a text stream, where writing UTF-8 text without surrogates there is what writing the
    text does (such text encodes to the same bytes under every error handler): a UTF-8 ``TextIOWrapper``
    that writes newlines as they are (its default on POSIX)."""

    def __init__(self, stream: TextIO, buffer: BinaryIO) -> None:
        self.stream = stream
        self.buffer = buffer
        self.fd: int | None = None
        if sys.platform.startswith("linux"):   # sendfile to any descriptor
            try:
                self.fd = stream.fileno()
            except (OSError, ValueError):       # io.UnsupportedOperation: a stream in memory
                pass

    @classmethod
    def of(cls, stream: TextIO) -> _Bytes | None:
        buffer = getattr(stream, "buffer", None)
        if buffer is None or not isinstance(stream, io.TextIOWrapper) or os.linesep != "\n":
            return None
        try:
            return cls(stream, cast(BinaryIO, buffer)) if codecs.lookup(stream.encoding).name == "utf-8" else None
        except LookupError:
            return None

    def copy(self, recorded: io.FileIO, length: int) -> None:
        """The next ``length`` bytes of ``recorded``, after what was written to the stream before: by sendfile
        where there is a descriptor (no copy through this process), else written to the buffer; a write that
        fails is made again through the buffer, so the stream reports the failure as it reports any."""
        self.stream.flush()
        start = recorded.tell()
        done = 0
        if self.fd is not None:
            try:
                while done < length:
                    sent = os.sendfile(self.fd, recorded.fileno(), start + done, length - done)
                    if not sent:
                        break
                    done += sent
            except OSError:
                self.fd = None
            recorded.seek(start + done)
        if done < length:
            self.buffer.write(recorded.read(length - done))
