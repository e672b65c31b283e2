"""A remote store's layout listed through ``pyarrow.fs`` (s3://, gs://, hdfs://, file://): the ``Store`` that
``kdump.log.remote_layout`` lists with, and the opener its segments are read with (both in
``kdump.log.arrow_files``, shared with ``kdump replicas``)."""

from __future__ import annotations

from kdump.log.arrow_files import ARROW, ArrowStore
from kdump.log.locations import open_any

__all__ = ["ARROW", "ArrowStore", "open_any"]
