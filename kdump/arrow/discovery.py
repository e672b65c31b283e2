"""Finding segments: log.dirs, partition dirs, ``.log`` files, globs and lists of them, local or remote.

Files are listed through ``kdump.log.locations`` (the os for local paths, ``pyarrow.fs`` for s3://, gs:// and
hdfs:// locations), as every other reader of kdump lists them. A partition directory is known by its name
(``<topic>-<partition>``); ``-delete``, ``-future`` and ``-stray`` copies are skipped. The log dir above it
may hold ``meta.properties``, whose ``node.id`` (KRaft) or ``broker.id`` (ZooKeeper) names the broker the
replica belongs to.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from kdump.arrow.tiers import merge_tiers
from kdump.errors import InputError
from kdump.log.files import parse_segment_file_name
from kdump.log.locations import absolute, glob, is_glob, is_uri, stat, walk_files
from kdump.log.logdir import SegmentFiles, parse_partition_dir_name
from kdump.log.remote_layout import parse_remote_partition_name, parse_remote_segment_name
from kdump.log.state_files import read_log_dir_identity

_SEGMENT_SUFFIXES = {"log", "index", "timeindex", "txnindex"}


@dataclass(frozen=True, slots=True)
class Segment:
    """One segment of a partition where discovery found it: its files (kdump's one segment type,
    ``kdump.log.logdir.SegmentFiles``, local or remote), the partition and log dir it belongs to, and what
    planning learned about it. Paths are URIs or absolute local paths."""

    topic: str
    partition: int
    files: SegmentFiles                     # its .log is always there
    size: int                               # of the .log
    next_base_offset: int | None = None     # the next segment's base: an exclusive offset bound
    log_dir: str = ""                       # the directory above the partition directory
    broker: int | None = None               # meta.properties' node.id / broker.id there, when present
    history: str = ""                       # the partition dir whose history a remote segment continues (tiers.py)

    @property
    def base_offset(self) -> int:
        return self.files.base_offset

    @property
    def log(self) -> str:
        assert self.files.log is not None
        return self.files.log

    @property
    def index(self) -> str | None:
        return self.files.index

    @property
    def time_index(self) -> str | None:
        return self.files.time_index

    @property
    def txn_index(self) -> str | None:
        return self.files.txn_index

    @property
    def remote(self) -> bool:
        return self.files.remote


def _without_query(uri: str) -> str:
    return uri.split("?", 1)[0] if "://" in uri else uri


def shown_location(uri: str) -> str:
    """A location as data may show it (the ``path`` column): no query, no credentials."""
    if "://" not in uri:
        return uri
    parts = urlsplit(_without_query(uri))
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"


# ---- discovery -------------------------------------------------------------------------------

def find_segments(locations: Iterable[str]) -> list[Segment]:
    """Every segment under the given log.dirs, partition dirs, .log files or globs of them."""
    # (partition dir, topic, partition) -> base offset -> {suffix: (location, size)}, and the remote ids
    groups: dict[tuple[str, str, int], dict[int, dict[str, tuple[str, int]]]] = {}
    remote_ids: dict[tuple[str, int], str] = {}
    for location in locations:
        for uri, size in _expand(location):
            parent, name = posixpath.split(_without_query(uri).rstrip("/"))
            local = parse_segment_file_name(name)
            remote = parse_remote_segment_name(name) if local is None else None   # tiered storage's store
            remote_dir = parse_remote_partition_name(posixpath.basename(parent)) if remote is not None else None
            if local is not None and not local[2] and local[1] in _SEGMENT_SUFFIXES:
                base, suffix = local[0], local[1]
                parsed = parse_partition_dir_name(posixpath.basename(parent))
                if parsed is not None and parsed[2] is not None:
                    continue                      # -delete/-future/-stray copies: not the live log
                topic, partition = (parsed[0], parsed[1]) if parsed else ("", -1)
            elif remote is not None and remote_dir is not None and remote[2] in _SEGMENT_SUFFIXES:
                (base, segment_id, suffix), (topic, partition) = remote, remote_dir[:2]
                remote_ids[(parent, base)] = segment_id
            else:
                continue
            groups.setdefault((parent, topic, partition), {}).setdefault(base, {})[suffix] = (uri, size)
    segments = []
    brokers: dict[str, int | None] = {}
    for (parent, topic, partition), by_base in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0])):
        bases = sorted(b for b, files in by_base.items() if "log" in files)
        log_dir = posixpath.dirname(parent)
        for i, base in enumerate(bases):
            files = by_base[base]
            log, size = files["log"]
            if log_dir not in brokers:
                brokers[log_dir] = broker_id(log_dir + log[len(_without_query(log)):])
            found = SegmentFiles(base, log, files.get("index", (None, 0))[0], files.get("timeindex", (None, 0))[0],
                                 files.get("txnindex", (None, 0))[0], remote_id=remote_ids.get((parent, base)))
            segments.append(Segment(topic, partition, found, size, bases[i + 1] if i + 1 < len(bases) else None,
                                    log_dir, brokers[log_dir]))
    return merge_tiers(segments)


def require_segments(locations: Iterable[str]) -> list[Segment]:
    """``find_segments``, or an error saying nothing was found (a typo'd path would read as empty)."""
    locations = list(locations)
    segments = find_segments(locations)
    if not segments:
        raise InputError("no Kafka segments (<20-digit offset>.log) found here", path=", ".join(locations))
    return segments


def broker_id(log_dir: str) -> int | None:
    """The broker a log dir belongs to (kdump.log.state_files.read_log_dir_identity, as ``kdump replicas`` reads
    it); ``log_dir`` keeps its URI's ``?...``, which the filesystem needs to open it."""
    return read_log_dir_identity(log_dir).broker


def _expand(location: str) -> Iterator[tuple[str, int]]:
    """(location, size) of every file at, below or matching ``location`` (kdump.log.locations)."""
    if is_glob(location):
        matches = glob(location)
        if not matches:
            raise InputError("no file or directory matches this pattern", path=location)
    else:
        matches = [location]
    for match in matches:
        found = stat(match)
        if found is None:
            raise InputError("No such file or directory (NoSuchFileException)", path=location)
        kind, size = found
        if kind == "dir":
            yield from walk_files(match)
            continue
        match = absolute(match)
        yield match, size
        # A single .log named on its own still gets its indexes, for splitting and pruning.
        stem = match.rsplit(".", 1)[0] if not is_uri(match) else None
        for suffix in (".index", ".timeindex", ".txnindex"):
            sibling = stem + suffix if stem is not None else _sibling(match, suffix)
            if sibling != match and (info := stat(sibling)) is not None and info[0] == "file":
                yield sibling, info[1]


def _sibling(uri: str, suffix: str) -> str:
    """``uri``'s file with its last extension replaced by ``suffix`` (its ``?query`` kept)."""
    parts = urlsplit(uri)
    return parts._replace(path=parts.path.rsplit(".", 1)[0] + suffix).geturl()
