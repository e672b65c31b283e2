"""Sessions-wide builds: the sdist, and wheels built from it with and without a C compiler."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))   # the installs helper

from installs import build_sdist, build_wheel


@pytest.fixture(scope="session")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sdist(tmp_path_factory.mktemp("sdist"))


@pytest.fixture(scope="session")
def wheel(sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(sdist, tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def pure_wheel(sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What ``pip install kdump`` builds on a machine without a C compiler (setup.py's optional extensions)."""
    return build_wheel(sdist, tmp_path_factory.mktemp("pure-wheel"), CC="false")
