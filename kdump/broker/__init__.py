"""What a broker decides from the files of ``kdump.log``: loading and recovery, producers and
transactions, the read_committed view, and the files a broker keeps beside its segments.

Each module follows one of Kafka's classes in
storage/src/main/java/org/apache/kafka/storage/internals/log/ and names it. This package reads and
writes files only through ``kdump.log``; nothing in ``kdump.log`` or ``kdump.format`` imports it, and
the fixture writers of ``kdump gen`` sit above it (``kdump.gen``).
"""
