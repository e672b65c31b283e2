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

import fnmatch
import importlib
import os
import posixpath
from collections.abc import Iterator
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


def stat(location: str) -> tuple[str, int] | None:
    """("file", size) or ("dir", 0) of what is at ``location``; None where nothing is."""
    if is_uri(location):
        found: tuple[str, int] | None = _arrow(location).ARROW.stat(location)
        return found
    try:
        info = os.stat(location)
    except OSError:
        return None
    return ("dir", 0) if os.path.isdir(location) else ("file", info.st_size)


def walk_files(location: str) -> Iterator[tuple[str, int]]:
    """(location, size) of every file below the directory ``location``, at any depth, sorted by location."""
    if is_uri(location):
        yield from _arrow(location).ARROW.walk_files(location)
        return
    found = []
    for top, _dirs, names in os.walk(os.path.abspath(location)):
        for name in names:
            path = os.path.join(top, name)
            try:
                found.append((path, os.stat(path).st_size))
            except OSError:
                continue   # gone since the listing (a live broker deletes segments)
    yield from sorted(found)


GLOB_CHARS = frozenset("*?[")


def is_glob(location: str) -> bool:
    return any(c in GLOB_CHARS for c in (urlsplit(location).path if is_uri(location) else location))


def glob(pattern: str) -> list[str]:
    """The files and directories whose location matches ``pattern`` (fnmatch rules), sorted. The fixed
    directory above the first wildcard is listed recursively and a match has as many path elements as the
    pattern, so ``*`` stays within one name."""
    if is_uri(pattern):
        matches: list[str] = _arrow(pattern).ARROW.glob(pattern)
        return matches
    path = os.path.abspath(pattern)
    root = glob_root(path)
    found: list[str] = []
    for top, dirs, names in os.walk(root):
        found.extend(os.path.join(top, n) for n in dirs + names)
    return sorted(p for p in found if glob_matches(p, path))


def glob_root(path: str) -> str:
    """The directory above the first wildcard of ``path``."""
    while any(c in GLOB_CHARS for c in path):
        path = posixpath.dirname(path)
    return path or "/"


def glob_matches(path: str, pattern: str) -> bool:
    return path.count("/") == pattern.count("/") and fnmatch.fnmatchcase(path, pattern)


def from_fs_path(original: str, fs_path: str) -> str:
    """A path inside the filesystem the URI ``original`` opens (``pyarrow.fs``: ``bucket/key`` for s3://, gs://,
    ``/path`` for hdfs://, file://) as a location a Spark task can re-open alone: it keeps ``original``'s
    ``?query`` (``endpoint_override=...&scheme=http``) and credentials."""
    parts = urlsplit(original)
    query = f"?{parts.query}" if parts.query else ""
    if fs_path.startswith("/"):                   # hdfs://host:port/path, file:///path
        return f"{parts.scheme}://{parts.netloc}{fs_path}{query}"
    userinfo = parts.netloc.rpartition("@")[0]
    at = f"{userinfo}@" if userinfo else ""
    return f"{parts.scheme}://{at}{fs_path}{query}"   # s3://bucket/key, gs://bucket/key


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
