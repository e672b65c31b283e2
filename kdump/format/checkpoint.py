"""Text files of a Kafka log directory that DumpLogSegments does not read.

* ``CheckpointFile`` format (server-common CheckpointFile): a version line, an entry-count line,
  then one entry per line, fields split on whitespace runs. Used by recovery-point-offset-checkpoint,
  replication-offset-checkpoint, log-start-offset-checkpoint, cleaner-offset-checkpoint
  (``topic partition offset``) and leader-epoch-checkpoint (``epoch startOffset``).
* ``partition.metadata`` (PartitionMetadataFile, KIP-516): ``version: 0`` and ``topic_id: <uuid>``.
* ``meta.properties`` (Java properties), ``quorum-state`` (JSON), ``.kafka_cleanshutdown`` (JSON or empty).

Parsers take the file's text or bytes plus a ``name`` used in messages (Kafka puts the path there);
they never open files. Errors are ``CheckpointError`` with Kafka's message as ``reason`` (for the
files Kafka reads) and the 1-based ``line_number`` of the offending line when there is one.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from kdump.errors import FormatError

T = TypeVar("T")
Text = str | bytes | bytearray | memoryview

OFFSET_CHECKPOINT_NAMES = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint",
                           "log-start-offset-checkpoint", "cleaner-offset-checkpoint")
LEADER_EPOCH_CHECKPOINT_NAME = "leader-epoch-checkpoint"

_LINE_BREAK = re.compile(r"\r\n|\r|\n")          # BufferedReader.readLine's terminators
_WHITESPACE = re.compile(r"\s+")                  # Pattern.compile("\\s+")
_COLON = re.compile(r":\s+")                      # PartitionMetadataReadBuffer's split pattern
_INT32 = (-(1 << 31), (1 << 31) - 1)
_INT64 = (-(1 << 63), (1 << 63) - 1)


class CheckpointError(FormatError):
    """A malformed text file. ``reason`` is Kafka's message; ``line_number`` is 1-based or None."""

    def __init__(self, reason: str, *, line_number: int | None = None) -> None:
        super().__init__(reason)
        self.line_number = line_number


def _text(data: Text) -> str:
    if isinstance(data, str):
        return data
    return bytes(data).decode("utf-8", errors="replace")


def read_lines(data: Text) -> list[str]:
    """The lines BufferedReader.readLine returns: no terminators, no empty line after a final newline."""
    text = _text(data)
    if not text:
        return []
    lines = _LINE_BREAK.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


def java_split(line: str, pattern: re.Pattern[str] = _WHITESPACE) -> list[str]:
    """Pattern.split(line): a leading separator gives an empty first field, trailing ones are dropped."""
    parts = pattern.split(line)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def _java_int(text: str, bounds: tuple[int, int]) -> int | None:
    """Integer.parseInt / Long.parseLong: optional sign, ASCII digits, in range; None where Java throws."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    value = int(text)
    return value if bounds[0] <= value <= bounds[1] else None


@dataclass(frozen=True, slots=True)
class CheckpointFile(Generic[T]):
    """A parsed CheckpointFile. ``version``/``expected_count`` are None for an empty file (or one
    that stops after its version line), which Kafka reads as having no entries."""

    version: int | None
    expected_count: int | None
    entries: tuple[T, ...]


def parse_checkpoint(data: Text, name: str, parse_entry: Callable[[list[str]], T | None]) -> CheckpointFile[T]:
    """CheckpointFile.CheckpointReadBuffer.read with Kafka's messages; ``parse_entry`` gets the
    whitespace-split fields of one line and returns None when the line is malformed."""
    lines = read_lines(data)

    def malformed(index: int) -> CheckpointError:
        return CheckpointError(f"Malformed line in checkpoint file [{name}]: {lines[index]}", line_number=index + 1)

    if not lines:
        return CheckpointFile(None, None, ())
    version = _java_int(lines[0], _INT32)
    if version is None:
        raise malformed(0)
    if version != 0:  # CURRENT_VERSION of OffsetCheckpointFile and LeaderEpochCheckpointFile
        raise CheckpointError(f"Unrecognised version:{version}, expected version: 0 "
                              f"in checkpoint file at: {name}", line_number=1)
    if len(lines) < 2:
        return CheckpointFile(version, None, ())
    expected = _java_int(lines[1], _INT32)
    if expected is None:
        raise malformed(1)
    entries = []
    for index in range(2, len(lines)):
        entry = parse_entry(java_split(lines[index]))
        if entry is None:
            raise malformed(index)
        entries.append(entry)
    if len(entries) != expected:
        raise CheckpointError(f"Expected [{expected}] entries in checkpoint file [{name}], but found only "
                              f"[{len(entries)}]")
    return CheckpointFile(version, expected, tuple(entries))


def encode_checkpoint(lines: Iterable[str], *, version: int = 0) -> bytes:
    """CheckpointFile.write: version, count, entries, each line ending in '\\n'."""
    items = list(lines)
    return "".join(f"{line}\n" for line in [str(version), str(len(items)), *items]).encode("utf-8")


@dataclass(frozen=True, slots=True)
class OffsetCheckpointEntry:
    topic: str
    partition: int
    offset: int


def _offset_entry(fields: list[str]) -> OffsetCheckpointEntry | None:
    # Kafka lets NumberFormatException escape here; kdump reports the line as malformed instead.
    if len(fields) != 3:
        return None
    partition = _java_int(fields[1], _INT32)
    offset = _java_int(fields[2], _INT64)
    if partition is None or offset is None:
        return None
    return OffsetCheckpointEntry(fields[0], partition, offset)


def parse_offset_checkpoint(data: Text, name: str) -> CheckpointFile[OffsetCheckpointEntry]:
    return parse_checkpoint(data, name, _offset_entry)


def encode_offset_checkpoint(entries: Iterable[OffsetCheckpointEntry], *, version: int = 0) -> bytes:
    return encode_checkpoint((f"{e.topic} {e.partition} {e.offset}" for e in entries), version=version)


@dataclass(frozen=True, slots=True)
class EpochEntry:
    epoch: int
    start_offset: int


def _epoch_entry(fields: list[str]) -> EpochEntry | None:
    if len(fields) != 2:
        return None
    epoch = _java_int(fields[0], _INT32)
    offset = _java_int(fields[1], _INT64)
    if epoch is None or offset is None:
        return None
    return EpochEntry(epoch, offset)


def parse_leader_epoch_checkpoint(data: Text, name: str) -> CheckpointFile[EpochEntry]:
    return parse_checkpoint(data, name, _epoch_entry)


def encode_leader_epoch_checkpoint(entries: Iterable[EpochEntry], *, version: int = 0) -> bytes:
    return encode_checkpoint((f"{e.epoch} {e.start_offset}" for e in entries), version=version)


# --- partition.metadata -----------------------------------------------------------------------

ZERO_UUID = bytes(16)


def uuid_to_string(raw: bytes) -> str:
    """Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def uuid_from_string(text: str) -> bytes | None:
    """Uuid.fromString: None when the text is not base64url of exactly 16 bytes."""
    if len(text) > 24 or not re.fullmatch(r"[A-Za-z0-9_-]*={0,2}", text):
        return None
    try:
        raw = base64.urlsafe_b64decode(text.rstrip("=") + "=" * (-len(text.rstrip("=")) % 4))
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 16 else None


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    version: int
    topic_id: str      # as written (base64url)
    topic_id_bytes: bytes


def parse_partition_metadata(data: Text, name: str) -> PartitionMetadata:
    """PartitionMetadataReadBuffer.read (storage module, Kafka 3.5+), Kafka's messages."""
    lines = read_lines(data)

    def malformed(index: int) -> CheckpointError:
        line = lines[index] if index < len(lines) else "null"
        return CheckpointError(f"Malformed line in checkpoint file [{name}]: {line}", line_number=index + 1)

    def value_of(index: int) -> str:
        if index >= len(lines):
            raise malformed(index)
        parts = java_split(lines[index], _COLON)
        if len(parts) != 2:
            raise malformed(index)
        return parts[1]

    version = _java_int(value_of(0), _INT32)
    if version is None:
        raise malformed(0)
    if version < 0:
        # The stray "+ " is in Kafka's message.
        raise CheckpointError(f"Unrecognized version of partition metadata file + ({name}): {version}",
                              line_number=1)
    topic_id = value_of(1)
    raw = uuid_from_string(topic_id)
    if raw is None:
        raise CheckpointError(f"Invalid topic ID in partition metadata file ({name}): {topic_id!r} is not a "
                              f"base64url-encoded 16-byte UUID", line_number=2)
    if raw == ZERO_UUID:
        raise CheckpointError(f"Invalid topic ID in partition metadata file ({name})", line_number=2)
    return PartitionMetadata(version, topic_id, raw)


def encode_partition_metadata(topic_id: bytes | str, *, version: int = 0) -> bytes:
    """Exactly what PartitionMetadataFile writes: two lines, no newline after the second."""
    text = topic_id if isinstance(topic_id, str) else uuid_to_string(topic_id)
    return f"version: {version}\ntopic_id: {text}".encode()


# --- meta.properties ------------------------------------------------------------------------

_PROPS_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2:i + 6] or ""):
                out.append(chr(int(text[i + 2:i + 6], 16)))
                i += 6
                continue
            out.append(_PROPS_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _logical_lines(text: str) -> Iterable[tuple[int, str]]:
    """Join backslash-continued lines; skip blanks and #/! comments (java.util.Properties.load)."""
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(read_lines(text), start=1):
        line = raw.lstrip(" \t\f")  # Java strips leading whitespace of continuation lines too
        if not pending:
            if not line or line[0] in "#!":
                continue
            start = number
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending.append(line[:-1])
            continue
        pending.append(line)
        yield start, "".join(pending)
        pending = []
    if pending:
        yield start, "".join(pending)


def parse_properties(data: Text, name: str) -> dict[str, str]:
    """A java.util.Properties file (the subset Kafka writes); bytes are read as ISO-8859-1 as Properties.load does.

    Later keys win, as in Java. ``name`` is accepted for symmetry; no input makes this fail.
    """
    text = bytes(data).decode("latin-1") if not isinstance(data, str) else data
    props: dict[str, str] = {}
    for _, line in _logical_lines(text):
        match = re.match(r"((?:\\.|[^\\=:\s])*)\s*[=:]?\s*(.*)$", line, re.S)
        assert match is not None  # the pattern matches any string
        props[_unescape(match.group(1))] = _unescape(match.group(2))
    return props


def encode_properties(props: dict[str, str], *, comment: str | None = None) -> bytes:
    """``key=value`` lines (Properties.store without the date line, which would make output unstable)."""
    lines = [f"#{comment}"] if comment else []
    for key, value in props.items():
        lines.append(f"{key.replace(':', chr(92) + ':').replace('=', chr(92) + '=')}={value}")
    return ("\n".join(lines) + "\n").encode("latin-1", errors="replace")


# --- quorum-state, .kafka_cleanshutdown -----------------------------------------------------

def _json_object(data: Text, name: str, what: str) -> dict[str, object]:
    text = _text(data)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise CheckpointError(f"{what} {name} is not valid JSON: {err.msg} at column {err.colno}",
                              line_number=err.lineno) from None
    if not isinstance(value, dict):
        raise CheckpointError(f"{what} {name} is not a JSON object", line_number=1)
    return value


def parse_quorum_state(data: Text, name: str) -> dict[str, object]:
    """The QuorumStateData JSON KRaft keeps in __cluster_metadata-0/quorum-state, as a dict."""
    return _json_object(data, name, "quorum state file")


@dataclass(frozen=True, slots=True)
class CleanShutdown:
    version: int | None       # None: the empty marker file of older Kafka
    broker_epoch: int | None


def parse_clean_shutdown(data: Text, name: str) -> CleanShutdown:
    """``.kafka_cleanshutdown``: empty (older Kafka) or {"version":0,"brokerEpoch":N}."""
    if not _text(data).strip():
        return CleanShutdown(None, None)
    obj = _json_object(data, name, "clean shutdown file")
    version, epoch = obj.get("version"), obj.get("brokerEpoch")
    if not isinstance(version, int) or (epoch is not None and not isinstance(epoch, int)):
        raise CheckpointError(f"clean shutdown file {name} needs integer \"version\" and \"brokerEpoch\"",
                              line_number=1)
    return CleanShutdown(version, epoch)
