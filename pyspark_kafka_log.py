"""Static registration of the ``kafka-log`` data source.

PySpark imports every top-level module whose name starts with ``pyspark_`` and registers its
``DefaultSource`` under ``DefaultSource.name()``, so ``spark.read.format("kafka-log")`` works with
no ``spark.dataSource.register`` call once kdump is installed (or shipped with --py-files).
"""

from kdump.spark.datasource import KafkaLogDataSource as DefaultSource

__all__ = ["DefaultSource"]
