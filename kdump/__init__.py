"""kdump: see what is really on disk in an Apache Kafka log directory.

A Python clone of Kafka's ``kafka-dump-log.sh`` (DumpLogSegments) plus index verification,
a broker-faithful segment writer and a PySpark data source. Layers, innermost first:
``format`` (bytes in, model objects out) -> ``log`` (files, mmap, writer) -> ``verify`` ->
``render`` -> ``cli``; ``spark`` sits beside ``cli`` on top of ``log`` and ``format``.
"""

__version__ = "0.1.0"
