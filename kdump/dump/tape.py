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
import re
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
    """Write the recording ``name`` to ``out`` and ``err`` in its order, then delete it.

    A piece goes to a stream's bytes (``_bytes_of``) as it was recorded unless it holds a surrogate: a
    ``--print-data-log`` of a large segment records gigabytes, which would otherwise be decoded here only
    to be encoded again."""
    streams = (out, err)
    raw = (_bytes_of(out), _bytes_of(err))
    try:
        with open(name, "rb") as recorded:
            previous = None
            while header := recorded.read(_HEADER.size):
                stream, length = _HEADER.unpack(header)
                if previous is not None and previous != stream:
                    streams[previous].flush()   # a terminal shows the lines in the order written
                data = recorded.read(length)
                target = raw[stream]
                if target is not None and not (b"\xed" in data and _SURROGATE.search(data)):
                    streams[stream].flush()     # the text written to it before goes first
                    target.write(data)
                else:
                    streams[stream].write(data.decode("utf-8", "surrogatepass"))
                previous = stream
    finally:
        os.unlink(name)


_SURROGATE = re.compile(b"\xed[\xa0-\xbf]")   # U+D800..U+DFFF as "surrogatepass" encodes them in UTF-8


def _bytes_of(stream: TextIO) -> BinaryIO | None:
    """The byte stream under ``stream`` when writing UTF-8 text there is what writing the text does: a UTF-8
    ``TextIOWrapper`` that writes newlines as they are (its default on POSIX). Text without surrogates
    encodes to the same bytes under every error handler. None: write text."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None or not isinstance(stream, io.TextIOWrapper) or os.linesep != "\n":
        return None
    try:
        return cast(BinaryIO, buffer) if codecs.lookup(stream.encoding).name == "utf-8" else None
    except LookupError:
        return None
