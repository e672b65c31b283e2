"""An install without the C accelerators says so; one with them says they are loaded.

``pip install kdump`` on a machine without a C compiler builds the wheel anyway (setup.py's
extensions are optional) and pip's ``-q`` hides the build warning; ``CC=false`` reproduces that
machine. The commands must then warn once on stderr, and ``--version`` say why.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from installs import ROOT, clean_env, pip_install, run, venv_with_dependencies

EXTENSIONS = ("kdump/format/_v2records.", "kdump/render/_v2lines.")
SEGMENT = ROOT / "fixtures" / "logdirs" / "txn-1" / "00000000000000000000.log"
WARNING = "Warning: kdump's C accelerators are not loaded"


def _extensions_in(wheel: Path) -> list[str]:
    names = zipfile.ZipFile(wheel).namelist()
    return [n for n in names if n.startswith(EXTENSIONS) and n.endswith((".so", ".pyd"))]


def _installed(wheel: Path, where: Path) -> Path:
    python = venv_with_dependencies(where / "venv")
    pip_install(python, wheel)
    return python.parent / "kdump"


def test_wheel_built_with_a_compiler_loads_its_accelerators(wheel: Path, tmp_path: Path) -> None:
    assert len(_extensions_in(wheel)) == 2
    kdump = _installed(wheel, tmp_path)
    version = run([kdump, "--version"], cwd=tmp_path, env=clean_env())
    assert "C accelerators: loaded" in version.stdout.splitlines()
    dump = run([kdump, "--files", SEGMENT, "--print-data-log"], cwd=tmp_path, env=clean_env())
    assert WARNING not in dump.stderr


def test_wheel_built_without_a_compiler_warns_once(pure_wheel: Path, tmp_path: Path) -> None:
    assert _extensions_in(pure_wheel) == []
    kdump = _installed(pure_wheel, tmp_path)

    version = run([kdump, "--version"], cwd=tmp_path, env=clean_env()).stdout
    assert ("C accelerators: NOT loaded (kdump.format._v2records, kdump.render._v2lines not built: kdump was "
            "installed without a C compiler; reinstall it with one, or from a wheel), pure Python") in version

    dump = run([kdump, "--files", SEGMENT, "--print-data-log"], cwd=tmp_path, env=clean_env())
    assert dump.stderr.count(WARNING) == 1
    assert dump.stderr.startswith(WARNING)
    verify = run([kdump, "verify", SEGMENT.parent], cwd=tmp_path, env=clean_env())
    assert verify.stderr.count(WARNING) == 1

    # Asked for: no warning.
    quiet = run([kdump, "--files", SEGMENT, "--print-data-log"], cwd=tmp_path, env=clean_env(KDUMP_PURE_PYTHON="1"))
    assert WARNING not in quiet.stderr
    assert "C accelerators: off (KDUMP_PURE_PYTHON=1), pure Python" in run(
        [kdump, "--version"], cwd=tmp_path, env=clean_env(KDUMP_PURE_PYTHON="1")).stdout
