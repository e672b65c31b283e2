"""The one way kdump reaches what it reads: a local path through the os, or an s3://, gs://, hdfs://, file://
URI through ``pyarrow.fs`` (``kdump.log.arrow_files``; pyarrow is the optional ``kdump[spark]`` extra).

Three operations are enough for every reader that walks log dirs (``kdump replicas``, the data source, the
tiered store): list a directory, read a small file whole, and open a file for bounded ranged reads. Local
paths take exactly the code they always took; a URI without pyarrow is one plain error saying what to install.
A URI's endpoint and credentials come from pyarrow's usual environment (``AWS_ENDPOINT_URL``, ...) or from
its ``?query`` (``endpoint_override=...``), which every location derived from it keeps: Spark tasks re-open
files from their location alone.
"""

from __future__ import annotations

import importlib
import os
import posixpath
from types import ModuleType
from urllib.parse import urlsplit

from kdump.errors import InputError
from kdump.log.segment import ReadOnlyFile

NEEDS_PYARROW = "reading a URI needs pyarrow: pip install 'kdump[spark]'"


def is_uri(location: str) -> bool:
    return "://" in location


def _arrow(location: str) -> ModuleType:
    try:
        return importlib.import_module("kdump.log.arrow_files")
    except ImportError:
        raise InputError(NEEDS_PYARROW, path=location) from None


def open_any(location: str) -> ReadOnlyFile:
    """A local path as ``ReadOnlyFile``, a URI as ``arrow_files.ArrowFile`` (the same interface)."""
    if is_uri(location):
        file: ReadOnlyFile = _arrow(location).ArrowFile(location)
        return file
    return ReadOnlyFile(location)


def list_dir(location: str) -> list[tuple[str, bool]]:
    """(name, is_dir) of every entry, sorted by name; raises InputError when ``location`` is not a directory."""
    if is_uri(location):
        entries: list[tuple[str, bool]] = _arrow(location).ARROW.list_dir(location)
        return entries
    try:
        with os.scandir(location) as found:
            return sorted((e.name, e.is_dir()) for e in found)
    except OSError as err:
        raise InputError(err.strerror or str(err), path=location) from None


def is_dir(location: str) -> bool:
    return _arrow(location).ARROW.kind(location) == "dir" if is_uri(location) else os.path.isdir(location)


def exists(location: str) -> bool:
    return _arrow(location).ARROW.kind(location) is not None if is_uri(location) else os.path.exists(location)


def lexists(location: str) -> bool:
    """``exists``, but a dangling local symlink counts (it is there, and reading it says why it fails)."""
    return exists(location) if is_uri(location) else os.path.lexists(location)


def _with_path(location: str, path: str) -> str:
    return urlsplit(location)._replace(path=path).geturl()


def absolute(location: str) -> str:
    if is_uri(location):
        return _with_path(location, urlsplit(location).path.rstrip("/"))
    return os.path.abspath(location)


def base_name(location: str) -> str:
    """The last name of ``location`` (a trailing separator ignored)."""
    if is_uri(location):
        return posixpath.basename(urlsplit(location).path.rstrip("/"))
    return os.path.basename(os.path.normpath(location))


def parent(location: str) -> str:
    if is_uri(location):
        return _with_path(location, posixpath.dirname(urlsplit(location).path.rstrip("/")))
    return os.path.dirname(location)


def join(location: str, name: str) -> str:
    if is_uri(location):
        return _with_path(location, posixpath.join(urlsplit(location).path.rstrip("/") or "/", name))
    return os.path.join(location, name)
