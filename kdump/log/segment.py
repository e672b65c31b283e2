"""Read-only access to the files of a log directory: bounded ``pread`` windows, never a mapping.

A broker changes its files while kdump reads them: it truncates a preallocated ``.log`` and its
10 MiB indexes to their real size on every roll, trims the active segment after a crash, and deletes
whole segments by retention. A memory mapping turns any of these into SIGBUS, which kills the
process with no message; a ``pread`` past the new end simply returns fewer bytes. So every read here
is a ``pread`` of at most one window (plus one oversized entry when a caller asks for its bytes),
checked against the size the file had when it was opened:

* the size at open is the file as kdump reads it (later appends are not part of this run; a reader
  that wants them says so with ``grown_by``);
* a read that returns fewer bytes than that size promises raises ``FileChangedError`` naming the
  file, the position and both sizes;
* a file that is not a regular file (a FIFO, a socket, a device) is refused before any read, and
  opening never blocks (``O_NONBLOCK``), so a FIFO in a partition directory cannot hang a run.

Files are opened ``O_RDONLY``: kdump can never change what it reads (Kafka's own tool opens some
files read-write). Memory is bounded by the window, whatever the file size; the page cache holds
the data and none of it counts against kdump's resident set.
"""

from __future__ import annotations

import errno
import os
import stat

from kdump.errors import InputError
from kdump.format.batch import INT32_MAX

MAX_SEGMENT_BYTES = INT32_MAX  # Kafka refuses segments past Integer.MAX_VALUE
SPLIT_BYTES = 128 << 20
"""The size of the byte ranges a large segment is cut into for several processes: ``kdump export``'s and
Spark's splits (``--split-bytes``, ``splitBytes``), and ``kdump.log.ranges.batch_ranges``' for ``--jobs``."""
ZERO_CHUNK_BYTES = 1 << 20
_ZEROS = bytes(ZERO_CHUNK_BYTES)


class FileChangedError(InputError):
    """The file became shorter (truncated, or replaced) while kdump was reading it."""


_OS_ERROR_WORDS = {errno.ENOENT: "No such file or directory (NoSuchFileException)",
                   errno.EACCES: "Permission denied (AccessDeniedException)",
                   errno.EPERM: "Permission denied (AccessDeniedException)",
                   errno.EISDIR: "Is a directory", errno.ELOOP: "Too many levels of symbolic links"}


def describe_os_error(err: OSError) -> str:
    return _OS_ERROR_WORDS.get(err.errno or 0) or err.strerror or str(err)


def describe_file_type(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


class ReadOnlyFile:
    """A regular file opened read-only; ``size`` is its length when opened. Use as a context manager.

    Given ``size``, the file is read as it was at that size, as another reader of the same run (a process
    that planned its reading) saw it: bytes appended since are not part of the read, and a file that is
    shorter now raises ``FileChangedError`` when a read reaches past its end."""

    def __init__(self, path: str, size: int | None = None) -> None:
        self.path = path
        try:
            # O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as err:
            raise InputError(describe_os_error(err), path=path) from None
        try:
            info = os.fstat(fd)
        except OSError as err:
            os.close(fd)
            raise InputError(describe_os_error(err), path=path) from None
        kind = describe_file_type(info.st_mode)
        if kind is not None:
            os.close(fd)
            raise InputError("Is a directory" if kind == "a directory" else f"{kind}, not a regular file: skipped",
                             path=path)
        self._fd: int | None = fd
        self.size: int = info.st_size if size is None else size

    def _descriptor(self) -> int:
        if self._fd is None:
            raise ValueError(f"{self.path} is closed")
        return self._fd

    def current_size(self) -> int:
        return os.fstat(self._descriptor()).st_size

    def grown_by(self) -> int:
        """Bytes appended since the file was opened (0 when it did not grow)."""
        return max(0, self.current_size() - self.size)

    def _shrank(self, position: int, got: int) -> FileChangedError:
        try:
            now = f"{self.current_size()}"
        except OSError:
            now = "none"
        return FileChangedError(f"the file changed while kdump read it: it had {self.size} bytes when opened and "
                                f"now has {now}, so nothing from here on can be read (a broker rolling, "
                                f"truncating or deleting it?)", path=self.path, position=position)

    def read(self, position: int, length: int) -> bytes:
        """The bytes ``[position, position + length)``, clipped to the size at open."""
        want = max(0, min(length, self.size - position))
        if want == 0:
            return b""
        try:
            data = os.pread(self._descriptor(), want, position)
        except OSError as err:
            raise InputError(describe_os_error(err), path=self.path, position=position) from None
        if len(data) < want:
            raise self._shrank(position, len(data))
        return data

    def read_into(self, view: memoryview, position: int) -> int:
        """Fill ``view`` from ``position`` (clipped to the size at open); returns the bytes read."""
        want = max(0, min(len(view), self.size - position))
        if want == 0:
            return 0
        fd = self._descriptor()
        done = 0
        try:
            while done < want:
                got = os.preadv(fd, [view[done:want]], position + done)
                if got == 0:
                    break
                done += got
        except OSError as err:
            raise InputError(describe_os_error(err), path=self.path, position=position + done) from None
        if done < want:
            raise self._shrank(position + done, done)
        return done

    def is_zero(self, start: int, end: int) -> bool:
        """Whether ``[start, end)`` is all zero bytes (a preallocated or crashed active file's tail).

        Read a megabyte at a time, so a 1 GiB preallocated file costs no large buffer.
        """
        buffer = bytearray(min(ZERO_CHUNK_BYTES, max(0, end - start)))
        view = memoryview(buffer)
        pos = start
        while pos < end:
            step = min(len(buffer), end - pos)
            self.read_into(view[:step], pos)
            if view[:step] != _ZEROS[:step]:
                return False
            pos += step
        return True

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> ReadOnlyFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_small_file(path: str, limit: int) -> bytes:
    """The whole of a small file (checkpoints, snapshots, metadata), refusing one over ``limit`` bytes;
    a local path or a URI (kdump.log.locations, imported here as it imports this module)."""
    from kdump.log.locations import open_any

    with open_any(path) as f:
        if f.size > limit:
            raise InputError(f"{f.size} bytes is more than the {limit} bytes such a file can reasonably hold; "
                             f"not read", path=path)
        return f.read(0, f.size)
