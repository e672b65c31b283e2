"""Files a live broker changes while the engine reads them: read again, and never called corrupt."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import kdump.verify.engine as engine
from kdump.log.logdir import read_partition_dir
from kdump.log.segment import FileChangedError
from kdump.verify.engine import ALL, Options, Tally

PLAIN = Path(__file__).resolve().parents[2] / "fixtures" / "logdirs" / "plain-0"


def _first_segment(tmp_path: Path):  # type: ignore[no-untyped-def]
    part = tmp_path / "plain-0"
    shutil.copytree(PLAIN, part)
    return read_partition_dir(str(part)).segments[0]


def test_a_file_trimmed_once_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seg = _first_segment(tmp_path)
    real = engine.SegmentCheck.__iter__
    calls = []

    def shrink_once(self):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 1:
            raise FileChangedError("the file changed while kdump read it", path=seg.index, position=8)
        return real(self)

    monkeypatch.setattr(engine.SegmentCheck, "__iter__", shrink_once)
    tally = Tally()
    findings, _ = engine.check_segment(seg, True, Options(scope=ALL), tally)
    assert len(calls) == 2 and tally.unreadable == []
    assert [f for f in findings if f.is_error] == []


def test_a_file_that_keeps_changing_is_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seg = _first_segment(tmp_path)

    def always(self):  # type: ignore[no-untyped-def]
        raise FileChangedError("the file changed while kdump read it", path=seg.log, position=0)

    monkeypatch.setattr(engine.SegmentCheck, "__iter__", always)
    tally = Tally()
    findings, _ = engine.check_segment(seg, True, Options(scope=ALL), tally)
    assert [(f.severity, f.check) for f in findings] == [("note", "changed-while-read")]
    assert tally.unreadable == []


def test_a_segment_deleted_by_retention_is_a_note(tmp_path: Path) -> None:
    seg = _first_segment(tmp_path)
    Path(seg.log).unlink()
    tally = Tally()
    findings, _ = engine.check_segment(seg, False, Options(scope=ALL), tally)
    assert [(f.severity, f.check) for f in findings if f.file == seg.log] == [("note", "deleted-while-read")]
    assert tally.unreadable == []
