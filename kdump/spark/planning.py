"""From paths to work: find segments through ``pyarrow.fs``, cut them into byte ranges, prune.

Runs once on the driver (Spark's planner process). Everything returned is a plain frozen dataclass
so it pickles into tasks without pyspark. Splits are cut only at batch positions taken from the
segment's ``.index`` (every entry points at the start of an entry in the ``.log``), so a task never
has to resynchronise in the middle of a batch.

Pruning trusts the indexes and Kafka's invariants (offsets increase through a partition, a rolled
segment's last time-index entry holds its largest timestamp). It only ever drops work that cannot
hold a matching row, and Spark still re-applies every filter, so a wrong index costs rows only if
it is corrupt: run ``kdump spark verify`` first on data you do not trust.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

import pyarrow.fs as pafs

from kdump.errors import InputError
from kdump.format.index import (
    OFFSET_ENTRY_SIZE,
    TIME_ENTRY_SIZE,
    count_entries,
    is_padding,
    read_offset_entry,
    read_time_entry,
)
from kdump.log.files import parse_java_long
from kdump.log.logdir import parse_partition_dir_name

DEFAULT_SPLIT_BYTES = 128 * 1024 * 1024
_SEGMENT_SUFFIXES = {"log", "index", "timeindex"}
_GLOB_CHARS = set("*?[")


@dataclass(frozen=True, slots=True)
class Segment:
    """One ``.log`` file and what planning learned about it. Paths are URIs or absolute local paths."""

    topic: str
    partition: int
    base_offset: int
    log: str
    size: int
    index: str | None = None
    time_index: str | None = None
    next_base_offset: int | None = None     # the next segment's base: an exclusive offset bound


@dataclass(frozen=True, slots=True)
class Split:
    """A byte range [start, end) of a segment that starts at a batch and ends before one."""

    segment: Segment
    start: int
    end: int
    min_offset: int                 # no entry in the range holds a smaller offset
    max_offset: int | None          # ... nor a larger one (None: unknown)


@dataclass(frozen=True, slots=True)
class Pruning:
    """Conjunctive bounds taken from pushed filters; None means unbounded."""

    topics: frozenset[str] | None = None
    partitions: frozenset[int] | None = None
    offset_min: int | None = None
    offset_max: int | None = None
    timestamp_min: int | None = None    # only a lower bound helps: indexes keep maxima, not minima

    @property
    def is_empty(self) -> bool:
        return self == Pruning()


# ---- filesystems -----------------------------------------------------------------------------

def filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    """(filesystem, path inside it) for a local path or an s3://, gs://, hdfs://, file:// URI."""
    if "://" in location:
        return pafs.FileSystem.from_uri(location)
    return pafs.LocalFileSystem(), os.path.abspath(location)


def _uri_maker(location: str, fs_path: str) -> _Uri:
    return _Uri(location if "://" in location else "", fs_path)


@dataclass(frozen=True, slots=True)
class _Uri:
    """Turns paths inside a filesystem back into locations a worker can re-open."""

    original: str
    root: str

    def __call__(self, fs_path: str) -> str:
        if not self.original:
            return fs_path
        parts = urlsplit(self.original)
        # Tasks re-open each file from its location, so every location keeps what the filesystem
        # was opened with: the query (s3://b/k?endpoint_override=...&scheme=http) and credentials.
        query = f"?{parts.query}" if parts.query else ""
        if fs_path.startswith("/"):                   # hdfs://host:port/path, file:///path
            return f"{parts.scheme}://{parts.netloc}{fs_path}{query}"
        userinfo = parts.netloc.rpartition("@")[0]
        at = f"{userinfo}@" if userinfo else ""
        return f"{parts.scheme}://{at}{fs_path}{query}"   # s3://bucket/key, gs://bucket/key


def read_small_file(location: str) -> bytes:
    fs, path = filesystem(location)
    with fs.open_input_file(path) as f:
        return f.read()


def _read_index(location: str) -> bytes:
    """An index the listing found: unreadable is an error, never a plan that silently has fewer splits."""
    try:
        return read_small_file(location)
    except OSError as err:
        raise InputError(f"cannot read the index: {err}", path=location) from None


# ---- discovery -------------------------------------------------------------------------------

def find_segments(locations: Iterable[str]) -> list[Segment]:
    """Every segment under the given log.dirs, partition dirs, .log files or globs of them."""
    groups: dict[tuple[str, str, int], dict[int, dict[str, tuple[str, int]]]] = {}
    for location in locations:
        for uri, size in _expand(location):
            parent, name = posixpath.split(_without_query(uri).rstrip("/"))
            base_text, _, suffix = name.partition(".")
            base = parse_java_long(base_text) if len(base_text) == 20 else None
            if base is None or suffix not in _SEGMENT_SUFFIXES:
                continue
            parsed = parse_partition_dir_name(posixpath.basename(parent))
            if parsed is not None and parsed[2] is not None:
                continue                          # -delete/-future/-stray copies: not the live log
            topic, partition = (parsed[0], parsed[1]) if parsed else ("", -1)
            groups.setdefault((parent, topic, partition), {}).setdefault(base, {})[suffix] = (uri, size)
    segments = []
    for (_, topic, partition), by_base in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0])):
        bases = sorted(b for b, files in by_base.items() if "log" in files)
        for i, base in enumerate(bases):
            files = by_base[base]
            log, size = files["log"]
            segments.append(Segment(topic, partition, base, log, size,
                                    files.get("index", (None, 0))[0], files.get("timeindex", (None, 0))[0],
                                    bases[i + 1] if i + 1 < len(bases) else None))
    return segments


def _without_query(uri: str) -> str:
    return uri.split("?", 1)[0] if "://" in uri else uri


def _expand(location: str) -> Iterator[tuple[str, int]]:
    """(location, size) of every file at, below or matching ``location``."""
    fs, path = filesystem(location)
    to_uri = _uri_maker(location, path)
    if any(c in _GLOB_CHARS for c in path):
        prefix = path
        while any(c in _GLOB_CHARS for c in prefix):
            prefix = posixpath.dirname(prefix)
        depth = path.count("/")
        matches = [info for info in fs.get_file_info(pafs.FileSelector(prefix or "/", recursive=True))
                   if info.path.count("/") == depth and fnmatch.fnmatchcase(info.path, path)]
        if not matches:
            raise InputError("no file or directory matches this pattern", path=location)
        infos = matches
    else:
        infos = fs.get_file_info([path])
    for info in infos:
        if info.type == pafs.FileType.NotFound:
            raise InputError("No such file or directory (NoSuchFileException)", path=location)
        if info.type == pafs.FileType.Directory:
            for child in fs.get_file_info(pafs.FileSelector(info.path, recursive=True)):
                if child.type == pafs.FileType.File:
                    yield to_uri(child.path), child.size
        else:
            yield to_uri(info.path), info.size
            # A single .log named on its own still gets its indexes, for splitting and pruning.
            stem = info.path.rsplit(".", 1)[0]
            for sibling in fs.get_file_info([stem + ".index", stem + ".timeindex"]):
                if sibling.type == pafs.FileType.File and sibling.path != info.path:
                    yield to_uri(sibling.path), sibling.size


# ---- splitting and pruning ---------------------------------------------------------------------

def offset_index(segment: Segment) -> list[tuple[int, int]]:
    """(offset, position) entries that pass Kafka's ordering rules; [] when there is no usable index."""
    if segment.index is None:
        return []
    data = _read_index(segment.index)
    entries: list[tuple[int, int]] = []
    for slot in range(count_entries(len(data), OFFSET_ENTRY_SIZE)):
        entry = read_offset_entry(data, segment.base_offset, slot)
        if is_padding(slot, entry.offset, segment.base_offset):
            break                                       # preallocated zeros: the end of real entries
        if entry.position >= segment.size or entry.offset < segment.base_offset or (
                entries and (entry.offset <= entries[-1][0] or entry.position <= entries[-1][1])):
            break                                       # stop trusting the index at its first bad entry
        entries.append((entry.offset, entry.position))
    return entries


def largest_timestamp(segment: Segment) -> int | None:
    """The largest timestamp of a rolled segment: its time index's last entry (None when unknown)."""
    if segment.time_index is None or segment.next_base_offset is None:
        return None                                     # the active segment's index lags its data
    data = _read_index(segment.time_index)
    entries = count_entries(len(data), TIME_ENTRY_SIZE)
    best = None
    for slot in range(entries):
        entry = read_time_entry(data, segment.base_offset, slot)
        if slot > 0 and entry.offset == segment.base_offset and entry.timestamp == 0:
            break                                       # zero padding
        best = entry.timestamp if best is None else max(best, entry.timestamp)
    return best


def split_segment(segment: Segment, split_bytes: int, index: list[tuple[int, int]]) -> list[Split]:
    """Cut ``segment`` into ranges of about ``split_bytes``, at positions from its offset index.

    Offset bounds per range (why they hold): an index entry (e, p) names a batch starting at p that
    holds offset e. Every offset before p is below that batch's base, so below e; every offset from
    p on is above the previous entry's offset.
    """
    upper = None if segment.next_base_offset is None else segment.next_base_offset - 1
    if segment.size <= split_bytes or not index:
        return [Split(segment, 0, segment.size, segment.base_offset, upper)]
    splits = []
    start, low, target = 0, segment.base_offset, split_bytes
    for k, (offset, position) in enumerate(index):
        if position >= target and position > start:
            splits.append(Split(segment, start, position, low, offset - 1))
            start, low = position, index[k - 1][0] + 1 if k > 0 else segment.base_offset
            target = position + split_bytes
    splits.append(Split(segment, start, segment.size, low, upper))
    return splits


def narrow_split(split: Split, index: list[tuple[int, int]], pruning: Pruning) -> Split | None:
    """Drop or shrink a split using offset bounds (None when nothing in it can match)."""
    lo, hi = pruning.offset_min, pruning.offset_max
    if lo is not None and split.max_offset is not None and split.max_offset < lo:
        return None
    if hi is not None and split.min_offset > hi:
        return None
    start, end = split.start, split.end
    previous = None
    for offset, position in index:
        if start < position < end:
            if lo is not None and offset <= lo:
                start = position                # everything before p is below e <= lo
            if hi is not None and previous is not None and previous >= hi:
                end = position                  # everything from p on is above the previous e >= hi
                break
        previous = offset
    if start >= end:
        return None
    return replace(split, start=start, end=end) if (start, end) != (split.start, split.end) else split


def plan(locations: Iterable[str], *, split_bytes: int = DEFAULT_SPLIT_BYTES,
         pruning: Pruning = Pruning()) -> list[Split]:
    """All splits to read, in topic/partition/offset order, after pruning."""
    if split_bytes <= 0:
        raise ValueError("splitBytes must be positive")
    splits: list[Split] = []
    for segment in find_segments(locations):
        if pruning.topics is not None and segment.topic not in pruning.topics:
            continue
        if pruning.partitions is not None and segment.partition not in pruning.partitions:
            continue
        if segment.size == 0:
            continue
        if pruning.offset_max is not None and segment.base_offset > pruning.offset_max:
            continue
        if (pruning.offset_min is not None and segment.next_base_offset is not None
                and segment.next_base_offset <= pruning.offset_min):
            continue
        if pruning.timestamp_min is not None:
            largest = largest_timestamp(segment)
            if largest is not None and largest < pruning.timestamp_min:
                continue
        # The driver reads an index only when it can change the plan (thousands of small remote
        # reads add up): to split a large segment, or to narrow ranges for an offset filter.
        needs_index = segment.size > split_bytes or pruning.offset_min is not None or pruning.offset_max is not None
        index = offset_index(segment) if needs_index else []
        for split in split_segment(segment, split_bytes, index):
            narrowed = narrow_split(split, index, pruning)
            if narrowed is not None:
                splits.append(narrowed)
    return splits


DEFAULT_PACK_BYTES = 16 * 1024 * 1024


def pack(splits: Sequence[Split], target_bytes: int) -> list[tuple[Split, ...]]:
    """Consecutive splits grouped into tasks of at most ``target_bytes`` (a larger split is a task alone).

    Partitions that roll segments on time, or compacted topics, leave many segments of a few KB;
    a task each costs a Spark task and a Python worker round trip for almost no bytes. Order is
    kept, so a task reads one partition's segments in offset order.
    """
    tasks: list[tuple[Split, ...]] = []
    current: list[Split] = []
    size = 0
    for split in splits:
        length = split.end - split.start
        if current and size + length > target_bytes:
            tasks.append(tuple(current))
            current, size = [], 0
        current.append(split)
        size += length
    if current:
        tasks.append(tuple(current))
    return tasks


def parse_size(text: str | int) -> int:
    """'134217728', '128m', '64k', '1g' -> bytes (Spark-style size strings for options)."""
    if isinstance(text, int):
        return text
    value = text.strip().lower().removesuffix("b")
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(value[-1:], 1)
    number = value[:-1] if scale > 1 else value
    try:
        return int(float(number) * scale)
    except ValueError:
        raise ValueError(f"not a size: {text!r} (use bytes or a k/m/g suffix)") from None
