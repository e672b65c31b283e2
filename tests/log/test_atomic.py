"""kdump.log.atomic: which leftovers a later run may remove, renames that never replace, held signals."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import kdump.log.atomic as atomic
from kdump.errors import UsageError
from kdump.log.atomic import remove_stale, rename_no_replace, staged_directory, write_files
from kdump.log.interrupts import SignalInterrupt
from kdump.log.owner import Owner


def area(parent: Path, name: str, owner: bytes | None) -> Path:
    path = parent / f".{name}.abcd1234{atomic.TEMP_SUFFIX}"
    (path / atomic.CONTENT).mkdir(parents=True)
    (path / atomic.CONTENT / "segment.log").write_bytes(b"x" * 100)
    if owner is not None:
        (path / atomic.OWNER_FILE).write_bytes(owner)
    return path


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_only_areas_of_processes_that_are_gone_are_removed(tmp_path: Path) -> None:
    me = Owner.current()
    gone = area(tmp_path, "gone", Owner(me.host, me.boot, dead_pid(), "1").encode())
    rebooted = area(tmp_path, "rebooted", Owner(me.host, "another-boot", os.getpid(), me.start).encode())
    reused = area(tmp_path, "reused", Owner(me.host, me.boot, os.getpid(), "not-" + me.start).encode())
    alive = area(tmp_path, "alive", me.encode())
    remote = area(tmp_path, "remote", Owner("not-" + socket.gethostname(), "b", dead_pid(), "1").encode())
    unowned = area(tmp_path, "unowned", None)
    foreign = area(tmp_path, "foreign", b"host=x\npid=1\n")
    unrelated = tmp_path / ".something.kdump-tmp-not"
    unrelated.mkdir()
    removed = remove_stale(str(tmp_path))
    assert sorted(removed) == sorted(map(str, (gone, rebooted, reused)))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (alive, remote, unowned, foreign,
                                                                                  unrelated))


def test_a_symlinked_area_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    me = Owner.current()
    (target / atomic.OWNER_FILE).write_bytes(Owner(me.host, me.boot, dead_pid(), "1").encode())
    (tmp_path / f".x.1{atomic.TEMP_SUFFIX}").symlink_to(target)
    assert remove_stale(str(tmp_path)) == []
    assert (target / atomic.OWNER_FILE).exists()


@pytest.mark.parametrize("renameat2", [True, False])
def test_rename_no_replace_refuses_existing_targets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    renameat2: bool) -> None:
    if not renameat2:
        monkeypatch.setattr(atomic, "_RENAMEAT2", None)
    (tmp_path / "new").write_bytes(b"new")
    (tmp_path / "old").write_bytes(b"old")
    (tmp_path / "newdir").mkdir()
    (tmp_path / "olddir").mkdir()
    for source, target in (("new", "old"), ("newdir", "olddir"), ("new", "olddir")):
        with pytest.raises(FileExistsError):
            rename_no_replace(str(tmp_path / source), str(tmp_path / target))
    assert (tmp_path / "old").read_bytes() == b"old" and (tmp_path / "new").read_bytes() == b"new"
    rename_no_replace(str(tmp_path / "new"), str(tmp_path / "fresh"))
    rename_no_replace(str(tmp_path / "newdir"), str(tmp_path / "freshdir"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh", "freshdir", "old", "olddir"]


def test_a_signal_during_the_final_rename_waits_until_the_tree_is_in_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commit = atomic._commit_directory

    def signalled_commit(*args, **kwargs):  # type: ignore[no-untyped-def]
        os.kill(os.getpid(), signal.SIGTERM)    # delivered at once, in the middle of the commit
        commit(*args, **kwargs)

    monkeypatch.setattr(atomic, "_commit_directory", signalled_commit)
    out = tmp_path / "out"
    with pytest.raises(SignalInterrupt) as caught, staged_directory(str(out)) as stage:
        Path(stage, "data").write_bytes(b"complete")
    assert caught.value.signo == signal.SIGTERM and caught.value.completed == str(out)
    assert [p.name for p in tmp_path.iterdir()] == ["out"] and (out / "data").read_bytes() == b"complete"
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL      # the handlers are put back


def test_a_signal_while_staging_removes_the_area(tmp_path: Path) -> None:
    previous = signal.signal(signal.SIGHUP, signal.SIG_DFL)   # as in a terminal, even under nohup
    try:
        _signal_while_staging(tmp_path)
    finally:
        signal.signal(signal.SIGHUP, previous)


def _signal_while_staging(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    write_files(str(tmp_path / "out"), {"a": b"1", "b": b"2"})
    with pytest.raises(SignalInterrupt) as caught, staged_directory(str(tmp_path / "new")) as stage:
        Path(stage, "half").write_bytes(b"x")
        os.kill(os.getpid(), signal.SIGHUP)
    assert caught.value.signo == signal.SIGHUP and caught.value.completed is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a", "b"]


def test_an_ignored_signal_stays_ignored(tmp_path: Path) -> None:
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)     # as under nohup
    try:
        with staged_directory(str(tmp_path / "out")) as stage:
            os.kill(os.getpid(), signal.SIGHUP)
            Path(stage, "data").write_bytes(b"x")
        assert (tmp_path / "out" / "data").exists()
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_write_files_places_all_or_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = atomic.rename_no_replace

    def second_target_appears(source: str, target: str) -> None:
        if target.endswith("b"):
            Path(target).write_bytes(b"someone else's")     # created meanwhile by another program
        real(source, target)

    monkeypatch.setattr(atomic, "rename_no_replace", second_target_appears)
    with pytest.raises(UsageError, match="appeared while kdump was writing it"):
        write_files(str(tmp_path), {"a": b"1", "b": b"2"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"] and (tmp_path / "b").read_bytes() == b"someone else's"
