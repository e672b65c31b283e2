"""The wheel build configuration stays true to the project (cibuildwheel itself runs on GitHub only)."""

from __future__ import annotations

import re
import tomllib

from installs import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CIBW = PYPROJECT["tool"]["cibuildwheel"]


def test_wheel_tests_name_files_that_exist() -> None:
    paths = re.findall(r"\{project\}/(\S+)", " ".join(CIBW["test-command"]))
    assert paths
    for path in paths:
        assert (ROOT / path).exists(), path


def test_wheels_are_built_for_every_supported_cpython_and_none_older() -> None:
    oldest = re.fullmatch(r">=3\.(\d+)", PYPROJECT["project"]["requires-python"])
    assert oldest is not None
    minors = sorted(int(re.fullmatch(r"cp3(\d+)-\*", b).group(1)) for b in CIBW["build"])  # type: ignore[union-attr]
    assert minors[0] == int(oldest.group(1))
    assert minors == list(range(minors[0], minors[-1] + 1))


def test_the_wheel_test_requirements_are_the_test_extra_without_the_linters() -> None:
    # Linters, the sdist builder and the S3 test server serve CI's other jobs, not the wheel's tests.
    extra = [r for r in PYPROJECT["project"]["optional-dependencies"]["test"]
             if not r.startswith(("ruff", "mypy", "build", "moto", "flask"))]
    assert CIBW["test-requires"] == extra


def test_every_extension_setup_py_builds_is_one_kdump_checks_for() -> None:
    from kdump.accelerators import EXTENSIONS

    built = re.findall(r'Extension\("([\w.]+)"', (ROOT / "setup.py").read_text())
    assert sorted(built) == sorted(EXTENSIONS)
