"""Directories given to ``--files`` (a kdump extension): a partition directory or a whole ``log.dirs``
becomes its files, in the order a person reads them."""

from __future__ import annotations

import os

# kdump.log.logdir and kdump.log.remote_layout are imported where a directory is expanded: a dump of
# files named one by one (the common case, and a CI loop's) does not pay for them.


def _partition_files(directory: str) -> list[str]:
    """A partition directory's files: per base offset .log .index .timeindex .txnindex .snapshot,
    then everything else (checkpoints, partition.metadata, temporary files) by name."""
    from kdump.log.logdir import SUFFIX_ORDER, read_partition_dir

    part = read_partition_dir(directory)
    keyed: list[tuple[int, int, str]] = []
    for segment in part.segments:
        for path in segment.paths():
            keyed.append((segment.base_offset, SUFFIX_ORDER.index(os.path.splitext(path)[1]), path))
    for path in part.snapshots:
        keyed.append((int(os.path.basename(path).split(".", 1)[0]), SUFFIX_ORDER.index(".snapshot"), path))
    ordered = [p for _, _, p in sorted(keyed)] + sorted(part.other_files)
    return [os.path.join(directory, os.path.basename(p)) for p in ordered]


def _log_dir_files(directory: str) -> list[str]:
    """A log dir's own files, then its partition directories (by topic, partition), then other
    subdirectories (a parent of several log dirs) the same way."""
    from kdump.log.logdir import parse_partition_dir_name

    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    # Hidden files (a broker's .lock and .kafka_cleanshutdown, kdump's own output markers) hold no data.
    files = [os.path.join(directory, n) for n in names
             if not n.startswith(".") and os.path.isfile(os.path.join(directory, n))]
    partitions: list[tuple[str, int, str]] = []
    others: list[str] = []
    for name in names:
        full = os.path.join(directory, name)
        if not os.path.isdir(full):
            continue
        parsed = parse_partition_dir_name(name)
        if parsed is None:
            others.append(full)
        else:
            partitions.append((parsed[0], parsed[1], full))
    for _, _, full in sorted(partitions):
        files.extend(_partition_files(full))
    for full in others:
        files.extend(_log_dir_files(full))
    return files


def expand_paths(paths: list[str]) -> list[str]:
    """Replace each directory in ``paths`` by its files; other paths (even missing ones) stay as given.

    A partition directory gives its files (``_partition_files`` order); any other directory is
    taken as a log dir (or a parent of log dirs): its own files first, then each partition
    directory in it sorted by topic and partition number, then other subdirectories.
    """
    result: list[str] = []
    for path in paths:
        if not path or not os.path.isdir(path):
            result.append(path)
            continue
        from kdump.log.logdir import is_partition_dir
        from kdump.log.remote_layout import remote_files

        remote = remote_files(path)   # a remote store (tiered storage): its segments in offset order
        files = remote if remote is not None else _partition_files(path) if is_partition_dir(path) \
            else _log_dir_files(path)
        # A directory with no Kafka files stays as given, so the dump reports it instead of
        # silently printing nothing.
        result.extend(files or [path])
    return result
