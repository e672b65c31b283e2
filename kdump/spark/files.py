"""Files at local paths or s3://, gs://, hdfs://, file:// URIs, read through ``pyarrow.fs``.

``ArrowFile`` and ``filesystem`` live in the log layer (``kdump.log.arrow_files``, which ``kdump replicas``
reads URIs through too); the data source's tasks open segments with ``open_any``.
"""

from __future__ import annotations

from kdump.log.arrow_files import ArrowFile, filesystem
from kdump.log.locations import open_any

__all__ = ["ArrowFile", "filesystem", "open_any", "read_small_file"]


def read_small_file(location: str) -> bytes:
    fs, path = filesystem(location)
    with fs.open_input_file(path) as f:
        return f.read()
