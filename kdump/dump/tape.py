"""A dump's stdout and stderr recorded in order to a temporary file, and played back later.

``--jobs`` dumps files in worker processes; each records what it would have written, and the parent
plays the recordings back in the order of the files, so the output is byte for byte that of one
process, including how stdout and stderr lines interleave when both go to one terminal or file.
Nothing is held in memory beyond a small buffer: a ``--print-data-log`` of a large segment writes
gigabytes of text.
"""

from __future__ import annotations

import io
import os
import struct
import tempfile
from typing import BinaryIO, TextIO, cast

OUT, ERR = 0, 1
_HEADER = struct.Struct("<BI")        # stream, byte length
_BUFFER = 1 << 16


class Tape:
    """What one worker writes: ``out`` and ``err`` are text streams that append to one file."""

    def __init__(self, directory: str) -> None:
        fd, self.name = tempfile.mkstemp(prefix="kdump-tape-", dir=directory)
        self._file: BinaryIO = os.fdopen(fd, "wb")
        self._stream = OUT
        self._pending: list[str] = []
        self._pending_chars = 0
        self.out: TextIO = cast(TextIO, _TapeStream(self, OUT))
        self.err: TextIO = cast(TextIO, _TapeStream(self, ERR))

    def write(self, stream: int, text: str) -> None:
        if stream != self._stream:
            self._flush()
            self._stream = stream
        self._pending.append(text)
        self._pending_chars += len(text)
        if self._pending_chars >= _BUFFER:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        data = "".join(self._pending).encode("utf-8", "surrogatepass")
        self._file.write(_HEADER.pack(self._stream, len(data)))
        self._file.write(data)
        self._pending, self._pending_chars = [], 0

    def close(self) -> None:
        self._flush()
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
    """Write the recording ``name`` to ``out`` and ``err`` in its order, then delete it."""
    streams = (out, err)
    try:
        with open(name, "rb") as recorded:
            previous = None
            while header := recorded.read(_HEADER.size):
                stream, length = _HEADER.unpack(header)
                if previous is not None and previous != stream:
                    streams[previous].flush()   # a terminal shows the lines in the order written
                streams[stream].write(recorded.read(length).decode("utf-8", "surrogatepass"))
                previous = stream
    finally:
        os.unlink(name)
