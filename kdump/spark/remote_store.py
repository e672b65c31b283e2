"""A remote store's layout listed through ``pyarrow.fs`` (s3://, gs://, hdfs://, file://): the ``Store`` that
``kdump.log.remote_layout`` lists with, and the opener its segments are read with (``files.ArrowFile``)."""

from __future__ import annotations

import posixpath
from urllib.parse import urlsplit

import pyarrow.fs as pafs

from kdump.errors import InputError
from kdump.spark.files import filesystem, open_any

__all__ = ["ARROW", "ArrowStore", "open_any"]


class ArrowStore:
    def list_dir(self, location: str) -> list[tuple[str, bool]]:
        fs, path = filesystem(location)
        try:
            infos = fs.get_file_info(pafs.FileSelector(path, recursive=False))
        except (OSError, FileNotFoundError) as err:
            raise InputError(str(err), path=location) from None
        return sorted((posixpath.basename(i.path), i.type == pafs.FileType.Directory) for i in infos)

    def join(self, location: str, name: str) -> str:
        parts = urlsplit(location)
        return parts._replace(path=posixpath.join(parts.path.rstrip("/") or "/", name)).geturl()


ARROW = ArrowStore()

