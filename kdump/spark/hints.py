"""What to tell a person whose Spark cannot reach kdump: pure functions over Spark's error text and
configuration (no pyspark import), used by ``kdump spark`` and ``kdump.spark``.

Which Python runs Spark's Python workers (pyspark/context.py, Spark 4.0): ``spark.pyspark.python``
when set, else the driver's ``PYSPARK_PYTHON``, else ``python3`` found on each node's PATH. The same
interpreter runs the lookup of statically registered data sources
(python/pyspark/sql/worker/lookup_data_sources.py), which imports ``pyspark_kafka_log``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

SHIPPING = "docs/spark.md: Shipping kdump to a cluster"
_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([^']+)'")
_MISSING_SOURCE = re.compile(r"DATA_SOURCE_NOT_FOUND\] Failed to find the data source: ([^.\s]+)")
_PACKAGES = {"delta": "io.delta:delta-spark_2.13:<Delta release for your Spark>",
             "avro": "org.apache.spark:spark-avro_2.13:<your Spark version>"}


def worker_python(conf: Mapping[str, str], env: Mapping[str, str]) -> str:
    """The interpreter Spark's Python workers run, and where that choice comes from."""
    if conf.get("spark.pyspark.python"):
        return f"{conf['spark.pyspark.python']} (spark.pyspark.python)"
    if env.get("PYSPARK_PYTHON"):
        return f"{env['PYSPARK_PYTHON']} (PYSPARK_PYTHON)"
    return "python3 on the PATH (neither spark.pyspark.python nor PYSPARK_PYTHON is set)"


def missing_module_hint(text: str, python: str) -> str | None:
    """For a worker's ``ModuleNotFoundError`` in ``text``: what is missing, where, and how to ship it."""
    found = _MISSING_MODULE.search(text)
    if found is None:
        return None
    module = found.group(1)
    top = module.split(".")[0]
    ship = ("ship it with --py-files kdump.zip,pyspark_kafka_log.py (zip -r kdump.zip kdump)" if top == "kdump"
            else "ship it in an environment with --archives env.tar.gz#environment "
                 "--conf spark.pyspark.python=./environment/bin/python")
    return (f"Spark's Python workers cannot import {module} (ModuleNotFoundError): they run {python}; install "
            f"kdump[spark] for that Python, point --conf spark.pyspark.python at one that has it, or {ship} "
            f"({SHIPPING})")


def missing_source_hint(text: str, python: str) -> str | None:
    """For Spark's ``DATA_SOURCE_NOT_FOUND`` in ``text``: why the source is missing and what to do."""
    found = _MISSING_SOURCE.search(text)
    if found is None:
        return None
    name = found.group(1)
    if name.lower() == "kafka-log":
        return (f"Spark found no data source 'kafka-log': it looks Python data sources up with the Python its "
                f"workers run, {python}, which cannot import pyspark_kafka_log (installed with kdump); set "
                f"PYSPARK_PYTHON to a Python that has kdump before Spark starts, call kdump.spark.register(spark) "
                f"first, or ship --py-files kdump.zip,pyspark_kafka_log.py ({SHIPPING})")
    package = _PACKAGES.get(name.lower(), "<its Maven coordinates>")
    return f"Spark has no data source {name!r} on its classpath: add its package with --packages {package}"


def hint(text: str, conf: Mapping[str, str], env: Mapping[str, str]) -> str | None:
    """The hint for a Spark failure's text, or None when its cause is not one of the above."""
    python = worker_python(conf, env)
    return missing_module_hint(text, python) or missing_source_hint(text, python)


__all__ = ["hint", "missing_module_hint", "missing_source_hint", "worker_python"]
