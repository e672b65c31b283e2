"""Fixtures for the tests that run a real Kafka broker.

Without java or mvn these tests are skipped with the reason; with CI=true a missing tool or a failed
jar fetch fails them instead, so CI cannot silently stop testing against the real broker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from broker import Broker, BrokerError
from loader_oracle import RELEASE as ORACLE_RELEASE
from loader_oracle import LoaderOracle
from real_jars import kafka_lib


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


@pytest.fixture(scope="session")
def loader_oracles() -> Iterator[Callable[[str], LoaderOracle]]:
    """loader_oracles(release) -> that release's log loader, one JVM per release for the whole session
    (tests/kafka/loader_oracle.py)."""
    oracles: dict[str, LoaderOracle] = {}

    def get(release: str) -> LoaderOracle:
        if release not in oracles:
            oracles[release] = LoaderOracle(kafka_lib(release), release)
        return oracles[release]

    yield get
    for oracle in oracles.values():
        oracle.close()


@pytest.fixture(scope="session")
def loader_oracle(loader_oracles: Callable[[str], LoaderOracle]) -> LoaderOracle:
    """Kafka 4.3.0's UnifiedLog.create in one JVM for the whole session (tests/kafka/loader_oracle.py)."""
    return loader_oracles(ORACLE_RELEASE)
