"""Kafka's DumpLogSegments as a library: ``dump_files(paths, DumpOptions(...), out=...) -> DumpResult``.

The ``kdump --files`` command only turns its options into ``DumpOptions`` and calls ``dump_files``.
"""

from kdump.dump.files import DumpResult, dump_files, dump_records_from
from kdump.dump.paths import expand_paths
from kdump.dump.run import DumpOptions

__all__ = ["DumpOptions", "DumpResult", "dump_files", "dump_records_from", "expand_paths"]
