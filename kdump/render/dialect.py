"""Which Kafka's output to reproduce: ``--kafka-version`` mapped to the small set of text differences.

Default is Kafka 4.4; the Java tool (J) starts at 4.3; 3.3-4.2 is the Scala tool (S) most
deployed brokers ship. The boundaries come from diffing DumpLogSegments.scala at every release tag
(docs/dialects-research.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Generic, TypeVar

from kdump.errors import UsageError

# The newest Kafka release kdump imitates, and so the default of --kafka-version.
LATEST_RELEASE = (4, 4)
DEFAULT_KAFKA_VERSION = f"{LATEST_RELEASE[0]}.{LATEST_RELEASE[1]}"
OLDEST_SUPPORTED = (2, 2)


class _Releases:
    """A ``Dialect`` flag that holds for the releases from ``since`` (included) to ``before`` (excluded)."""

    def __init__(self, *, since: tuple[int, int] = (0, 0), before: tuple[int, int] = (99, 0)) -> None:
        self.since = since
        self.before = before

    def __get__(self, dialect: Dialect, owner: type[Dialect] | None = None) -> bool:
        return self.since <= dialect.major_minor < self.before


T = TypeVar("T")


class _Changed(Generic[T]):
    """A ``Dialect`` value that changed in ``release``: ``old`` before it, ``new`` from it on."""

    def __init__(self, release: tuple[int, int], old: T, new: T) -> None:
        self.release = release
        self.old = old
        self.new = new

    def __get__(self, dialect: Dialect, owner: type[Dialect] | None = None) -> T:
        return self.new if dialect.major_minor >= self.release else self.old


# The release from which the tool prints KRaft control record type 2-6 as JSON rather than its type name.
_CONTROL_JSON_SINCE = {2: (4, 1), 3: (3, 3), 4: (3, 3), 5: (3, 8), 6: (3, 8)}


@dataclass(frozen=True, slots=True)
class Dialect:
    version: tuple[int, int, int]

    @property
    def major_minor(self) -> tuple[int, int]:
        return self.version[0], self.version[1]

    @property
    def label(self) -> str:
        return ".".join(str(part) for part in self.version)

    # 2.2 created the key/value decoders once, before the first file; 2.3+ for every .log file.
    decoders_created_per_file = _Releases(since=(2, 3))
    # kafka/log/LogLoader.scala first appears in 3.0.0 (before, Log.scala loaded segments with other
    # rules): what ``kdump recover`` follows.
    has_log_loader = _Releases(since=(3, 0))
    # 4.1+ (KAFKA-806): LogSegment.append tests the index interval for every batch it appends; before,
    # once per append call (a produce request, or a chunk of up to 1 MiB of batches when
    # LocalLog.splitOverflowedSegment copies a segment).
    indexes_each_appended_batch = _Releases(since=(4, 1))
    # 4.3+: org.apache.kafka.tools.DumpLogSegments (Java port).
    is_java = _Releases(since=(4, 3))

    log_header = _Changed((3, 3), "Starting offset: ", "Log starting offset: ")
    upper_codec_names = _Releases(before=(3, 0))
    has_delete_horizon = _Releases(since=(3, 2))

    size_field_names = _Changed((2, 8), ("keysize", "valuesize"), ("keySize", "valueSize"))
    # 2.8.x (KAFKA-6181, never reverted on the 2.8 branch) repeated batch fields on every record line.
    superset_record_line = _Releases(since=(2, 8), before=(2, 9))
    # Before 2.4 (KAFKA-8745) a record with a null value printed neither key nor payload.
    key_printed_for_null_value = _Releases(since=(2, 4))
    # S 3.0-4.2 printed ``isValid: true crc: 123}`` (stray brace); J fixed it.
    legacy_crc_brace = _Releases(since=(3, 0), before=(4, 3))
    # 2.2-2.8 printed legacy record validity as `` crc: C isvalid: B``.
    legacy_record_crc_first = _Releases(before=(3, 0))

    def control_type_name(self, type_id: int) -> str:
        """ControlRecordType's constant for ``type_id`` in that Kafka (the numbering moved in 3.0)."""
        if type_id in (0, 1):
            return ("ABORT", "COMMIT")[type_id]
        if self.major_minor < (2, 7):
            names: dict[int, str] = {}
        elif self.major_minor < (3, 0):
            names = {2: "QUORUM_REASSIGNMENT", 3: "LEADER_CHANGE"}
        elif self.major_minor < (3, 8):
            names = {2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER"}
        else:
            names = {2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER", 5: "KRAFT_VERSION",
                     6: "KRAFT_VOTERS"}
        return names.get(type_id, "UNKNOWN")

    # With --skip-record-metadata and no key, J prints ``| payload: X``; S prints `` payload: X``.
    keyless_payload_bar = is_java
    # J compares the first record against -1 (reports ``-1 is followed by N``).
    non_consecutive_from_minus_one = is_java
    non_consecutive_ascending = is_java

    non_consecutive_header = _Changed((2, 3), "Non-consecutive offsets in :", "Non-consecutive offsets in ")
    # 4.3 says ``Ignoring unknown file`` for a name without a dot; older tools crash on it.
    ignores_names_without_dot = is_java
    # 4.0+ read producer snapshots with a generated message class (its own schema-error texts).
    generated_snapshot_reader = _Releases(since=(4, 0))
    # ``kafka.serializer.*`` decoder classes exist up to 3.9.
    serializer_decoders = _Releases(before=(4, 0))
    # ``org.apache.kafka.tools.api.*`` decoder classes exist from 3.8, which deprecate the old ones.
    tools_api_decoders = _Releases(since=(3, 8))

    @property
    def summary_map_order(self) -> str:
        """The hash map the tool walks its end-of-run summaries in: Java's (J), Scala 2.13's (3.0-4.2) or
        Scala 2.12's (2.x)."""
        if self.is_java:
            return "java"
        return "scala213" if self.major_minor >= (3, 0) else "scala212"

    # 3.1+ print a producer's ``lastTimestamp:`` in a snapshot entry.
    snapshot_last_timestamp = _Releases(since=(3, 1))
    # 2.2-2.3 printed every entry's batch metadata from its stored fields, a producer without a batch too
    # (lastOffset -1: ProducerStateManager.readSnapshot built a BatchMetadata of whatever the file held,
    # core/src/main/scala/kafka/log/ProducerStateManager.scala at 2.2.2 and 2.3.1); 2.4+ only when
    # lastOffset >= 0. Seen in the snapshot of a real 4.3/4.4 broker's __consumer_offsets
    # (fixtures/real-groups): a transactional producer that wrote only markers.
    snapshot_metadata_always_printed = _Releases(before=(2, 4))
    # 2.8+ print ``<file> is empty.`` for an offset index without slots.
    empty_index_line = _Releases(since=(2, 8))
    # 2.2 compared an offset-index entry with the first record's offset at its position (later: the
    # batch's last offset), checked the zero entry before stopping at it, and the time-index dump stopped
    # at a zero entry only once it matched a batch.
    index_checks_first_record = _Releases(before=(2, 3))
    # 3.5+ print currentTxnFirstOffset as OptionalLong[...]; older as Scala Some(...)/None.
    snapshot_optional_long = _Releases(since=(3, 5))

    # -- internal-topic decoders (--offsets-decoder, --transaction-log-decoder, …) -------------------------

    # 2.2-2.3: DumpLogSegments' own OffsetsMessageParser / TransactionLogMessageParser texts
    # (``offset::g:t:p``, ``transactionalId=``), before it used the coordinators' formatters.
    internal_topics_by_dump_tool = _Releases(before=(2, 4))

    # The newest GroupMetadata value version the 2.2 (2) and 2.3 (3) dump tool parses.
    dump_tool_group_metadata_max_version = _Changed((2, 3), 2, 3)
    # Before 2.7 the transaction log text printed its partitions as a Scala ``Set(t-0, t-1)``.
    transaction_partitions_scala_set = _Releases(before=(2, 7))

    # The metadata record frame version a release reads: 0 in the 2.8 KRaft preview, then 1.
    metadata_frame_version = _Changed((3, 0), 0, 1)
    # 3.8+ print __consumer_offsets records as JSON; older ones GroupMetadataManager's
    # ``offset_commit::…`` / ``group_metadata::…`` strings.
    offsets_json = _Releases(since=(3, 8))

    @property
    def group_record_types(self) -> range | None:
        """Record types the offsets decoder knows when fewer than the release's message JSON defines
        (None: all of them). Up to 3.7 only 0-2 had a formatter; the 3.8-3.9 serde's hand-written
        switch knew 0-8 (3.9 already shipped unused share-group JSON); from 4.0 they agree."""
        if self.major_minor < (3, 8):
            return range(3)
        return range(9) if self.major_minor < (4, 0) else None

    # 4.0+ (KAFKA-18672): a coordinator value version outside its valid versions is an error.
    rejects_unknown_record_version = _Releases(since=(4, 0))
    # 4.1+ name "the specified decoder" for a coordinator record without a key, older ones the topic's.
    generic_missing_key_text = _Releases(since=(4, 1))
    # 4.1+ print __transaction_state as JSON (KAFKA-18207 missed the 4.0 branch).
    transaction_log_json = _Releases(since=(4, 1))
    # 4.4+ (KAFKA-20712) print the JSON ``transactionStatus`` as the state's name.
    transaction_status_names = _Releases(since=(4, 4))

    @property
    def share_state_release(self) -> tuple[int, int]:
        """The release whose __share_group_state records are read: the decoder only exists from 4.0, so
        older dialects read 4.0's (rather than knowing no record type at all)."""
        return max(self.major_minor, (4, 0))

    # 4.0 labelled a share-group state value's version ``type``; 4.1+ ``version``.
    share_state_envelope = _Changed((4, 1), "type", "version")

    @property
    def remote_log_release(self) -> tuple[int, int]:
        """The release whose __remote_log_metadata records are read: the decoder only exists from 3.9
        (KAFKA-16228), so older dialects read 3.9's."""
        return max(self.major_minor, (3, 9))

    # 4.0+ (KIP-1058) remote segment metadata end their ``toString()`` with ``txnIdxEmpty``.
    remote_log_txn_idx_empty = _Releases(since=(4, 0))

    def control_record_json(self, type_id: int) -> bool:
        """Whether the tool prints KRaft control record ``type_id`` (2-6) as JSON rather than its type name."""
        since = _CONTROL_JSON_SINCE.get(type_id)
        return since is not None and self.major_minor >= since


LATEST = Dialect((*LATEST_RELEASE, 0))


def dialect_of(release: tuple[int, int]) -> Dialect:
    """The dialect of a ``(major, minor)`` release."""
    return Dialect((release[0], release[1], 0))


_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")


def parse_kafka_version(text: str) -> Dialect:
    match = _VERSION.match(text.strip())
    if not match:
        raise UsageError(f"--kafka-version must look like 3.9 or 2.8.1, not {text!r}")
    version = (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))
    if version[:2] < OLDEST_SUPPORTED:
        raise UsageError(f"--kafka-version {text}: kdump reproduces Kafka 2.2 and later")
    return Dialect(version)
