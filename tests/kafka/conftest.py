"""Fixtures for the tests that run a real Kafka broker.

Without java or mvn these tests are skipped with the reason; with CI=true a missing tool or a failed
jar fetch fails them instead, so CI cannot silently stop testing against the real broker.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from broker import Broker, BrokerError, fetch_jars

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


@pytest.fixture
def start_broker(tmp_path: Path) -> Iterator[Callable[..., Broker]]:
    """start_broker(release, log_dir=None) -> a started Broker; every broker is stopped at teardown."""
    brokers: list[Broker] = []

    def start(release: str, log_dir: Path | None = None) -> Broker:
        n = len(brokers)
        broker = Broker(kafka_lib(release), log_dir or tmp_path / f"logdir{n}", tmp_path / f"work{n}", release)
        brokers.append(broker)
        return broker.start()

    yield start
    for broker in brokers:
        try:
            broker.stop(timeout=30)
        except BrokerError:
            pass  # stop() already killed it
