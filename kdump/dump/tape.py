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
import tempfile
from typing import TextIO, cast

from kdump.dump.text_bytes import TextBytes

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

    A piece without surrogates goes to a stream's bytes (``TextBytes``) as it was recorded: a ``--print-data-log``
    of a large segment records gigabytes, which would otherwise be read and decoded here only to be encoded
    and written again."""
    streams = (out, err)
    raw = (TextBytes.of(out), TextBytes.of(err))
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
