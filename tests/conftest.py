"""Session-wide set-up of the test run: the ``kafka`` marker, what the run fetches and starts, and a
temp dir left as it was found.

- Every test under tests/kafka and tests/spark, and every test marked ``spark``, is marked ``kafka``:
  it needs Java and starts JVMs (the real Kafka tools, brokers, a local Spark). ``pytest -m "not kafka"``
  is the fast tier for everyday work.
- Before the first test, one notice says what those tests fetch (the Kafka jars, where they are cached,
  what is missing), what they start, and how to skip them.
- Child processes (JVMs, Spark, Python subprocesses) put their temporary files under the session's
  basetemp (``TMPDIR``, and ``-Djava.io.tmpdir`` through ``jvm_temp_flags``), removed with the rest of
  basetemp when the session ends (``tmp_path_retention_policy`` in pyproject.toml).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
_KAFKA_DIRS = (TESTS / "kafka", TESTS / "spark")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path))
        if item.get_closest_marker("spark") is not None or any(path.is_relative_to(d) for d in _KAFKA_DIRS):
            item.add_marker(pytest.mark.kafka)


def pytest_collection_finish(session: pytest.Session) -> None:
    kafka = sum(1 for item in session.items if item.get_closest_marker("kafka") is not None)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if kafka == 0 or reporter is None:
        return
    import sys

    sys.path.insert(0, str(TESTS / "kafka"))
    from real_kafka import RELEASES, cache_dir, cached_releases

    cache = cache_dir()
    present = cached_releases()
    missing = [release for release in RELEASES if release not in present]
    size = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file()) if cache.is_dir() else 0
    fetch = (f"{len(missing)} of {len(RELEASES)} releases are missing ({', '.join(missing)}): Maven downloads "
             f"them now, about 60 MB each (or run .ci/fetch-kafka-releases first)" if missing
             else f"all {len(RELEASES)} releases cached")
    reporter.write_line(
        f"kdump: {kafka} tests marked `kafka` run real Kafka and Spark: the Kafka jars live in {cache} "
        f"({size / 1e9:.1f} GB; KDUMP_KAFKA_CACHE moves it), {fetch}; they start JVMs, single-node Kafka "
        f"brokers on 127.0.0.1 and a local Spark. Skip them with: pytest -m \"not kafka\"")


@pytest.fixture(scope="session", autouse=True)
def _children_temp_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """TMPDIR (and Python's tempfile) under basetemp for the whole session, so what children leave
    (a JVM's extracted native libraries, Spark's block manager dirs) is removed with basetemp."""
    tmp = tmp_path_factory.mktemp("children-tmp", numbered=False)
    saved = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = str(tmp)
    tempfile.tempdir = str(tmp)
    try:
        yield tmp
    finally:
        if saved[0] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved[0]
        tempfile.tempdir = saved[1]
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """pytest removes a passing session's basetemp; its parent pytest-of-<user> goes too when empty."""
    basetemp = session.config._tmp_path_factory._basetemp  # type: ignore[attr-defined]
    if basetemp is not None and session.config.option.basetemp is None and not basetemp.exists():
        current = basetemp.parent / "pytest-current"   # the symlink to the newest basetemp, now dangling
        try:
            if current.is_symlink() and not current.exists():
                current.unlink()
            basetemp.parent.rmdir()
        except OSError:
            pass   # another session's dirs (or a failed test's) are still there
