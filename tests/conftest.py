"""Session-wide set-up of the test run: the ``kafka`` marker, what the run fetches and starts, and a
temp dir left as it was found.

- Every test under tests/kafka and tests/spark, and every test marked ``spark``, is marked ``kafka``:
  it needs Java and starts JVMs (the real Kafka tools, brokers, a local Spark). Those and the few
  heavy tests without Java are marked ``slow``: ``pytest -m "not slow"`` is the fast tier for everyday
  work (under 2 minutes on 2 cores), ``pytest -m "not kafka"`` the run without Java.
- The run is spread over two workers per core, at most four (pytest-xdist, ``-n auto`` in pyproject.toml;
  ``-n 0`` runs in one process). Tests go to workers a unit at a time (``work_unit``): a module, so its
  module and session fixtures (a broker, a cluster) start once per worker that needs them, split
  further by Kafka release where a test is parametrized by one (the real DumpLogSegments comparison,
  the real-broker and cluster tests), since each release's fixtures are its own. Two units are
  wider: every Spark test (one local SparkSession, started once: each start costs about 20 CPU-s; the
  ``kdump spark`` cases of test_exit_codes too) and every packaging test (one sdist and wheel build).
- Before the first test, one notice says what the ``kafka`` tests fetch (the Kafka jars, where they are
  cached, what is missing), what they start, and how to skip them.
- Child processes (JVMs, Spark, Python subprocesses) put their temporary files under the session's
  basetemp (``TMPDIR``, and ``-Djava.io.tmpdir`` through ``jvm_temp_flags``), removed with the rest of
  basetemp when the session ends (``tmp_path_retention_policy`` in pyproject.toml).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# Tests that run Kafka's jars, a JVM or Spark, beside every test marked ``spark``.
_KAFKA = ("kafka/", "spark/", "log/test_topic_names.py")
# Tests that take over a second each on 2 cores without a JVM: wheel builds and installs, 256 MiB and
# 2 GiB inputs, whole processes on a pseudo-terminal or sent signals (measured with --durations).
_SLOW = (
    "packaging/", "format/test_bombs.py", "cli/test_jobs.py", "cli/test_progress.py", "cli/test_exit_codes.py",
    "cli/test_hostile_files.py", "cli/test_rebuild_index_out.py", "dump/test_files_jobs.py",
    "log/test_spill.py::test_a_million_offset_gaps_keep_memory_flat", "cli/test_gen.py::test_signal_cleans_up",
    "cli/test_verify.py::test_a_partition_being_written_to_raises_no_false_alarm",
    "log/test_read_layer.py::test_real_truncation_of_an_index_during_verify_index",
    "cli/test_partition_for.py::test_against_independent_implementation",
)


_RELEASE = re.compile(r"(?<![\d.])\d+\.\d+\.\d+(?![\d.])")
# The modules that take longest (measured with --durations=0), sent to the workers first so that no worker
# starts one of them while the other has nothing left to do; then the other kafka tests, the slow ones,
# the rest (xdist hands out units in collection order with --no-loadscope-reorder, in pyproject.toml: its
# default reorders them by their number of tests, which put the long JVM modules last; each module keeps
# its own order).
_LONGEST = ("kafka/test_real_cluster_replicas.py", "spark/test_cluster.py", "kafka/test_real_broker_recover_txn.py",
            "kafka/test_real_broker_recover.py", "kafka/test_real_broker_live.py", "packaging/test_spark_discovery.py",
            "kafka/test_real_broker_refusals.py", "kafka/test_real_broker_tiered.py", "spark/test_cli_session.py")


def _rank(item: pytest.Item, module: str) -> int:
    if module in _LONGEST:
        return _LONGEST.index(module)
    if item.get_closest_marker("kafka") is not None:
        return len(_LONGEST)
    return len(_LONGEST) + (1 if item.get_closest_marker("slow") is not None else 2)


# Units wider than a module (see the module docstring): their fixtures are session-wide and costly.
_SHARED_UNITS = {"tests/spark/": "spark", "tests/cli/test_spark_": "spark", "tests/packaging/": "packaging"}


def work_unit(nodeid: str) -> str:
    """What one xdist worker runs as a whole: a test's module, and the Kafka release in its parameters
    (``[4.4.0-cut-batch]``, ``[3.9.2:logdirs/...]``), if any; or one of ``_SHARED_UNITS``."""
    module, _, rest = nodeid.partition("::")
    for prefix, unit in _SHARED_UNITS.items():
        if module.startswith(prefix):
            return unit
    if "[kdump spark " in rest:   # test_exit_codes' `kdump spark` cases: in the Spark unit, on its session
        return "spark"
    params = rest[rest.find("["):] if "[" in rest else ""
    release = _RELEASE.search(params)
    return module if release is None else f"{module}[{release.group()}]"


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """xdist's load-by-scope scheduler with ``work_unit`` as the scope. (Its ``xdist_group`` marker does
    not work under pytest 9: xdist 3.8 writes the group into ``Item._nodeid``, which pytest 9 no longer
    reads.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ByModuleAndRelease(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return ByModuleAndRelease(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``kafka`` and ``slow`` by the lists above; every ``kafka`` test is ``slow`` too, so
    ``-m "not slow"`` is the fast tier and ``-m "not kafka"`` the run without Java. The longest go first
    (``_rank``)."""
    for item in items:
        try:
            module = Path(str(item.path)).relative_to(TESTS).as_posix()
        except ValueError:
            continue
        node = module + item.nodeid.partition("::")[1] + item.name
        if any(item.get_closest_marker(name) is not None for name in ("spark", "kafka")) or node.startswith(_KAFKA):
            item.add_marker(pytest.mark.kafka)
            item.add_marker(pytest.mark.slow)
        elif node.startswith(_SLOW):
            item.add_marker(pytest.mark.slow)
    ranks = {item.nodeid: _rank(item, Path(str(item.path)).relative_to(TESTS).as_posix()) for item in items
             if Path(str(item.path)).is_relative_to(TESTS)}
    items.sort(key=lambda item: ranks.get(item.nodeid, len(_LONGEST) + 2))   # stable: each module keeps its order


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers per core, at most four (each may start a Spark JVM and brokers).

    The JVM tests wait on brokers, Spark and child processes between bursts of work, so a worker per
    core leaves cores idle (with four workers the run still averages 1.4 of 2 cores busy). The whole
    suite on 2 cores (a quiet machine, one run each): 609 s with 2 workers, 567 s with 3, 555 s with 4."""
    return max(1, min(2 * (os.cpu_count() or 1), 4))


def pytest_sessionstart(session: pytest.Session) -> None:
    """The notice of what the ``kafka`` tests fetch and start, once, before the first test (in the
    process that reports: not in an xdist worker); not when ``-m`` leaves them out."""
    config = session.config
    markexpr = config.option.markexpr or ""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if hasattr(config, "workerinput") or reporter is None or "not kafka" in markexpr or "not slow" in markexpr:
        return
    paths = [(config.invocation_params.dir / arg.split("::")[0]).resolve() for arg in config.args]
    if not any(TESTS.is_relative_to(p) or p.is_relative_to(TESTS / "kafka") or p.is_relative_to(TESTS / "spark")
               for p in paths):
        return   # a file or directory of tests without the Kafka ones
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
        f"kdump: the tests marked `kafka` run real Kafka and Spark: the Kafka jars live in {cache} "
        f"({size / 1e9:.1f} GB with the real tool's cached outputs and class-data archives for the JVMs, "
        f"made once; KDUMP_KAFKA_CACHE moves it), {fetch}; they start JVMs, single-node Kafka "
        f"brokers on 127.0.0.1 and a local Spark. Skip them with -m \"not kafka\" (or every slow test: -m \"not slow\")")


@pytest.fixture(scope="session", autouse=True)
def _children_temp_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """TMPDIR (and Python's tempfile) under basetemp for the whole session, so what children leave
    (a JVM's extracted native libraries, Spark's block manager dirs) is removed with basetemp."""
    tmp = tmp_path_factory.mktemp("children-tmp", numbered=False)
    # TMPDIR for every child; for a Spark a child starts (``kdump spark`` in a subprocess), its block
    # manager dirs and its driver JVM's java.io.tmpdir (spark-submit adds SPARK_SUBMIT_OPTS to the JVM).
    # The Spark drivers also get the class-data archive of tests/kafka/jvm_archive.py, once it is made, and
    # the JIT and collector every other test JVM uses: a test's Spark application lives seconds, in which
    # C2's compiler threads and G1's workers take CPU from the other xdist workers for no gain.
    sys.path.insert(0, str(TESTS / "kafka"))
    from jvm_archive import spark_archive_flags

    settings = {"TMPDIR": str(tmp), "SPARK_LOCAL_DIRS": str(tmp),
                "SPARK_SUBMIT_OPTS": f"-Djava.io.tmpdir={tmp} -XX:-UsePerfData -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "
                                     f"{spark_archive_flags()}".rstrip()}
    saved = {name: os.environ.get(name) for name in settings}, tempfile.tempdir
    os.environ.update(settings)
    tempfile.tempdir = str(tmp)
    try:
        yield tmp
    finally:
        for name, value in saved[0].items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
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
