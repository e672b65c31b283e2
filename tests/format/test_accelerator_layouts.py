"""The C extensions read Record and Batch tuples by slot: each exports the field names it was built
for, and kdump refuses an extension whose layout differs from the namedtuple's (with a warning)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from kdump import accelerators
from kdump.accelerators import load as load_checked
from kdump.format.batch import Batch
from kdump.format.records import Record

EXTENSIONS = [("kdump.format._v2records", {"RECORD_FIELDS": Record._fields, "BATCH_FIELDS": Batch._fields}),
              ("kdump.render._v2lines", {"RECORD_FIELDS": Record._fields, "BATCH_FIELDS": Batch._fields})]


def test_the_layouts_kdump_checks_are_the_namedtuples() -> None:
    assert dict(EXTENSIONS) == accelerators.EXTENSIONS


def _extension(name: str):  # type: ignore[no-untyped-def]
    try:
        return importlib.import_module(name)
    except ImportError:
        pytest.skip(f"{name} is not built (no C compiler)")


@pytest.mark.parametrize(("module", "layouts"), EXTENSIONS)
def test_built_extensions_match_the_namedtuples(module: str, layouts: dict[str, tuple[str, ...]]) -> None:
    extension = _extension(module)
    for attr, fields in layouts.items():
        assert getattr(extension, attr) == fields


def test_a_layout_mismatch_refuses_the_extension_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KDUMP_PURE_PYTHON", raising=False)
    monkeypatch.setattr(accelerators, "_missing", {})  # the refusals below are this test's, not the process's
    extension = _extension("kdump.format._v2records")
    assert load_checked("kdump.format._v2records", "decode") is extension.decode
    monkeypatch.setattr(extension, "RECORD_FIELDS", ("timestamp", "offset", *Record._fields[2:]))
    with pytest.warns(RuntimeWarning, match="using the Python code instead"):
        assert load_checked("kdump.format._v2records", "decode") is None
    monkeypatch.delattr(extension, "RECORD_FIELDS")   # an extension built before the layouts were exported
    with pytest.warns(RuntimeWarning, match="built for RECORD_FIELDS None"):
        assert load_checked("kdump.format._v2records", "decode") is None


def test_a_namedtuple_changed_without_its_layout_fails_at_import() -> None:
    from kdump.format.layout import RECORD_FIELDS, check_fields

    check_fields(Record, RECORD_FIELDS)
    with pytest.raises(TypeError, match="change both together"):
        check_fields(Record, RECORD_FIELDS[::-1])


@pytest.mark.parametrize(("module", "attr", "user", "switch"), [
    ("kdump.format._v2records", "RECORD_FIELDS", "kdump.format.records", "RECORD_DECODER"),
    ("kdump.render._v2lines", "BATCH_FIELDS", "kdump.render.log_text", "LINE_FORMATTER"),
])
def test_modules_fall_back_to_python_when_the_layout_changed(module: str, attr: str, user: str,
                                                             switch: str) -> None:
    _extension(module)
    code = (f"import {module} as ext; ext.{attr} = ext.{attr}[::-1]; "
            f"import {user} as user; print(user.{switch})")
    env = {k: v for k, v in __import__("os").environ.items() if k != "KDUMP_PURE_PYTHON"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout == "pure Python\n"
    assert f"RuntimeWarning: {module} was built for {attr}" in done.stderr
    status = subprocess.run([sys.executable, "-c", code.replace(f"print(user.{switch})",
                             "from kdump import accelerators; print(accelerators.status())")],
                            capture_output=True, text=True, env=env, check=True)
    assert "NOT loaded" in status.stdout and "stale build" in status.stdout
