"""Producer-state snapshots (``<20-digit offset>.snapshot``).

Mirrors the layout ProducerStateManager.readSnapshot/writeSnapshot use
(storage/.../internals/log/ProducerStateManager.java; the generated message
storage/src/main/resources/message/ProducerSnapshot.json in the newest Kafka): version int16,
crc uint32 (CRC-32C of every byte from offset 6 to the end of the file), then an int32-counted
array of 46-byte producer entries. Kafka reads the whole structure first, then checks the
version, then the CRC; trailing bytes after the array are not read but are covered by the CRC.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass

from kdump.errors import FormatError
from kdump.format.batch import INT32_MAX
from kdump.format.crc import crc32c

Buffer = bytes | bytearray | memoryview

# Field names as Kafka's (pre-generated-message) schema spells them; they appear in its
# "Error reading field '<name>'" messages. The structs are built from these tables.
_HEADER_FIELDS = (
    ("version", "h"),                   # 1
    ("crc", "I"),                       # CRC-32C of bytes [6, end)
    ("producer_entries", "i"),          # array length
)
_ENTRY_FIELDS = (
    ("producer_id", "q"),
    ("epoch", "h"),
    ("last_sequence", "i"),
    ("last_offset", "q"),
    ("offset_delta", "i"),
    ("timestamp", "q"),
    ("coordinator_epoch", "i"),
    ("current_txn_first_offset", "q"),  # -1: no ongoing transaction
)
SNAPSHOT_HEADER = struct.Struct(">" + "".join(kind for _, kind in _HEADER_FIELDS))
ENTRY = struct.Struct(">" + "".join(kind for _, kind in _ENTRY_FIELDS))
PRODUCER_SNAPSHOT_VERSION = 1
PRODUCER_ENTRIES_OFFSET = struct.calcsize(">hI")     # 6: CRC coverage starts here
ENTRY_SIZE = ENTRY.size                               # 46
_UNDERFLOW = "java.nio.BufferUnderflowException"  # Schema.read's text when a read runs off the end


class CorruptSnapshotError(FormatError):
    """Kafka's CorruptSnapshotException. ``reason`` is Kafka's message for Kafka <= 4.2.

    ``kind`` is "schema", "version" or "crc"; ``message(wrap_unknown_version)`` gives the text with the
    newest Kafka's wrapping (DumpLogSegments.dumpProducerIdSnapshot).
    """

    def __init__(self, reason: str, *, kind: str) -> None:
        super().__init__(reason)
        self.kind = kind

    def message(self, wrap_unknown_version: bool = False) -> str:
        if self.kind == "version" and wrap_unknown_version:
            return f"Snapshot failed schema validation: {self.reason}"
        return self.reason


def first_sequence(last_sequence: int, offset_delta: int) -> int:
    """BatchMetadata.firstSeq: lastSeq - offsetDelta, wrapping past INT_MAX instead of going negative."""
    if last_sequence < offset_delta:
        return INT32_MAX - (offset_delta - last_sequence) + 1
    return last_sequence - offset_delta


@dataclass(frozen=True, slots=True)
class ProducerSnapshotEntry:
    """One producer's state. ``last_offset < 0`` means the entry carries no batch metadata."""

    producer_id: int
    producer_epoch: int
    last_sequence: int = -1
    last_offset: int = -1
    offset_delta: int = 0
    timestamp: int = -1
    coordinator_epoch: int = -1
    current_txn_first_offset: int = -1

    @property
    def has_batch_metadata(self) -> bool:
        return self.last_offset >= 0

    @property
    def first_sequence(self) -> int:
        return first_sequence(self.last_sequence, self.offset_delta)

    @property
    def ongoing_txn_first_offset(self) -> int | None:
        """Kafka maps any negative stored value to OptionalLong.empty."""
        return self.current_txn_first_offset if self.current_txn_first_offset >= 0 else None


@dataclass(frozen=True, slots=True)
class ProducerSnapshot:
    version: int
    crc: int
    entries: tuple[ProducerSnapshotEntry, ...]


def _schema_error(detail: str) -> CorruptSnapshotError:
    return CorruptSnapshotError(f"Snapshot failed schema validation: {detail}", kind="schema")


def _check_underflow(fields: tuple[tuple[str, str], ...], pos: int, size: int, context: str) -> None:
    """Schema.read's error for the first of ``fields`` (read from ``pos``) that runs past ``size``."""
    for name, kind in fields:
        pos += struct.calcsize(">" + kind)
        if pos > size:
            raise _schema_error(f"{context}Error reading field '{name}': {_UNDERFLOW}")


def parse_producer_snapshot(data: Buffer) -> ProducerSnapshot:
    """Parse a whole snapshot file; raises CorruptSnapshotError with Kafka's message."""
    size = len(data)
    _check_underflow(_HEADER_FIELDS, 0, size, "")
    version, stored_crc, count = SNAPSHOT_HEADER.unpack_from(data)
    pos = SNAPSHOT_HEADER.size
    if count < 0:
        raise _schema_error(f"Error reading field 'producer_entries': Array size {count} cannot be negative")
    remaining = size - pos
    if count > remaining:
        # ArrayOf compares the element count with the bytes left, not count * entry size.
        raise _schema_error(f"Error reading field 'producer_entries': Error reading array of size {count}, "
                            f"only {remaining} bytes available")
    entries = []
    for _ in range(count):
        if pos + ENTRY_SIZE > size:
            _check_underflow(_ENTRY_FIELDS, pos, size, "Error reading field 'producer_entries': ")
        (producer_id, epoch, last_seq, last_offset, delta, timestamp, coordinator_epoch,
         txn_first) = ENTRY.unpack_from(data, pos)
        entries.append(ProducerSnapshotEntry(producer_id, epoch, last_seq, last_offset, delta, timestamp,
                                             coordinator_epoch, txn_first))
        pos += ENTRY_SIZE
    if version != PRODUCER_SNAPSHOT_VERSION:
        raise CorruptSnapshotError(f"Snapshot contained an unknown file version {version}", kind="version")
    computed = crc32c(bytes(data[PRODUCER_ENTRIES_OFFSET:]))
    if computed != stored_crc:
        raise CorruptSnapshotError(f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored_crc}. "
                                   f"Computed crc: {computed}", kind="crc")
    return ProducerSnapshot(version, stored_crc, tuple(entries))


def encode_producer_snapshot(entries: Iterable[ProducerSnapshotEntry], *,
                             version: int = PRODUCER_SNAPSHOT_VERSION, crc: int | None = None) -> bytes:
    """The bytes Kafka's writeSnapshot produces for ``entries`` (in the order given).

    ``crc`` overrides the computed CRC and ``version`` the version field, for building corrupt
    test files.
    """
    items = list(entries)
    body = struct.pack(">i", len(items)) + b"".join(
        ENTRY.pack(e.producer_id, e.producer_epoch, e.last_sequence, e.last_offset, e.offset_delta, e.timestamp,
                   e.coordinator_epoch, e.current_txn_first_offset) for e in items)
    stored = crc32c(body) if crc is None else crc
    return struct.pack(">hI", version, stored) + body
