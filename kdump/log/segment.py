"""Read-only access to segment files over mmap.

Files are opened with O_RDONLY and mapped with ACCESS_READ, so kdump can never change what it
reads (Kafka's own tool opens some files read-write, KAFKA-5104). An empty file maps to b"".
Memory stays flat: the page cache holds the data; we only ever copy one batch at a time.
"""

from __future__ import annotations

import errno
import mmap
import os
import stat
from types import TracebackType

from kdump.errors import InputError

MAX_SEGMENT_BYTES = 2**31 - 1  # Kafka refuses segments past Integer.MAX_VALUE


def describe_os_error(err: OSError) -> str:
    if err.errno == errno.ENOENT:
        return "No such file or directory (NoSuchFileException)"
    if err.errno in (errno.EACCES, errno.EPERM):
        return "Permission denied (AccessDeniedException)"
    if err.errno == errno.EISDIR:
        return "Is a directory"
    return err.strerror or str(err)


class MappedFile:
    """A file mapped read-only. Use as a context manager; ``buf`` is a memoryview of the bytes."""

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError as err:
            raise InputError(describe_os_error(err), path=path) from None
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise InputError("Is a directory", path=path)
            self.size = info.st_size
            self._mmap: mmap.mmap | None = None
            self._released = 0
            if self.size:
                self._mmap = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
                self.buf: memoryview = memoryview(self._mmap)
            else:
                self.buf = memoryview(b"")
        except OSError as err:
            raise InputError(describe_os_error(err), path=path) from None
        finally:
            os.close(fd)

    def release_before(self, position: int) -> None:
        """Drop already-read pages below ``position`` from this process's resident set.

        The data stays in the page cache; without this, scanning a 2 GiB segment would show a
        2 GiB RSS even though kdump holds one batch at a time.
        """
        if self._mmap is None or not hasattr(mmap, "MADV_DONTNEED"):
            return
        end = position - position % mmap.PAGESIZE
        if end > self._released:
            # Only the newly passed range: advising from 0 every time costs more each call.
            self._mmap.madvise(mmap.MADV_DONTNEED, self._released, end - self._released)
            self._released = end

    def close(self) -> None:
        self.buf.release()
        if self._mmap is not None:
            try:
                self._mmap.close()
            except BufferError:
                # A caller still holds a slice (e.g. an exception traceback); the OS unmaps at exit.
                pass
            self._mmap = None

    def __enter__(self) -> "MappedFile":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


_ZERO_CHUNK = bytes(1 << 20)


def is_zero_padding(buf: memoryview, start: int, end: int) -> bool:
    """Whether ``buf[start:end]`` is all zero bytes (a preallocated or crashed active segment's tail).

    Compared a megabyte at a time so a 1 GiB preallocated file costs no large copy.
    """
    pos = start
    while pos < end:
        step = min(len(_ZERO_CHUNK), end - pos)
        if buf[pos:pos + step] != _ZERO_CHUNK[:step]:
            return False
        pos += step
    return True
