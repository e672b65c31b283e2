"""kdump on log dirs a real Kafka broker wrote (fixtures/real-broker, made by tests/kafka/make_real_fixtures.py).

No Java needed: the expected numbers were recorded from the Java producer and consumer when the
fixtures were made (driver-output.txt).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import broker_checks as checks
import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "real-broker"
RELEASE_DIRS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


@pytest.fixture(params=RELEASE_DIRS, ids=[p.name for p in RELEASE_DIRS])
def fixture(request: pytest.FixtureRequest) -> tuple[Path, checks.DriverOutput]:
    release_dir: Path = request.param
    return release_dir / "logs", checks.DriverOutput.parse((release_dir / "driver-output.txt").read_text())


def test_fixtures_cover_a_4x_and_a_3x_release() -> None:
    assert {p.name.split(".")[0] for p in RELEASE_DIRS} >= {"3", "4"}


def test_driver_output_is_complete(fixture: tuple[Path, checks.DriverOutput]) -> None:
    _, driver = fixture
    assert set(driver.sent) >= {"codec-none", "codec-gzip", "codec-snappy", "codec-lz4", "codec-zstd", "txn"}
    assert set(driver.counts) == set(driver.sent)
    assert driver.aborted["txn"] > 0 and driver.state


def test_verify_index_finds_nothing(fixture: tuple[Path, checks.DriverOutput]) -> None:
    checks.check_verify_index(fixture[0])


def test_summary_counts_what_the_producer_sent(fixture: tuple[Path, checks.DriverOutput]) -> None:
    checks.check_summary_counts(*fixture)


def test_txn_matches_commits_aborts_and_the_consumer_view(fixture: tuple[Path, checks.DriverOutput]) -> None:
    checks.check_transactions(*fixture)


def test_deep_iteration_prints_every_record(fixture: tuple[Path, checks.DriverOutput]) -> None:
    checks.check_deep_iteration(*fixture)


def test_compacted_topic_keeps_the_final_state(fixture: tuple[Path, checks.DriverOutput]) -> None:
    checks.check_compacted_state(*fixture)


def test_internal_topic_decoders_decode_what_the_coordinators_wrote(fixture: tuple[Path, checks.DriverOutput]) -> None:
    checks.check_internal_topics(*fixture)


def test_a_log_dir_named_like_a_partition_is_still_walked(tmp_path: Path) -> None:
    logs = tmp_path / "kafka-logs-1"
    shutil.copytree(RELEASE_DIRS[-1] / "logs", logs)
    driver = checks.DriverOutput.parse((RELEASE_DIRS[-1] / "driver-output.txt").read_text())
    checks.check_verify_index(logs)
    checks.check_summary_counts(logs, driver)
