"""Publishing an export all at once: tasks write into a staging directory, the dataset appears at the end.

As Spark's file committers do (``FileOutputCommitter``: task output under ``_temporary``, moved on
job commit, then an ``_SUCCESS`` file), but so that a failed or killed job leaves nothing that looks
like a dataset:

- local paths (and ``file://``) are staged by ``kdump.log.atomic``: a hidden owned area beside
  ``out``, renamed into place whole when every task is done (``staged_directory``), or whose files
  are renamed into an existing ``out`` (``staged_files``, for ``append``); leftovers of a killed
  run are removed by the next one;
- object stores (s3://, gs://, hdfs://) have no rename of a directory: files are staged under a
  hidden ``.<name>.<job>.kdump-tmp`` beside ``out``, moved in when every task is done, and
  ``_SUCCESS`` is written last, so a reader that waits for it never sees part of a dataset.

``overwrite`` replaces only what an export made (its ``_SUCCESS`` holds ``MARKER``) or an empty
directory; anything else is refused, never deleted.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import pyarrow.fs as pafs

from kdump.errors import UsageError
from kdump.log.arrow_files import filesystem
from kdump.log.atomic import TEMP_SUFFIX, staged_directory, staged_files

SUCCESS = "_SUCCESS"
MARKER = (SUCCESS, b"kdump export\n")
MODES = ("errorifexists", "overwrite", "append", "ignore")


def _is_local(out: str) -> bool:
    return "://" not in out or out.startswith("file://")


def _local_path(out: str) -> str:
    return urlsplit(out).path if out.startswith("file://") else out


def exists(out: str) -> bool:
    if _is_local(out):
        return os.path.lexists(_local_path(out))
    fs, path = filesystem(out)
    return fs.get_file_info(path).type != pafs.FileType.NotFound


def _refuse_existing(out: str) -> None:
    raise UsageError(f"{out} already exists (--mode overwrite replaces an earlier export, --mode append adds to it)")


@contextmanager
def publication(out: str, mode: str, job: str) -> Iterator[str | None]:
    """The directory (path or URI) to write into, published as ``out`` when the block succeeds.

    None for ``mode="ignore"`` when ``out`` exists (nothing is to be written, as Spark's "ignore").
    """
    if mode not in MODES:
        raise UsageError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    present = exists(out)
    if present and mode == "ignore":
        yield None
        return
    if present and mode == "errorifexists":
        _refuse_existing(out)
    if _is_local(out):
        path = _local_path(out)
        if present and mode == "append":
            if not os.path.isdir(path) or os.path.islink(path):
                raise UsageError(f"{out} exists and is not a directory")
            with staged_files(path) as stage:
                yield stage
                _write_success(stage, path)
            return
        with staged_directory(path, force=mode == "overwrite", marker=MARKER) as stage:
            yield stage
        return
    with _remote_publication(out, mode, present, job) as stage:
        yield stage


def _write_success(stage: str, target: str) -> None:
    """On append: ``_SUCCESS`` only where the existing output has none (one it has is kept as it is)."""
    if not os.path.lexists(os.path.join(target, SUCCESS)):
        with open(os.path.join(stage, SUCCESS), "xb") as fh:
            fh.write(MARKER[1])


def _sibling(out: str, name: str) -> str:
    parts = urlsplit(out)
    parent = posixpath.dirname(parts.path.rstrip("/"))
    return parts._replace(path=posixpath.join(parent or "/", name)).geturl()


def _made_by_export(fs: pafs.FileSystem, path: str) -> bool:
    infos = fs.get_file_info(pafs.FileSelector(path, recursive=False))
    if not infos:
        return True
    try:
        with fs.open_input_stream(posixpath.join(path, SUCCESS)) as f:
            return bool(f.read(len(MARKER[1]) + 1) == MARKER[1])
    except (FileNotFoundError, OSError):
        return False


@contextmanager
def _remote_publication(out: str, mode: str, present: bool, job: str) -> Iterator[str]:
    fs, path = filesystem(out)
    path = path.rstrip("/")
    if present and mode == "overwrite" and not _made_by_export(fs, path):
        raise UsageError(f"{out} was not written by kdump export and is not empty; --mode overwrite replaces "
                         f"only an empty directory or kdump's own output")
    stage_uri = _sibling(out, f".{posixpath.basename(path)}.{job}{TEMP_SUFFIX}")
    _, stage = filesystem(stage_uri)
    fs.create_dir(stage, recursive=True)
    try:
        yield stage_uri
        files = sorted(i.path for i in fs.get_file_info(pafs.FileSelector(stage, recursive=True))
                       if i.type == pafs.FileType.File)
        if present and mode == "overwrite":
            fs.delete_dir(path)
        for source in files:
            target = posixpath.join(path, posixpath.relpath(source, stage))
            if fs.get_file_info(target).type != pafs.FileType.NotFound:
                raise UsageError(f"{target} appeared while kdump was writing it; left as it is")
            fs.create_dir(posixpath.dirname(target), recursive=True)
            fs.move(source, target)
        if mode != "append" or fs.get_file_info(posixpath.join(path, SUCCESS)).type == pafs.FileType.NotFound:
            with fs.open_output_stream(posixpath.join(path, SUCCESS)) as f:
                f.write(MARKER[1])
    finally:
        if fs.get_file_info(stage).type != pafs.FileType.NotFound:
            fs.delete_dir(stage)
