"""What a broker decides from the files of ``kdump.log``: loading and recovery, producers and
transactions, the read_committed view, and writing log dirs as a broker does (``kdump gen``).

Each module follows one of Kafka's classes in
storage/src/main/java/org/apache/kafka/storage/internals/log/ and names it. This package reads and
writes files only through ``kdump.log``; nothing in ``kdump.log`` or ``kdump.format`` imports it.
"""
