"""The real Kafka jars for the broker tests: fetched once per session, or a skip (a laptop without
java or mvn) that becomes a failure under CI=true, so CI cannot silently stop testing against Kafka.

A module of its own (not conftest.py) so test modules can import it by a name no other conftest shares.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from broker import BrokerError, fetch_jars

_libs: dict[str, Path | str] = {}


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


def kafka_lib(release: str) -> Path:
    """The jars of `release` (fetched once per session), or skip/fail with the reason."""
    for tool in ("java", "mvn"):
        if shutil.which(tool) is None:
            _unavailable(f"{tool} not found on PATH (needed to fetch and run Kafka {release})")
    if release not in _libs:
        try:
            _libs[release] = fetch_jars(release)
        except (BrokerError, OSError, subprocess.SubprocessError) as exc:
            _libs[release] = str(exc)
    lib = _libs[release]
    if isinstance(lib, str):
        _unavailable(f"Kafka {release} jars could not be fetched: {lib}")
    return lib  # type: ignore[return-value]
