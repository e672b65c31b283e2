""".ci/check-install: what it runs, and that it fails on a build without the C accelerators.

Its passing run (sdist and wheel, each in a fresh venv, README's demo from outside the checkout)
is a step of .ci/run; here the ways it must fail, which are cheap: they stop before installing.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from installs import ROOT, clean_env

SCRIPT = ROOT / ".ci" / "check-install"


def _script() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("check_install", str(SCRIPT))
    spec = importlib.util.spec_from_loader("check_install", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_demo_is_readme_first_command_with_the_fixtures_of_the_checkout() -> None:
    fixtures = ROOT / "fixtures" / "logdirs"
    assert _script().demo_commands() == [["--files", str(fixtures / "txn-1" / "00000000000000000000.log"),
                                          "--print-data-log"],
                                         ["summary", str(fixtures)]]


def test_fails_when_the_wheel_was_built_without_a_compiler(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, SCRIPT, "--python", sys.executable, "--work", tmp_path / "work"],
                          cwd=tmp_path, env=clean_env(CC="false"), capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr
    assert "check-install FAILED: kdump-0.1.0-" in done.stderr
    assert "holds none of the C accelerators" in done.stderr


def test_refuses_to_work_inside_the_checkout(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, SCRIPT, "--work", ROOT / "build" / "check-install"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "is inside the checkout" in done.stderr
