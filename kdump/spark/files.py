"""Files at local paths or s3://, gs://, hdfs://, file:// URIs, read through ``pyarrow.fs``.

``ArrowFile`` gives ``kdump.log.segment.ReadOnlyFile``'s interface (bounded reads checked against the
size at open) over a ``pyarrow.fs`` file, so the log layer's readers (``LogBatches``, ``batch_at``,
``check_segment``) run unchanged over remote segments, on the driver and in tasks.
"""

from __future__ import annotations

import os

import pyarrow.fs as pafs

from kdump.errors import InputError
from kdump.log.segment import FileChangedError, ReadOnlyFile


def filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    """(filesystem, path inside it) for a local path or an s3://, gs://, hdfs://, file:// URI."""
    if "://" in location:
        return pafs.FileSystem.from_uri(location)
    return pafs.LocalFileSystem(), os.path.abspath(location)


def read_small_file(location: str) -> bytes:
    fs, path = filesystem(location)
    with fs.open_input_file(path) as f:
        return f.read()


class ArrowFile(ReadOnlyFile):
    """Only opening and reading differ from ``ReadOnlyFile`` (its ``is_zero`` and context manager serve as they
    are); there is no descriptor, so ``grown_by`` does not apply: nothing that reads remote segments asks it."""

    def __init__(self, location: str) -> None:   # not ReadOnlyFile's: nothing local to open
        self.path = location
        fs, path = filesystem(location)
        try:
            self._file = fs.open_input_file(path)
            self.size = self._file.size()
        except OSError as err:
            raise InputError(str(err), path=location) from None

    def read(self, position: int, length: int) -> bytes:
        want = max(0, min(length, self.size - position))
        data = self._file.read_at(want, position) if want else b""
        if len(data) < want:
            raise FileChangedError(f"the file changed while kdump was reading it: a read at position {position} "
                                   f"returned {len(data)} of {want} bytes", path=self.path, position=position)
        return bytes(data)

    def read_into(self, view: memoryview, position: int) -> int:
        data = self.read(position, len(view))
        view[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self._file.close()


def open_any(location: str) -> ReadOnlyFile:
    """A local path as ``ReadOnlyFile`` (what ``kdump verify`` opens), a URI as ``ArrowFile``."""
    return ArrowFile(location) if "://" in location else ReadOnlyFile(location)
