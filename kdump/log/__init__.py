"""The only layer that touches files: bounded reads of segments and indexes, lookups, log dirs, the writer.

``locations`` is the one way to reach a file, a local path or an s3://, gs://, hdfs:// URI (``arrow_files``
over ``pyarrow.fs``); ``logdir.SegmentFiles`` is the one segment type, local or remote (``remote_layout``
lists a remote store's); ``files`` names and parses every file name a broker writes.
"""
