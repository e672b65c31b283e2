"""File naming in a Kafka log directory (LogFileUtils, and the suffixes DumpLogSegments dispatches on)."""

from __future__ import annotations

import os
import re
from enum import Enum

from kdump.errors import InputError


class FileKind(Enum):
    LOG = ".log"
    CHECKPOINT = ".checkpoint"          # KRaft snapshot / bootstrap.checkpoint
    INDEX = ".index"
    TIME_INDEX = ".timeindex"
    PRODUCER_SNAPSHOT = ".snapshot"
    TXN_INDEX = ".txnindex"


_BY_SUFFIX = {kind.value: kind for kind in FileKind}


def kafka_suffix(path: str) -> str | None:
    """Kafka's suffix: the file name from its last '.'; None when the name has no dot.

    Kafka crashes (StringIndexOutOfBounds) on a name with no dot; callers report it instead.
    """
    name = os.path.basename(path)
    dot = name.rfind(".")
    return None if dot < 0 else name[dot:]


def file_kind(path: str) -> FileKind | None:
    suffix = kafka_suffix(path)
    return None if suffix is None else _BY_SUFFIX.get(suffix)


def java_path(path: str) -> str:
    """java.io.File.toString of a path argument: repeated separators collapsed, no trailing one."""
    if not path:
        return path
    lead = "/" if path.startswith("/") else ""
    parts = [p for p in path.split("/") if p]
    return lead + "/".join(parts) if parts else lead


def java_absolute_path(path: str) -> str:
    """java.io.File.getAbsolutePath: cwd + '/' + path for relative input, no normalisation."""
    p = java_path(path)
    return p if p.startswith("/") else os.getcwd().rstrip("/") + "/" + p


def parse_java_long(text: str) -> int | None:
    """Long.parseLong: optional sign, ASCII digits, int64 range; None when Java would throw."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    value = int(text)
    return value if -(1 << 63) <= value < (1 << 63) else None


def segment_base_offset(file_name: str) -> int | None:
    """The base offset a segment file name starts with (the name up to its first '.'), or None."""
    return parse_java_long(file_name.split(".", 1)[0])


def base_offset_of(path: str) -> int:
    """``segment_base_offset`` of a path (or a remote segment's start offset, ``<offset>-<segmentId>.log``);
    InputError, in Long.parseLong's words, when there is none."""
    value = segment_base_offset(os.path.basename(path))
    if value is None:
        value = remote_start_offset(os.path.basename(path))
    if value is None:
        prefix = os.path.basename(path).split(".", 1)[0]
        raise InputError(f"file name does not start with a base offset (For input string: \"{prefix}\")",
                         path=path)
    return value


def remote_start_offset(file_name: str) -> int | None:
    """The start offset of a remote segment file, or of a file of the broker's remote-log-index-cache/
    (kdump.log.remote_layout names both), or None."""
    from kdump.log.remote_layout import parse_index_cache_name, parse_remote_segment_name

    parsed = parse_remote_segment_name(file_name) or parse_index_cache_name(file_name)
    return None if parsed is None else parsed[0]


SEGMENT_TEMP_SUFFIXES = (".deleted", ".cleaned", ".swap")
"""What Kafka appends to every file of a segment at once when it deletes, cleans or swaps it."""


def split_temp_suffix(name: str) -> tuple[str, str]:
    """``("00..0.index", ".deleted")`` for ``00..0.index.deleted``; ``.part`` (KRaft snapshots) too."""
    for suffix in (*SEGMENT_TEMP_SUFFIXES, ".part"):
        if name.endswith(suffix):
            return name[:-len(suffix)], suffix
    return name, ""


def sibling(path: str, suffix: str) -> str:
    """The companion file: everything after the name's first '.' replaced by ``suffix``.

    A segment temp suffix stays: Kafka renames a segment's .log and indexes together, so the log of
    ``X.index.deleted`` is ``X.log.deleted``."""
    directory, name = os.path.split(os.path.abspath(path))
    temp = split_temp_suffix(name)[1]
    return os.path.join(directory, name.split(".", 1)[0] + suffix + (temp if temp in SEGMENT_TEMP_SUFFIXES else ""))


_SEGMENT_FILE = re.compile(r"^(?P<base>\d{20})\.(?P<suffix>log|index|timeindex|txnindex|snapshot)"
                           r"(?P<extra>\.deleted|\.cleaned|\.swap)?$")


def parse_segment_file_name(name: str) -> tuple[int, str, str] | None:
    """(base offset, suffix without its dot, temp suffix or "") of a segment file as a broker names it
    (LogFileUtils: 20 digits, then .log/.index/.timeindex/.txnindex/.snapshot, maybe .deleted/.cleaned/.swap);
    None for any other name."""
    match = _SEGMENT_FILE.match(name)
    if match is None:
        return None
    return int(match.group("base")), match.group("suffix"), match.group("extra") or ""


def parse_kraft_snapshot_name(name: str) -> tuple[int, int] | None:
    """(end offset, epoch) of a KRaft snapshot file, ``<20-digit end offset>-<10-digit epoch>.checkpoint``
    (raft Snapshots.java), or None."""
    if len(name) < 31 or not name.endswith(".checkpoint"):
        return None
    end_offset, epoch = parse_java_long(name[0:20]), parse_java_long(name[21:31])
    return None if end_offset is None or epoch is None else (end_offset, epoch)


def segment_file_name(base_offset: int, suffix: str) -> str:
    """``00000000000000000042.log`` and friends: 20-digit zero-padded base offset."""
    return f"{base_offset:020d}{suffix}"
