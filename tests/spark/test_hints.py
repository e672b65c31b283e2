"""``kdump.spark.hints`` without Spark: the one line a person gets when Spark's workers lack kdump or
``spark.read.format("kafka-log")`` finds no source. The error texts are Spark 4.0's
(common/utils/src/main/resources/error/error-conditions.json: DATA_SOURCE_NOT_FOUND) and Python's."""

from __future__ import annotations

from kdump.spark.hints import hint, worker_python

NOT_FOUND = ("[DATA_SOURCE_NOT_FOUND] Failed to find the data source: kafka-log. Make sure the provider name "
             "is correct and the package is properly registered and compatible with your Spark version. "
             "SQLSTATE: 42K02")
NO_MODULE = "  File \"<frozen importlib._bootstrap>\", line 1, in ...\nModuleNotFoundError: No module named 'kdump'\n"


def test_worker_python_follows_spark_s_order() -> None:
    conf = {"spark.pyspark.python": "./environment/bin/python"}
    assert worker_python(conf, {"PYSPARK_PYTHON": "/usr/bin/python3.12"}) == \
        "./environment/bin/python (spark.pyspark.python)"
    assert worker_python({}, {"PYSPARK_PYTHON": "/usr/bin/python3.12"}) == "/usr/bin/python3.12 (PYSPARK_PYTHON)"
    assert worker_python({}, {}).startswith("python3 on the PATH")


def test_kafka_log_not_found_names_the_python_and_the_ways_out() -> None:
    text = hint(NOT_FOUND, {}, {"PYSPARK_PYTHON": "/usr/bin/python3"})
    assert text is not None and text.startswith("Spark found no data source 'kafka-log': ")
    assert "/usr/bin/python3 (PYSPARK_PYTHON)" in text and "kdump.spark.register(spark)" in text
    assert "--py-files kdump.zip,pyspark_kafka_log.py" in text


def test_other_sources_and_modules() -> None:
    delta = hint(NOT_FOUND.replace("kafka-log", "delta"), {}, {})
    assert delta == ("Spark has no data source 'delta' on its classpath: add its package with "
                     "--packages io.delta:delta-spark_2.13:<Delta release for your Spark>")
    arrow = hint(NO_MODULE.replace("'kdump'", "'pyarrow'"), {}, {"PYSPARK_PYTHON": "/opt/py"})
    assert arrow is not None and "cannot import pyarrow" in arrow and "/opt/py (PYSPARK_PYTHON)" in arrow
    assert "--archives env.tar.gz#environment" in arrow
    assert hint("java.lang.OutOfMemoryError: Java heap space", {}, {}) is None
