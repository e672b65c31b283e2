"""Static registration of the ``kafka-log`` data source.

PySpark 4 looks data sources up in a separate Python process
(python/pyspark/sql/worker/lookup_data_sources.py, Spark v4.0.0 on): ``pkgutil.iter_modules()``
over ``sys.path``, importing every top-level module whose name starts with ``pyspark_`` and
registering its ``DefaultSource`` under ``DefaultSource.name()``. So ``spark.read.format("kafka-log")``
works with no ``spark.dataSource.register`` call wherever this file is on ``sys.path`` itself:
installed from a wheel (site-packages), installed editable (setuptools puts the checkout on the
path, see ``package-dir`` in pyproject.toml), or shipped as ``--py-files kdump.zip,pyspark_kafka_log.py``.

A module, not a package, so that the last case works: Spark copies ``--py-files`` into its
``userFiles`` directory, which the lookup and planning processes have on ``sys.path``, while the
zips are put on the path of tasks only. This file then finds the kdump zip beside it. And
``DefaultSource`` is defined here, so Spark's pickled reference to it brings this module (and
with it the zip) into every process that unpickles the source.
"""

from __future__ import annotations

import os
import sys
import zipfile


def _kdump_zip_beside_this_file() -> str | None:
    """A zip next to this file holding the kdump package (``--py-files kdump.zip,pyspark_kafka_log.py``)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        path = os.path.join(here, name)
        if name.endswith(".zip") and zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                if "kdump/__init__.py" in archive.namelist():
                    return path
    return None


try:
    import kdump  # noqa: F401
except ImportError:
    _zip = _kdump_zip_beside_this_file()
    if _zip is None:
        raise
    sys.path.append(_zip)

from kdump.spark.datasource import KafkaLogDataSource  # noqa: E402


class DefaultSource(KafkaLogDataSource):
    """``kafka-log``: kdump's data source under the name PySpark's static lookup expects."""


__all__ = ["DefaultSource"]
