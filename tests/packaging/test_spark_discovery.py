"""``spark.read.format("kafka-log")`` with no ``register`` call, from a directory outside the repo.

PySpark 4 finds Python data sources in a separate process with ``pkgutil.iter_modules()``
(python/pyspark/sql/worker/lookup_data_sources.py), which sees only modules on ``sys.path`` itself,
not setuptools' editable import hook, and not the inside of a ``--py-files`` zip. Each test installs
or ships kdump one way; from a wheel and from a zip it reads a bundled partition on a real ``local``
SparkSession (the row count comes from kafka-python reading the same segments), from an editable
install it runs PySpark's lookup function itself, which is the part that differs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from installs import ROOT, clean_env, pip_install, run, venv_with_dependencies

sys.path.insert(0, str(ROOT / "tests" / "spark"))

from logbuild import skip_reason

pytestmark = pytest.mark.spark

PARTITION = ROOT / "fixtures" / "logdirs" / "txn-1"
WARNING = "Warning: kdump's C accelerators are not loaded"

JOB = """
import json, sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master(sys.argv[2]).appName("kdump-discovery")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
rows = spark.read.format("kafka-log").load(sys.argv[1]).count()
import kdump, pyspark_kafka_log
print(json.dumps({"rows": rows, "kdump": kdump.__file__, "module": pyspark_kafka_log.__file__}))
spark.stop()
"""


@pytest.fixture(scope="module", autouse=True)
def _java() -> None:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)


def kafka_python_record_count(partition: Path) -> int:
    from kafka.record import MemoryRecords

    count = 0
    for segment in sorted(partition.glob("*.log")):
        records = MemoryRecords(segment.read_bytes())
        while (batch := records.next_batch()) is not None:
            count += sum(1 for _ in batch)
    return count


def _spark_env(python: Path) -> dict[str, str]:
    return clean_env(PYSPARK_PYTHON=str(python), PYSPARK_DRIVER_PYTHON=str(python), SPARK_LOCAL_IP="127.0.0.1")


def _read(python: Path, cwd: Path) -> dict[str, object]:
    job = cwd / "job.py"
    job.write_text(JOB)
    done = run([python, job, PARTITION, "local[1]"], cwd=cwd, env=_spark_env(python))
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_from_a_wheel(wheel: Path, tmp_path: Path) -> None:
    python = venv_with_dependencies(tmp_path / "venv")
    pip_install(python, wheel)
    got = _read(python, tmp_path)
    assert got["rows"] == kafka_python_record_count(PARTITION)
    assert str(got["kdump"]).startswith(str(tmp_path / "venv"))
    assert str(got["module"]).startswith(str(tmp_path / "venv"))


# PySpark's own lookup (the function its lookup process runs), fed and read as the JVM feeds and reads
# it: an int count, then each source's name and pickled class, each after its length.
LOOKUP = """
import io, json, pickle, struct, sys
from pyspark.sql.worker.lookup_data_sources import _main
out = io.BytesIO()
_main(io.BytesIO(), out)
data, pos, found = out.getvalue(), 4, {}
for _ in range(struct.unpack(">i", data[:4])[0]):
    (size,) = struct.unpack(">i", data[pos:pos + 4]); name = data[pos + 4:pos + 4 + size].decode(); pos += 4 + size
    (size,) = struct.unpack(">i", data[pos:pos + 4]); source = pickle.loads(data[pos + 4:pos + 4 + size]); pos += 4 + size
    found[name] = sys.modules[source.__module__].__file__
import kdump
print(json.dumps({"found": found, "kdump": kdump.__file__}))
"""


def test_from_an_editable_install(tmp_path: Path) -> None:
    # The case pkgutil.iter_modules() can miss (setuptools' editable finder). What the found class
    # then does in a Spark task is the wheel's test above: here only the lookup runs, not a Spark.
    python = venv_with_dependencies(tmp_path / "venv")
    pip_install(python, "-e", ROOT)
    done = run([python, "-c", LOOKUP], cwd=tmp_path, env=_spark_env(python))
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["found"].get("kafka-log") == str(ROOT / "pyspark_kafka_log.py")
    assert got["kdump"] == str(ROOT / "kdump" / "__init__.py")


def test_from_py_files_zip_warns_once_that_the_accelerators_are_off(tmp_path: Path) -> None:
    # docs/spark.md's recipe: the kdump package in a zip, pyspark_kafka_log.py beside it.
    archive = tmp_path / "kdump.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted((ROOT / "kdump").rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".so", ".pyd"):
                out.write(path, path.relative_to(ROOT))
    python = venv_with_dependencies(tmp_path / "venv")   # no kdump installed
    assert subprocess.run([python, "-c", "import kdump"], cwd=tmp_path, env=clean_env(),
                          capture_output=True).returncode != 0
    job = tmp_path / "job.py"
    job.write_text(JOB)
    spark_submit = Path(sysconfig.get_paths()["purelib"]) / "pyspark" / "bin" / "spark-submit"
    done = run([spark_submit, "--master", "local[2]", "--conf", "spark.ui.enabled=false",
                "--driver-java-options", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1", "--py-files", f"{archive},{ROOT / 'pyspark_kafka_log.py'}",
                job, PARTITION, "local[2]"], cwd=tmp_path, env=_spark_env(python))
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["rows"] == kafka_python_record_count(PARTITION)
    assert str(got["kdump"]).endswith("kdump.zip/kdump/__init__.py")
    # Three segments, three tasks on two Python workers, all without the accelerators: one line says so.
    assert done.stderr.count(WARNING) == 1
    assert "kdump is imported from a zip archive" in done.stderr
