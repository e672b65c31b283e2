"""Writing files and directory trees all at once, leaving nothing behind whatever happens.

Every kdump writer builds its output in a hidden temporary area beside the target,
``.<target name>.<random>.kdump-tmp/``, and renames it into place only when it is complete:

- the area holds an owner record (host, boot id, pid, process start time) next to the content,
  so a later run can tell the leftover of a kdump process that died (SIGKILL, power loss) from an
  area another kdump process is still filling, and removes only the former (``remove_stale``);
- while a write is under way SIGINT, SIGTERM and SIGHUP raise ``SignalInterrupt``
  (kdump.log.interrupts), so the area is removed on the way out; during the final renames they
  are held back until the output is complete, so a signal never leaves half of it in place;
- the final rename never replaces an existing path (renameat2 with RENAME_NOREPLACE), except a
  regular file the caller asked to replace or a directory ``staged_directory`` was allowed to.

Files inside a staged tree are written with plain ``write_new_file``: the tree as a whole is the
unit that appears atomically.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from kdump.errors import KdumpError, UsageError
from kdump.log.interrupts import guard
from kdump.log.owner import Owner, read_text

TEMP_SUFFIX = ".kdump-tmp"
OWNER_FILE = "owner"
CONTENT = "content"


class _TempArea:
    """``.<name>.<random>.kdump-tmp`` beside ``target``, owner record first, content under it."""

    def __init__(self, target: str) -> None:
        parent, name = os.path.split(target)
        # Between mkdtemp and the owner record only SIGKILL can strike (callers hold the other
        # signals back); such an empty area stays, as it is not provably ours.
        self.path = tempfile.mkdtemp(prefix=f".{name[:100]}.", suffix=TEMP_SUFFIX, dir=parent or ".")
        self.completed: str | None = None     # the target, once the content was renamed there
        write_new_file(os.path.join(self.path, OWNER_FILE), Owner.current().encode())


def _remove_area(path: str) -> None:
    """Remove a temporary area, its owner record last: cut short, it stays provably ours."""
    try:
        names = os.listdir(path)
    except FileNotFoundError:
        return
    for name in names:
        if name != OWNER_FILE:
            entry = os.path.join(path, name)
            if os.path.isdir(entry) and not os.path.islink(entry):
                shutil.rmtree(entry, ignore_errors=True)
            else:
                _unlink(entry)
    _unlink(os.path.join(path, OWNER_FILE))
    try:
        os.rmdir(path)
    except OSError:
        pass


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def remove_stale(parent: str) -> list[str]:
    """Remove the temporary areas in ``parent`` whose owner record names a process that is gone."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        if not (entry.name.startswith(".") and entry.name.endswith(TEMP_SUFFIX)):
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        owner_path = os.path.join(entry.path, OWNER_FILE)
        if not os.path.isfile(owner_path) or os.path.islink(owner_path):
            continue
        owner = Owner.decode(read_text(owner_path) or "")
        if owner is not None and owner.is_gone():
            with guard.hold(None):
                _remove_area(entry.path)
            removed.append(entry.path)
    return removed


@contextmanager
def _owned_area(target: str) -> Iterator[_TempArea]:
    """A temporary area beside ``target`` that is removed however the block ends."""
    area = None
    try:
        with guard.hold(None):
            area = _TempArea(target)
        yield area
    finally:
        if area is not None:
            with guard.hold(area.completed):   # a signal must not cut the removal short
                _remove_area(area.path)


# -- renames and writes -----------------------------------------------------------------------------
_AT_FDCWD = -100
_RENAME_NOREPLACE = 1


def _renameat2() -> object | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    return function


_RENAMEAT2 = _renameat2()


def rename_no_replace(source: str, target: str) -> None:
    """Rename ``source`` to ``target``; FileExistsError if ``target`` exists, never replacing it."""
    if _RENAMEAT2 is not None:
        done = _RENAMEAT2(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target),  # type: ignore[operator]
                          _RENAME_NOREPLACE)
        if done == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise OSError(err, os.strerror(err), target)
    # No renameat2 here (or not on this file system): a hard link cannot replace anything either.
    if os.path.isdir(source) and not os.path.islink(source):
        if os.path.lexists(target):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), target)
        os.rename(source, target)
        return
    os.link(source, target)
    os.unlink(source)


def write_new_file(path: str, data: bytes) -> None:
    """Create ``path`` (never an existing one) with ``data``; for files inside a staged tree."""
    with open(path, "xb") as fh:
        fh.write(data)


def _check_target_file(path: str, replace: bool) -> None:
    if not os.path.lexists(path):
        return
    if not replace:
        raise UsageError(f"{path} already exists (use --force to replace it)")
    if os.path.islink(path) or not os.path.isfile(path):
        raise UsageError(f"{path} exists and is not a regular file; it is not replaced")


def write_files(directory: str, files: dict[str, bytes], *, replace: bool = False) -> None:
    """Write ``files`` (name -> bytes) into ``directory`` together: staged, then renamed in.

    A missing ``directory`` is created the same way (its parent must exist), so an interrupted run
    does not leave an empty one. Existing files are refused unless ``replace``, and then only
    regular files are replaced.
    """
    if not os.path.lexists(directory):
        with staged_directory(directory) as stage:
            for name, data in files.items():
                write_new_file(os.path.join(stage, name), data)
        return
    if not os.path.isdir(directory):
        raise UsageError(f"{directory} exists and is not a directory")
    targets = {name: os.path.join(directory, name) for name in files}
    for target in targets.values():
        _check_target_file(target, replace)
    with guard.active():
        remove_stale(directory)
        with _owned_area(os.path.join(directory, next(iter(files)))) as area:
            for name, data in files.items():
                write_new_file(os.path.join(area.path, name), data)
            completed = ", ".join(targets.values())
            with guard.hold(completed):
                created: list[str] = []
                try:
                    for name, target in targets.items():
                        _check_target_file(target, replace)
                        staged = os.path.join(area.path, name)
                        if replace and os.path.lexists(target):
                            os.replace(staged, target)
                        else:
                            _rename_into_place(staged, target)
                            created.append(target)
                except BaseException:
                    for target in created:   # ours, just made: all or none of the new files
                        _unlink(target)
                    raise
                area.completed = completed


def _rename_into_place(source: str, target: str) -> None:
    try:
        rename_no_replace(source, target)
    except FileExistsError:
        raise UsageError(f"{target} appeared while kdump was writing it; left as it is") from None


# -- whole directory trees --------------------------------------------------------------------------
def _describe(directory: str, limit: int = 4) -> str:
    names = sorted(os.listdir(directory))
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _check_new_directory(target: str, *, force: bool, marker: tuple[str, bytes] | None) -> None:
    """Refuse what a directory writer must not replace; ``target`` is absolute."""
    name = os.path.basename(target)
    if not name or name in (".", ".."):
        raise UsageError(f"{target}: not a directory name kdump can create")
    if os.path.islink(target):
        raise UsageError(f"{target} is a symbolic link; it is not replaced")
    cwd = os.path.realpath(os.getcwd())
    real = os.path.realpath(target)
    if cwd == real or cwd.startswith(real.rstrip("/") + "/"):
        raise UsageError(f"{target}: is or holds the working directory; give a new directory to write")
    if not os.path.isdir(os.path.dirname(target)):
        raise UsageError(f"parent directory {os.path.dirname(target)} does not exist")
    if not os.path.lexists(target):
        return
    if not os.path.isdir(target):
        raise UsageError(f"{target} exists and is not a directory")
    if not force:
        raise UsageError(f"{target} already exists (use --force to replace it)")
    if not os.listdir(target):
        return
    if marker is not None:
        path = os.path.join(target, marker[0])
        if os.path.isfile(path) and not os.path.islink(path) and _read_bytes(path) == marker[1]:
            return
    raise UsageError(f"{target} was not written by kdump and is not empty ({_describe(target)}); "
                     f"--force replaces only an empty directory or kdump's own output")


def _read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(4096)
    except OSError:
        return None


@contextmanager
def staged_directory(outdir: str, *, force: bool = False, marker: tuple[str, bytes] | None = None) -> Iterator[str]:
    """Yield a fresh directory to fill; when the block succeeds it becomes ``outdir``.

    ``outdir`` is refused if it exists, unless ``force`` and it is empty or holds ``marker`` (a
    file name and its exact content, written into every tree made with that marker); it is then
    replaced only once the new tree is complete. Symbolic links, files and the working directory
    are never replaced. On any exception, signals included, the temporary area is removed.
    """
    target = os.path.abspath(outdir)
    _check_new_directory(target, force=force, marker=marker)
    with guard.active():
        remove_stale(os.path.dirname(target))
        with _owned_area(target) as area:
            content = os.path.join(area.path, CONTENT)
            os.mkdir(content)
            yield content
            if marker is not None:
                write_new_file(os.path.join(content, marker[0]), marker[1])
            with guard.hold(target):
                _commit_directory(content, target, force=force, marker=marker)
                area.completed = target


def _commit_directory(content: str, target: str, *, force: bool, marker: tuple[str, bytes] | None) -> None:
    if not os.path.lexists(target):
        _rename_into_place(content, target)
        return
    _check_new_directory(target, force=force, marker=marker)   # again: it may have changed meanwhile
    with _owned_area(target) as trash:
        old = os.path.join(trash.path, CONTENT)
        os.rename(target, old)
        try:
            _rename_into_place(content, target)
        except BaseException:
            os.rename(old, target)
            raise


@contextmanager
def parents_made(target: str) -> Iterator[list[str]]:
    """Yield the parent directories of ``target`` that were missing, made as ``mkdir -p`` makes them; unless
    the block succeeds they are removed again, deepest first, each only while it is empty.

    SIGINT, SIGTERM and SIGHUP raise ``SignalInterrupt`` inside the block (``guard``), so an interrupted
    writer leaves no directory it made either. A parent that exists is used whatever it holds (a symbolic
    link to a directory too); something in the way that is not a directory is refused.
    """
    missing: list[str] = []
    path = os.path.dirname(os.path.abspath(target))
    while not os.path.isdir(path):
        if os.path.lexists(path):
            raise UsageError(f"{path} exists and is not a directory")
        missing.append(path)
        path = os.path.dirname(path)
    made: list[str] = []
    with guard.active():
        try:
            with guard.hold(None):    # a signal waits until ``made`` names every directory made
                for path in reversed(missing):
                    _make_parent(path, made)
            yield list(made)
        except BaseException:
            with guard.hold(None):
                for path in reversed(made):
                    try:
                        os.rmdir(path)
                    except OSError:   # no longer empty: what is in it is not ours
                        break
            raise


def _make_parent(path: str, made: list[str]) -> None:
    try:
        os.mkdir(path)
    except FileExistsError:
        if not os.path.isdir(path):
            raise UsageError(f"{path} exists and is not a directory") from None
        return                        # another process made it meanwhile: not ours to remove
    except OSError as err:
        raise KdumpError(f"cannot create the directory: {err.strerror or err}", path=path) from None
    made.append(path)


@contextmanager
def staged_files(directory: str) -> Iterator[str]:
    """Yield a fresh directory to fill; when the block succeeds its files join the existing ``directory``.

    For adding to a tree (an export's append): each file is renamed to the same relative path in
    ``directory`` (subdirectories made as needed), never replacing one; signals wait until every
    file is in, and if a rename fails the files already moved are taken out again. The area is a
    hidden ``.<name>.<random>.kdump-tmp`` inside ``directory``, removed however the block ends.
    """
    with guard.active():
        remove_stale(directory)
        with _owned_area(os.path.join(directory, "added")) as area:
            content = os.path.join(area.path, CONTENT)
            os.mkdir(content)
            yield content
            with guard.hold(directory):
                moved: list[str] = []
                try:
                    for root, _, names in os.walk(content):
                        place = os.path.normpath(os.path.join(directory, os.path.relpath(root, content)))
                        os.makedirs(place, exist_ok=True)
                        for name in sorted(names):
                            _rename_into_place(os.path.join(root, name), os.path.join(place, name))
                            moved.append(os.path.join(place, name))
                except BaseException:
                    for path in moved:      # ours, just made: all or none of the new files
                        _unlink(path)
                    raise
                area.completed = directory


__all__ = ["TEMP_SUFFIX", "parents_made", "remove_stale", "rename_no_replace", "staged_directory", "staged_files",
           "write_files", "write_new_file"]
