"""The records a coordinator loads from its partition: what CoordinatorLoaderImpl hands the shard's replay.

Kafka 4.4.0 coordinator-common/src/main/java/org/apache/kafka/coordinator/common/runtime/CoordinatorLoaderImpl.java
reads the partition from its log start up to the log end (``logEndOffset``), batch by batch: each data
record goes to ``replay(offset, producerId, producerEpoch, record)`` with the batch's producer id (-1 outside
a transaction), each end-transaction marker to ``replayEndTransactionMarker(producerId, producerEpoch,
result)``. Kafka 3.9.2 core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala
``doLoadGroupsAndOffsets`` walks the same records the same way. kdump reads the log the leader after
restart serves (kdump.broker.restart), the bytes its loader keeps, and stops at that log's end.

One record at a time: nothing here holds more than one batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from kdump.broker.batch_applier import control_record
from kdump.broker.replica_discovery import Replica
from kdump.errors import FormatError, KdumpError
from kdump.format.control import ControlType
from kdump.format.messages import tables
from kdump.format.messages.protocol import MessageData, Reader, read_message
from kdump.log.batches import LogBatches
from kdump.log.locations import open_any

NO_PRODUCER_ID = -1


@dataclass(frozen=True, slots=True)
class CoordinatorRecord:
    """A data record of a coordinator partition (``key``/``value`` raw; ``value`` None for a tombstone)."""

    offset: int
    producer_id: int          # -1 outside a transaction
    key: bytes | None
    value: bytes | None


@dataclass(frozen=True, slots=True)
class EndTransactionMarker:
    offset: int
    producer_id: int
    committed: bool           # COMMIT, else ABORT


LoadedRecord = CoordinatorRecord | EndTransactionMarker


def _raw(data: object) -> bytes | None:
    if data is None or isinstance(data, bytes):
        return data
    return bytes(data)  # type: ignore[call-overload]


def load_records(replica: Replica, read_errors: list[str] | None = None) -> Iterator[LoadedRecord]:
    """Every record of ``replica``'s loaded log (below its log end), in log order. A segment that cannot be
    read to its end stops the load there, as it stops the broker's (the error is added to ``read_errors``)."""
    loaded = replica.loaded
    if loaded is None:
        return
    end = loaded.log_end_offset
    for part in replica.kept_parts:
        if part.log is None:
            continue
        try:
            with open_any(part.log) as file:
                batches = LogBatches(file, part.start, part.end, check_crc=False)
                for batch in batches:
                    if batch.base_offset >= end:
                        return
                    if batch.last_offset < loaded.log_start_offset:
                        continue
                    records = batches.records(batch)
                    pid = batch.producer_id if batch.magic >= 2 else NO_PRODUCER_ID
                    if batch.is_control:
                        marker = control_record(records)
                        if marker is not None and marker.is_end_txn_marker:
                            yield EndTransactionMarker(batch.last_offset, pid,
                                                       marker.type_id == ControlType.COMMIT)
                        continue
                    for record in records:
                        if loaded.log_start_offset <= record.offset < end:
                            yield CoordinatorRecord(record.offset, pid if batch.is_transactional else NO_PRODUCER_ID,
                                                    _raw(record.key), _raw(record.value))
        except KdumpError as err:
            if read_errors is not None:
                read_errors.append(str(err.with_file(part.log)))
            return


def decode(registry: dict[int, tables.KeyValue], record: CoordinatorRecord
           ) -> tuple[int, MessageData, MessageData | None] | None:
    """(record type, key, value or None for a tombstone) as the coordinator's serde reads them
    (CoordinatorRecordSerde.deserialize: an int16 type / version, then the message); None for a record type
    ``registry`` does not know (the loader skips those, as CoordinatorLoaderImpl does an unknown type).
    Raises FormatError for bytes that do not read."""
    if record.key is None or len(record.key) < 2:
        raise FormatError(f"a record without a readable key at offset {record.offset}")
    record_type = int.from_bytes(record.key[:2], "big", signed=True)
    if record_type not in registry:
        return None
    key_schema, value_schema = registry[record_type]
    key = read_message(key_schema, Reader(record.key, 2), tables.key_version(key_schema, record_type))
    if record.value is None:
        return record_type, key, None
    if len(record.value) < 2:
        raise FormatError(f"a value without a version at offset {record.offset}")
    version = int.from_bytes(record.value[:2], "big", signed=True)
    return record_type, key, read_message(value_schema, Reader(record.value, 2), version)


class CoordinatorShard:
    """The replay loop both coordinators' shards share: each data record decoded by the shard's ``registry``
    and handed to ``apply``, each end-transaction marker to ``end_transaction``. A record the serde cannot
    read fails the broker's load there; kdump names it in ``problems`` and goes on with the next record."""

    registry: dict[int, tables.KeyValue]
    problems: list[str]

    def replay_all(self, records: Iterable[LoadedRecord], where: str) -> None:
        for record in records:
            if isinstance(record, EndTransactionMarker):
                self.end_transaction(record.producer_id, record.committed)
                continue
            try:
                decoded = decode(self.registry, record)
            except (FormatError, ValueError, IndexError, UnicodeError) as err:
                self.problems.append(f"{where}: offset {record.offset}: a record the coordinator cannot read ({err})")
                continue
            if decoded is not None:
                self.apply(record, *decoded)

    def apply(self, record: CoordinatorRecord, record_type: int, key: MessageData, value: MessageData | None) -> None:
        raise NotImplementedError

    def end_transaction(self, producer_id: int, committed: bool) -> None:
        """A coordinator without transactional records ignores the markers."""


__all__ = ["NO_PRODUCER_ID", "CoordinatorRecord", "CoordinatorShard", "EndTransactionMarker", "LoadedRecord",
           "decode", "load_records"]
