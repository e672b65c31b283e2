"""``kdump --files X.snapshot`` and ``X.txnindex``, in every ``--kafka-version`` dialect.

Line formats by Kafka version (docs/dialects-research.md):
* currentTxnFirstOffset: ``OptionalLong[n]``/``OptionalLong.empty`` from 3.5 (Java storage module),
  ``Some(n)``/``None`` before (Scala Option).
* ``lastTimestamp:`` exists from 3.1.
* The batch-metadata part (``firstSequence: ... timestamp: TS``) is printed only when the entry's
  lastOffset >= 0 from 2.4; 2.2-2.3 always printed it, from the entry's stored fields.
* The Scala tool (<= 4.2) ends the fixed part with a space and appends the metadata without one
  (so a line without metadata ends in a space); the Java tool (4.3+) puts the space before
  ``firstSequence``.
"""

from __future__ import annotations

import os
import re
from typing import Any

from kdump.dump.run import DumpRun
from kdump.format.snapshot import CorruptSnapshotError, ProducerSnapshotEntry
from kdump.format.txnindex import AbortedTxn, TxnIndexVersionError
from kdump.log.files import java_absolute_path
from kdump.log.segment import ReadOnlyFile
from kdump.log.state_files import read_aborted_txns, read_producer_snapshot
from kdump.render import log_json
from kdump.render.dialect import Dialect


def _txn_first_offset_text(entry: ProducerSnapshotEntry, dialect: Dialect) -> str:
    value = entry.ongoing_txn_first_offset
    if dialect.snapshot_optional_long:
        return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"
    return "None" if value is None else f"Some({value})"


def snapshot_entry_line(entry: ProducerSnapshotEntry, dialect: Dialect) -> str:
    """One producer entry exactly as that Kafka version's DumpLogSegments prints it."""
    fixed = (f"producerId: {entry.producer_id} producerEpoch: {entry.producer_epoch} "
             f"coordinatorEpoch: {entry.coordinator_epoch} "
             f"currentTxnFirstOffset: {_txn_first_offset_text(entry, dialect)}")
    if dialect.snapshot_last_timestamp:
        fixed += f" lastTimestamp: {entry.timestamp}"
    metadata: str | None = None
    if entry.has_batch_metadata or dialect.snapshot_metadata_always_printed:
        metadata = (f"firstSequence: {entry.first_sequence} lastSequence: {entry.last_sequence} "
                    f"lastOffset: {entry.last_offset} offsetDelta: {entry.offset_delta} "
                    f"timestamp: {entry.timestamp}")
    if dialect.is_java:
        return fixed if metadata is None else f"{fixed} {metadata}"
    return f"{fixed} {metadata or ''}"


def snapshot_entry_object(path: str, entry: ProducerSnapshotEntry) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "type": "producerState", "path": path, "producerId": entry.producer_id,
        "producerEpoch": entry.producer_epoch, "coordinatorEpoch": entry.coordinator_epoch,
        "currentTxnFirstOffset": entry.ongoing_txn_first_offset, "lastTimestamp": entry.timestamp,
    }
    if entry.has_batch_metadata:
        obj.update(firstSequence=entry.first_sequence, lastSequence=entry.last_sequence,
                   lastOffset=entry.last_offset, offsetDelta=entry.offset_delta, timestamp=entry.timestamp)
    return obj


def txn_entry_line(entry: AbortedTxn) -> str:
    return (f"version: {entry.version} producerId: {entry.producer_id} firstOffset: {entry.first_offset} "
            f"lastOffset: {entry.last_offset} lastStableOffset: {entry.last_stable_offset}")


def txn_entry_object(path: str, entry: AbortedTxn) -> dict[str, Any]:
    return {"type": "abortedTxn", "path": path, "version": entry.version, "producerId": entry.producer_id,
            "firstOffset": entry.first_offset, "lastOffset": entry.last_offset,
            "lastStableOffset": entry.last_stable_offset}


_NEGATIVE_COUNT = re.compile(r"'producer_entries': Array size -?\d+ cannot be negative$")
_COUNT_TOO_BIG = re.compile(r"'producer_entries': Error reading array of size (\d+), only (\d+) bytes available$")


def _generated_reader_message(message: str) -> str:
    """The 4.0+ text for a snapshot schema error: the generated reader's own messages, and
    BufferUnderflowException's null message where the 3.x schema named the field."""
    prefix = "Snapshot failed schema validation: "
    if not message.startswith(prefix + "Error reading field"):
        return message
    if message.endswith("java.nio.BufferUnderflowException"):
        return prefix + "null"
    if _NEGATIVE_COUNT.search(message):
        return prefix + "non-nullable field producerEntries was serialized as null"
    too_big = _COUNT_TOO_BIG.search(message)
    if too_big:
        return (prefix + f"Tried to allocate a collection of size {too_big.group(1)}, but there are only "
                f"{too_big.group(2)} bytes remaining.")
    return message


def dump_producer_snapshot(run: DumpRun, path: str) -> None:
    """Kafka prints a CorruptSnapshotException's message to stderr and goes on to the next file."""
    try:
        snapshot, size = read_producer_snapshot(path)
    except CorruptSnapshotError as err:
        message = err.message(wrap_unknown_version=run.dialect.is_java)
        run.out.flush()
        if run.dialect.generated_snapshot_reader:
            message = _generated_reader_message(message)
        run.emit({"type": "error", "path": path, "fileType": "producerSnapshot", "message": message})
        run.err.write(message + "\n")
        run.err.flush()
        return
    run.emit(log_json.file_object(path, "producerSnapshot", size=size, version=snapshot.version, crc=snapshot.crc,
                                  entries=len(snapshot.entries)))
    for entry in snapshot.entries:
        run.emit(snapshot_entry_object(path, entry), snapshot_entry_line(entry, run.dialect))


def dump_txn_index(run: DumpRun, path: str) -> None:
    """A missing .txnindex prints nothing (Kafka treats it as empty); a version above 0 stops the file."""
    if not os.path.exists(path):
        run.emit(log_json.file_object(path, "txnIndex", size=0, exists=False))
        return
    with ReadOnlyFile(path) as txn_index:
        run.emit(log_json.file_object(path, "txnIndex", size=txn_index.size))
        try:
            for entry in read_aborted_txns(txn_index, java_absolute_path(path)):
                run.emit(txn_entry_object(path, entry), txn_entry_line(entry))
        except TxnIndexVersionError as err:
            run.fail(err.reason, path)  # Kafka's own message, already naming the file
