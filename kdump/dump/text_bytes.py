"""The bytes under a text stream: where UTF-8 text may go as bytes (a tape played back, a deep dump's runs of
lines from the C renderer), with no str made of it and no encoding on the way out."""

from __future__ import annotations

import codecs
import io
import os
import sys
from collections.abc import Callable
from typing import BinaryIO, TextIO, cast


class TextBytes:
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
    def of(cls, stream: TextIO) -> TextBytes | None:
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


def utf8_writer(stream: TextIO) -> Callable[[bytes | memoryview], object]:
    """A writer of UTF-8 bytes to ``stream``, after what was written to it as text: to the bytes under it where
    ``TextBytes.of`` allows (a process's stdout), else decoded and written as text (a stream in memory)."""
    under = TextBytes.of(stream)
    if under is None:
        return lambda data: stream.write(str(data, "utf-8", "surrogatepass"))
    buffer = under.buffer

    def write(data: bytes | memoryview) -> None:
        stream.flush()
        buffer.write(data)

    return write
