"""kdump: see what is really on disk in an Apache Kafka log directory.

A Python clone of Kafka's ``kafka-dump-log.sh`` (DumpLogSegments) plus index verification,
a broker-faithful segment writer and a PySpark data source. Layers, innermost first:
``format`` (bytes in, model objects out) -> ``log`` (files through bounded reads, the writer) ->
``broker`` (what a broker decides from them) -> ``verify`` -> ``render`` -> ``dump`` -> ``cli``;
``gen`` (``kdump gen``'s writers) sits above ``broker``, ``spark`` beside ``cli``, and ``arrow``
(segments as Arrow batches and Parquet) below both (docs/ARCHITECTURE.md).
"""

__version__ = "0.1.0"
