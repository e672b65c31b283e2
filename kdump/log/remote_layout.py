"""Remote segments where a remote storage manager keeps them (KIP-405 tiered storage).

A remote store is not a log dir: its files are named by the remote segment's start offset *and* id, and a
remote segment carries its own producer snapshot (the producer state at the segment's end) and leader epoch
checkpoint (the partition's whole epoch history cut at the segment's end). A ``RemoteLayout`` says how one
store lays its segments out; kdump reads through it and nothing else, so another store plugs in as one
more ``RemoteLayout`` (see docs/tiered.md):

    class MyLayout:
        name = "my-store"
        def is_root(self, location) -> bool: ...                  # does `location` hold this layout?
        def partitions(self, location) -> Iterator[RemotePartition]: ...

``LOCAL_TIERED_STORAGE`` is the layout of Kafka's reference store, ``LocalTieredStorage`` (kafka-storage test
jar, 4.3.0: storage/src/test/java/org/apache/kafka/server/log/remote/storage/RemoteTopicPartitionDirectory.java
and RemoteLogSegmentFileset.java): ``<root>/kafka-tiered-storage/<topic>-<partition>-<topicId>/`` holding
``<start offset>-<segmentId>`` + ``.log``, ``.index``, ``.timeindex``, ``.snapshot``,
``.leader_epoch_checkpoint`` and, for segments with aborted transactions, ``.txnindex``. Ids are Kafka
``Uuid``s printed as 22 characters of base64url (they may hold ``-`` and ``_``, and start with either).

Listing goes through ``kdump.log.locations``, kdump's one way to reach files (local directories through
the os, s3://, gs://, hdfs:// through ``pyarrow.fs``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from kdump.errors import InputError
from kdump.log.locations import base_name, join, list_dir
from kdump.log.logdir import PartitionDir, SegmentFiles, walk_partitions

UUID_CHARS = r"[A-Za-z0-9_-]{22}"
# RemoteTopicPartitionDirectory.FILENAME_FORMAT: (Topic.LEGAL_CHARS+)-(\d+)-(UUID)
_PARTITION_DIR = re.compile(rf"^(?P<topic>[a-zA-Z0-9._-]+)-(?P<partition>\d+)-(?P<id>{UUID_CHARS})$")
# RemoteLogSegmentFileset.FILENAME_FORMAT: (\d+-)(UUID)(\.[a-z_]+)
_SEGMENT_FILE = re.compile(rf"^(?P<start>\d+)-(?P<id>{UUID_CHARS})"
                           r"\.(?P<suffix>log|index|timeindex|txnindex|snapshot|leader_epoch_checkpoint)$")
# RemoteIndexCache (storage, 4.3.0): the broker's cache of remote indexes in its log dir, files named
# <start offset>_<segmentId>.index|.timeindex|.txnindex: not a partition dir
INDEX_CACHE_DIR = "remote-log-index-cache"
_INDEX_CACHE_FILE = re.compile(rf"^(?P<start>\d+)_(?P<id>{UUID_CHARS})\.(?P<suffix>index|timeindex|txnindex)$")
STORAGE_DIR = "kafka-tiered-storage"   # LocalTieredStorage.STORAGE_DIR_NAME
REMOTE_EPOCH_SUFFIX = ".leader_epoch_checkpoint"


@dataclass(frozen=True, slots=True)
class RemotePartition:
    location: str
    topic: str
    partition: int
    topic_id: str
    segments: tuple[SegmentFiles, ...]   # remote segments (``remote_id`` set), ascending start offset, then id
    other_files: tuple[str, ...] = ()


class RemoteLayout(Protocol):
    name: str

    def is_root(self, location: str) -> bool: ...

    def partitions(self, location: str) -> Iterator[RemotePartition]: ...


_FIELDS = {"log": "log", "index": "index", "timeindex": "time_index", "txnindex": "txn_index",
           "snapshot": "snapshot", "leader_epoch_checkpoint": "leader_epoch_checkpoint"}


def parse_remote_segment_name(name: str) -> tuple[int, str, str] | None:
    """(start offset, segment id, suffix) of a LocalTieredStorage file name, None for anything else."""
    match = _SEGMENT_FILE.match(name)
    if match is None:
        return None
    return int(match.group("start")), match.group("id"), match.group("suffix")


def parse_index_cache_name(name: str) -> tuple[int, str, str] | None:
    """(start offset, segment id, suffix) of a file of the broker's remote-log-index-cache/, or None."""
    match = _INDEX_CACHE_FILE.match(name)
    return None if match is None else (int(match.group("start")), match.group("id"), match.group("suffix"))


def parse_remote_partition_name(name: str) -> tuple[str, int, str] | None:
    """(topic, partition, topic id) of a ``<topic>-<partition>-<topicId>`` directory name."""
    match = _PARTITION_DIR.match(name)
    if match is None:
        return None
    return match.group("topic"), int(match.group("partition")), match.group("id")


def group_segments(names: Iterable[str], location: str) -> tuple[list[SegmentFiles], list[str]]:
    """The remote segments among ``names`` (files of ``location``), and the other names' locations."""
    by_id: dict[tuple[int, str], dict[str, str]] = {}
    others: list[str] = []
    for name in names:
        parsed = parse_remote_segment_name(name)
        if parsed is None:
            others.append(join(location, name))
            continue
        start, segment_id, suffix = parsed
        by_id.setdefault((start, segment_id), {})[_FIELDS[suffix]] = join(location, name)
    segments = [SegmentFiles(start, files.get("log"), files.get("index"), files.get("time_index"),
                             files.get("txn_index"),
                             remote_id=segment_id, snapshot=files.get("snapshot"),
                             leader_epoch_checkpoint=files.get("leader_epoch_checkpoint"))
                for (start, segment_id), files in sorted(by_id.items())]
    return segments, others


class LocalTieredStorageLayout:
    name = "LocalTieredStorage"

    def _storage_dir(self, location: str) -> str | None:
        base = base_name(location)
        if base == STORAGE_DIR:
            return location
        try:
            names = dict(list_dir(location))
        except InputError:
            return None
        return join(location, STORAGE_DIR) if names.get(STORAGE_DIR) else None

    def is_root(self, location: str) -> bool:
        """A store's root or its kafka-tiered-storage dir, or a partition dir holding remote segment files
        (a name alone could be a local partition's: a topic may be called ``t-1-<22 characters>``)."""
        if self._storage_dir(location) is not None:
            return True
        if not self.is_partition(location):
            return False
        try:
            return any(parse_remote_segment_name(name) for name, _ in list_dir(location))
        except InputError:
            return False

    @staticmethod
    def is_partition(location: str) -> bool:
        base = base_name(location)
        return parse_remote_partition_name(base) is not None

    def read_partition(self, location: str) -> RemotePartition:
        base = base_name(location)
        parsed = parse_remote_partition_name(base)
        if parsed is None:
            raise InputError("not a remote partition directory (expected <topic>-<partition>-<topicId>)",
                             path=location)
        names = [name for name, is_dir in list_dir(location) if not is_dir]
        segments, others = group_segments(names, location)
        return RemotePartition(location, *parsed, segments=tuple(segments), other_files=tuple(others))

    def partitions(self, location: str) -> Iterator[RemotePartition]:
        """Every remote partition under ``location`` (the store's root, its kafka-tiered-storage dir, or one
        partition's dir), sorted by topic, partition and topic id."""
        if self.is_partition(location):
            yield self.read_partition(location)
            return
        storage = self._storage_dir(location)
        if storage is None:
            raise InputError(f"not a {self.name} root (no {STORAGE_DIR}/ inside)", path=location)
        dirs = [(parsed, name) for name, is_dir in list_dir(storage) if is_dir
                and (parsed := parse_remote_partition_name(name)) is not None]
        for _, name in sorted(dirs):
            yield self.read_partition(join(storage, name))


LOCAL_TIERED_STORAGE = LocalTieredStorageLayout()
LAYOUTS: tuple[RemoteLayout, ...] = (LOCAL_TIERED_STORAGE,)
"""The layouts kdump knows, tried in order; a new store's layout is appended here."""


def layout_of(location: str) -> RemoteLayout | None:
    """The layout whose root (or partition dir) ``location`` is, None when none claims it."""
    return next((layout for layout in LAYOUTS if layout.is_root(location)), None)


def remote_partitions(location: str) -> Iterator[RemotePartition]:
    layout = layout_of(location)
    if layout is None:
        raise InputError("not a remote store root kdump knows (" + ", ".join(x.name for x in LAYOUTS) + ")",
                         path=location)
    yield from layout.partitions(location)


def remote_files(location: str) -> list[str] | None:
    """Every file of the remote store at ``location`` per partition in offset order (a segment's .log, .index,
    .timeindex, .txnindex, .snapshot, .leader_epoch_checkpoint), then other files; None if it is no store."""
    if layout_of(location) is None:
        return None
    files: list[str] = []
    for part in remote_partitions(location):
        for seg in part.segments:
            files.extend(seg.paths() + seg.state_paths())
        files.extend(part.other_files)
    return files


def as_partition_dir(part: RemotePartition) -> PartitionDir:
    """A remote partition as the log layer's partition walk gives a local one: its segments by start offset.
    Its snapshots and epoch checkpoints stay out: they are per segment, not the partition's own files."""
    return PartitionDir(part.location, part.topic, part.partition, None,
                        tuple(s for s in part.segments if s.log is not None), (),
                        part.other_files)


def remote_partition_dirs(location: str) -> list[PartitionDir] | None:
    """``as_partition_dir`` of every partition of the remote store at ``location``; None if it is no store."""
    if layout_of(location) is None:
        return None
    return [as_partition_dir(p) for p in remote_partitions(location)]


def walk_any(path: str) -> Iterator[PartitionDir]:
    """``logdir.walk_partitions``, or a remote store's partitions when ``path`` is one (verify, summary)."""
    remote = remote_partition_dirs(path)
    yield from remote if remote is not None else walk_partitions(path)
