"""The JVM options kdump gives the driver of a local Spark session (kdump.spark.driver_jvm), and how
``kdump spark``'s session settings carry them: no JVM needed. That a driver really starts with them,
and with a collector the user chose instead, is shown by test_cli_session's ``kdump spark verify``
runs in fresh processes."""

from __future__ import annotations

import pytest

from kdump.cli.spark import SessionSettings
from kdump.spark.driver_jvm import C1_ONLY, JAVA_OPTIONS_ENV, PARALLEL_GC, is_local, local_driver_options


@pytest.mark.parametrize("master", ["local", "local[1]", "local[*]", "local[4,2]"])
def test_a_local_master_runs_the_tasks_in_the_driver(master: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert is_local(master)
    assert local_driver_options(master, "", {}, rows_in_jvm=False) == [PARALLEL_GC, C1_ONLY]
    assert local_driver_options(master, "", {}, rows_in_jvm=True) == []   # Spark's defaults where rows cross


@pytest.mark.parametrize("master", ["spark://127.0.0.1:7077", "yarn", "k8s://https://k:443", "local-cluster[2,1,1024]",
                                    "localhost"])
def test_other_masters_keep_the_jvm_defaults(master: str) -> None:
    assert not is_local(master)
    assert local_driver_options(master, "", {}, rows_in_jvm=False) == []


@pytest.mark.parametrize("theirs", ["-XX:+UseG1GC", "-Xmx2g -XX:+UseZGC", "-XX:-UseParallelGC", "-XX:+UseShenandoahGC"])
def test_a_collector_the_user_chose_wins(theirs: str) -> None:
    """Two collectors on one command line: the JVM refuses to start ("Multiple garbage collectors selected")."""
    assert local_driver_options("local[2]", theirs, {}, rows_in_jvm=False) == [C1_ONLY]
    for variable in JAVA_OPTIONS_ENV:
        assert local_driver_options("local[2]", "", {variable: theirs}, rows_in_jvm=False) == [C1_ONLY]
    settings = SessionSettings("local[2]", (("spark.driver.defaultJavaOptions", theirs),))
    assert PARALLEL_GC not in settings.config(rows_in_jvm=False)["spark.driver.extraJavaOptions"]


@pytest.mark.parametrize("theirs", ["-XX:TieredStopAtLevel=4", "-XX:-TieredCompilation"])
def test_a_compiler_setting_the_user_chose_wins(theirs: str) -> None:
    assert local_driver_options("local[2]", theirs, {}, rows_in_jvm=False) == [PARALLEL_GC]


def test_flags_that_only_look_alike_do_not_count() -> None:
    assert local_driver_options("local[2]", "-XX:+UseGCOverheadLimit -Dx=-XX:+UseG1GCx", {},
                                rows_in_jvm=False) == [PARALLEL_GC, C1_ONLY]


def test_session_settings_put_them_between_the_quiet_log4j_and_the_users_options(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in JAVA_OPTIONS_ENV:
        monkeypatch.delenv(variable, raising=False)
    settings = SessionSettings("local[2]", (("spark.driver.extraJavaOptions", "-Dmine=1"),))
    log4j, *ours, theirs = settings.config(rows_in_jvm=False)["spark.driver.extraJavaOptions"].split(" ")
    assert log4j.startswith("-Dlog4j2.configurationFile=") and ours == [PARALLEL_GC, C1_ONLY] and theirs == "-Dmine=1"
    loud = SessionSettings("local[2]", verbose=True)
    assert loud.config(rows_in_jvm=False)["spark.driver.extraJavaOptions"] == f"{PARALLEL_GC} {C1_ONLY}"
    assert "spark.driver.extraJavaOptions" not in loud.config(rows_in_jvm=True)
    assert "spark.driver.extraJavaOptions" not in SessionSettings("yarn", verbose=True).config(rows_in_jvm=False)
