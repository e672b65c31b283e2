"""Files at s3://, gs://, hdfs://, file:// URIs (and local paths) read through ``pyarrow.fs``.

pyarrow is an optional extra (``kdump[spark]``): only ``kdump.log.locations`` imports this module, when a
location is a URI, and says what to install when it is missing. ``ArrowFile`` gives
``kdump.log.segment.ReadOnlyFile``'s interface (bounded ranged reads checked against the size at open) over
a ``pyarrow.fs`` file, so the log layer's readers (``LogBatches``, ``batch_at``, ``segment_headers``) run
unchanged over remote segments, on one machine and in Spark tasks.
"""

from __future__ import annotations

import os
import posixpath

import pyarrow.fs as pafs

from kdump.errors import InputError
from kdump.log.locations import from_fs_path, glob_matches, glob_root
from kdump.log.segment import FileChangedError, ReadOnlyFile


def filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    """(filesystem, path inside it) for a local path or an s3://, gs://, hdfs://, file:// URI."""
    if "://" in location:
        return pafs.FileSystem.from_uri(location)
    return pafs.LocalFileSystem(), os.path.abspath(location)


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


class ArrowStore:
    """What a URI directory holds, through ``pyarrow.fs``: the URI side of ``kdump.log.locations``."""

    def list_dir(self, location: str) -> list[tuple[str, bool]]:
        fs, path = filesystem(location)
        try:
            infos = fs.get_file_info(pafs.FileSelector(path, recursive=False))
        except (OSError, FileNotFoundError) as err:
            raise InputError(str(err), path=location) from None
        return sorted((posixpath.basename(i.path), i.type == pafs.FileType.Directory) for i in infos)

    def stat(self, location: str) -> tuple[str, int] | None:
        try:
            fs, path = filesystem(location)
            info = fs.get_file_info(path)
        except (OSError, ValueError):
            return None
        if info.type == pafs.FileType.Directory:
            return ("dir", 0)
        return ("file", info.size) if info.type == pafs.FileType.File else None

    def _below(self, location: str) -> list[pafs.FileInfo]:
        fs, path = filesystem(location)
        try:
            return list(fs.get_file_info(pafs.FileSelector(path, recursive=True)))
        except (OSError, FileNotFoundError) as err:
            raise InputError(str(err), path=location) from None

    def walk_files(self, location: str) -> list[tuple[str, int]]:
        """(location, size) of every file below ``location`` (``locations.from_fs_path``: each keeps what
        ``location`` was opened with)."""
        return sorted((from_fs_path(location, i.path), i.size) for i in self._below(location)
                      if i.type == pafs.FileType.File)

    def glob(self, pattern: str) -> list[str]:
        fs, path = filesystem(pattern)
        root = glob_root(path)
        try:
            below = fs.get_file_info(pafs.FileSelector(root, recursive=True))
        except (OSError, FileNotFoundError) as err:
            raise InputError(str(err), path=pattern) from None
        return sorted(from_fs_path(pattern, i.path) for i in below if glob_matches(i.path, path))

    def kind(self, location: str) -> str | None:
        """"dir", "file", or None where nothing is (or it cannot be asked)."""
        try:
            fs, path = filesystem(location)
            kind = fs.get_file_info(path).type
        except (OSError, ValueError):
            return None
        return {pafs.FileType.Directory: "dir", pafs.FileType.File: "file"}.get(kind)


ARROW = ArrowStore()
