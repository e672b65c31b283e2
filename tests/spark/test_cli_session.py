"""``kdump spark``'s session options (--conf, --packages, --py-files, --archives) and the Spark
failures it turns into one ``Error:`` line: executors without kdump, a writer format not on the
classpath. Also what ``export`` reports: the rows this run wrote."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from logbuild import write_partition

from kdump.cli.main import cli
from kdump.cli.spark import SessionSettings

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("session-logs") / "logs"
    write_partition(root, "orders", 0, segments=2, batches=3)
    return root


def test_session_options_become_spark_submit_settings() -> None:
    settings = SessionSettings("yarn", (("spark.executor.memory", "2g"), ("spark.a", "x=y")),
                               ("io.delta:delta-spark_2.13:4.0.0", "org.x:y:1"), ("/tmp/kdump.zip",),
                               ("env.tar.gz#environment",))
    config = settings.config()
    assert config["spark.jars.packages"] == "io.delta:delta-spark_2.13:4.0.0,org.x:y:1"
    assert config["spark.submit.pyFiles"] == "/tmp/kdump.zip"
    assert config["spark.archives"] == "env.tar.gz#environment"
    assert (config["spark.executor.memory"], config["spark.a"]) == ("2g", "x=y")


def test_quiet_unless_verbose_and_driver_java_options_kept() -> None:
    # A cluster master: a local driver's JVM options come between the two (tests/cli/test_local_driver_jvm.py).
    quiet = SessionSettings("yarn", conf=(("spark.driver.extraJavaOptions", "-Dmine=1"),)).config()
    ours, theirs = quiet["spark.driver.extraJavaOptions"].split(" ")
    assert ours.startswith("-Dlog4j2.configurationFile=file:") and theirs == "-Dmine=1"
    assert "rootLogger.level = fatal" in Path(ours.removeprefix("-Dlog4j2.configurationFile=file:")).read_text()
    loud = SessionSettings("yarn", conf=(("spark.driver.extraJavaOptions", "-Dmine=1"),), verbose=True).config()
    assert loud["spark.driver.extraJavaOptions"] == "-Dmine=1"
    assert "spark.driver.extraJavaOptions" not in SessionSettings("yarn", verbose=True).config()


def test_conf_must_be_key_value(logs: Path) -> None:
    code, _, err = run("spark", "verify", str(logs), "--conf", "spark.executor.memory")
    assert code == 2 and "'spark.executor.memory' is not KEY=VALUE" in err


def test_export_append_counts_the_rows_of_this_run(spark, logs: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    for _ in range(2):
        code, stdout, err = run("spark", "export", str(logs), "--to", str(out), "--mode", "append")
        assert (code, stdout) == (0, f"Wrote 120 record rows to {out} (parquet)\n"), err
    assert spark.read.parquet(str(out)).count() == 240
    code, stdout, _ = run("spark", "export", str(logs), "--to", str(out), "--mode", "ignore")
    assert (code, stdout) == (0, f"Wrote 0 record rows to {out} (parquet)\n")


def test_export_to_a_format_without_its_package(spark, logs: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    code, stdout, err = run("spark", "export", str(logs), "--to", str(tmp_path / "d"), "--format", "delta")
    assert (code, stdout) == (2, "")
    assert err == ("Error: Spark has no data source 'delta' on its classpath: add its package with "
                   "--packages io.delta:delta-spark_2.13:<Delta release for your Spark>\n")


def _python_without_kdump(root: Path) -> Path:
    """An interpreter for Spark's workers that cannot import kdump: this venv minus its editable install."""
    blocker = root / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\n"
        "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in getattr(f, '__module__', '')]\n"
        "sys.path[:] = [p for p in sys.path if p.rstrip('/') != " + repr(str(REPO)) + "]\n")
    wrapper = root / "python-without-kdump"
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={blocker}${{PYTHONPATH:+:$PYTHONPATH}} exec {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    return wrapper


def test_executors_without_kdump_give_one_line_and_py_files_ships_it(logs: Path, tmp_path: Path) -> None:
    env = dict(os.environ, PYSPARK_PYTHON=str(_python_without_kdump(tmp_path)), SPARK_LOCAL_IP="127.0.0.1")
    kdump = [sys.executable, "-m", "kdump", "spark", "verify", str(logs), "--master", "local[1]",
             "--conf", "spark.ui.enabled=false"]
    # The first driver starts with kdump's own collector and compiler (kdump.spark.driver_jvm): the tests'
    # SPARK_SUBMIT_OPTS (tests/conftest.py) choose theirs, so this run goes without that choice.
    own = " ".join(o for o in env.get("SPARK_SUBMIT_OPTS", "").split() if not o.startswith(("-XX:+Use", "-XX:Tiered")))
    done = subprocess.run(kdump, env=dict(env, SPARK_SUBMIT_OPTS=own), cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 2, done.stderr
    # One line: no JVM or Spark start-up noise (--verbose shows it), no Py4J error, no worker traceback.
    assert done.stderr == (
        f"Error: Spark's Python workers cannot import kdump (ModuleNotFoundError): they run "
        f"{env['PYSPARK_PYTHON']} (PYSPARK_PYTHON); install kdump[spark] for that Python, point --conf "
        f"spark.pyspark.python at one that has it, or ship it with --py-files kdump.zip,pyspark_kafka_log.py "
        f"(zip -r kdump.zip kdump) (docs/spark.md: Shipping kdump to a cluster)\n")
    bundle = tmp_path / "kdump.zip"
    with zipfile.ZipFile(bundle, "w") as z:
        for package in ("kdump", "pyspark_kafka_log"):
            for path in (REPO / package).rglob("*"):
                if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".so":
                    z.write(path, path.relative_to(REPO))
    # The second with the collector of SPARK_SUBMIT_OPTS: kdump adds none of its own (two collectors on one
    # command line would stop the JVM) and the driver starts.
    assert "-XX:+UseSerialGC" in env["SPARK_SUBMIT_OPTS"]
    done = subprocess.run([*kdump, "--py-files", str(bundle)], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("verify OK: ")


def test_export_read_committed_writes_the_consumers_records(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from test_isolation import FIXTURES, consumer_view

    out = tmp_path / "committed"
    code, stdout, err = run("spark", "export", str(FIXTURES / "txn-1"), "--to", str(out),
                            "--isolation", "read_committed")
    expected = consumer_view(FIXTURES / "txn-1")
    assert (code, stdout) == (0, f"Wrote {len(expected)} record rows to {out} (parquet)\n"), err
    back = sorted((r.offset, r.key, r.value) for r in spark.read.parquet(str(out)).collect())
    assert [(o, None if k is None else bytes(k), None if v is None else bytes(v)) for o, k, v in back] == expected
