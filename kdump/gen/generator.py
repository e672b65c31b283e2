"""``kdump gen``'s engine: deterministic record streams appended through ``PartitionLog``.

Every random choice comes from ``random.Random`` seeded with a string derived from the seed,
topic and partition (string seeds hash with SHA-512, independent of PYTHONHASHSEED), and every
timestamp from ``start_time`` + ``time_step`` per record, so one seed always gives the same bytes.
Batches are built with kdump.format.encode; the broker-side state (snapshots, txn index,
checkpoints) comes from kdump.broker.broker_files.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from kdump.broker.broker_files import BrokerStateObserver, PartitionOffsets, write_log_dir_files, write_partition_files
from kdump.errors import UsageError
from kdump.format.batch import TimestampType
from kdump.format.codecs import Codec
from kdump.format.control import ControlType, encode_control_key, encode_end_txn_marker
from kdump.format.encode import encode_batch_v2, encode_legacy_message, encode_legacy_wrapper
from kdump.format.records import Header, Record
from kdump.log.atomic import staged_directory
from kdump.log.writer import LogConfig, PartitionLog

KEY_PATTERNS = ("seq", "random", "binary", "null", "mixed")
VALUE_PATTERNS = ("text", "json", "binary", "seq", "mixed")
DEFAULT_START_TIME = 1_700_000_000_000   # 2023-11-14T22:13:20Z: fixed, never the wall clock
MAX_TOPIC_NAME_LENGTH = 249
# Written into every tree ``generate`` makes: ``force`` replaces only such a tree (or an empty directory).
GEN_MARKER = (".kdump-gen", b"Written by kdump gen; kdump gen --force may replace this directory.\n")

# Words for UTF-8 values: ASCII, accented Latin, CJK, emoji, so decoders meet multi-byte text.
_WORDS = ("kafka", "log", "segment", "offset", "café", "naïve", "Zürich", "日本語", "데이터", "παράδειγμα",
          "данные", "🙂", "🚀", "streams", "batch", "record")


CONSUMER_OFFSETS = "__consumer_offsets"


def topic_name_problem(name: str) -> str | None:
    """Why Kafka's ``Topic.validate`` rejects ``name`` (its exact words), or None for a legal name.

    A topic name becomes a directory name, so this also keeps ``generate`` inside its output.
    """
    if not name:
        return "the empty string is not allowed"
    if name in (".", ".."):
        return f"'{name}' is not allowed"
    if len(name.encode("utf-16-le", "surrogatepass")) // 2 > MAX_TOPIC_NAME_LENGTH:  # Java String.length
        return f"the length of '{name}' is longer than the max allowed length {MAX_TOPIC_NAME_LENGTH}"
    if not all(c.isascii() and (c.isalnum() or c in "._-") for c in name):
        return f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    return None


@dataclass(frozen=True, slots=True)
class TopicSpec:
    name: str
    partitions: int = 1
    compression: Codec = Codec.NONE
    magic: int = 2
    timestamp_type: TimestampType = TimestampType.CREATE_TIME
    producer: str = "plain"
    live: bool = False        # leave the active segments as a running broker has them (--preallocate)

    def __post_init__(self) -> None:
        problem = topic_name_problem(self.name)
        if problem is not None:
            raise UsageError(f"Topic name is invalid: {problem}")
        if self.magic not in (0, 1, 2):
            raise UsageError(f"topic {self.name}: magic must be 0, 1 or 2, not {self.magic}")
        if self.compression is Codec.ZSTD and self.magic < 2:
            raise UsageError(f"topic {self.name}: zstd needs magic 2")
        if self.producer != "plain" and self.magic < 2:
            raise UsageError(f"topic {self.name}: {self.producer} producers need magic 2")
        if self.magic == 0 and self.timestamp_type is TimestampType.LOG_APPEND_TIME:
            raise UsageError(f"topic {self.name}: magic 0 has no timestamps")
        if self.partitions < 1:
            raise UsageError(f"topic {self.name}: partitions must be >= 1")


@dataclass(frozen=True, slots=True)
class GenSpec:
    topics: tuple[TopicSpec, ...]
    records: int = 200                     # data records per partition (markers come on top)
    key_pattern: str = "seq"
    key_size: tuple[int, int] = (8, 16)
    value_pattern: str = "text"
    value_size: tuple[int, int] = (20, 120)
    null_key_ratio: float = 0.0
    tombstone_ratio: float = 0.0
    max_headers: int = 0
    records_per_batch: int = 10
    batch_bytes: int | None = None         # close a batch once its keys+values reach this many bytes
    start_time: int = DEFAULT_START_TIME
    time_step: int = 1000
    time_jitter: int = 0                   # +/- ms per record: out-of-order timestamps
    abort_ratio: float = 0.0
    txn_batches: int = 3                   # data batches per transaction
    empty_txn_ratio: float = 0.0           # share of transactions ended before any data reached the partition
    epoch_bump_ratio: float = 0.0          # share of aborts after which the producer's epoch is bumped
    compacted_ratio: float = 0.0           # share of magic 2 data records the log cleaner removed (offset gaps)
    seed: int = 0
    group_keys: int = 1000                 # __consumer_offsets: the (group, topic, partition) keys commits cycle over
    log: LogConfig = field(default_factory=LogConfig)
    node_id: int = 1

    def __post_init__(self) -> None:
        if not self.topics:
            raise UsageError("at least one topic is needed")
        if len({t.name for t in self.topics}) != len(self.topics):
            raise UsageError("topic names must be unique")
        if self.key_pattern not in KEY_PATTERNS or self.value_pattern not in VALUE_PATTERNS:
            raise UsageError("unknown key or value pattern")
        for lo, hi in (self.key_size, self.value_size):
            if not 0 <= lo <= hi:
                raise UsageError(f"bad size range {lo}-{hi}")
        if self.group_keys < 1:
            raise UsageError("group keys must be >= 1")
        if self.records < 0 or self.records_per_batch < 1 or self.txn_batches < 1 or self.max_headers < 0:
            raise UsageError("records must be >= 0, records per batch and batches per transaction >= 1")
        for ratio in (self.null_key_ratio, self.tombstone_ratio, self.abort_ratio, self.empty_txn_ratio,
                      self.epoch_bump_ratio, self.compacted_ratio):
            if not 0.0 <= ratio <= 1.0:
                raise UsageError(f"ratios must be between 0 and 1, not {ratio}")

    @property
    def total_records(self) -> int:
        return sum(t.partitions for t in self.topics) * self.records


def _rng(seed: int, *parts: object) -> random.Random:
    return random.Random("/".join([str(seed), *map(str, parts)]))


class _Content:
    """Keys, values and headers for one partition."""

    def __init__(self, spec: GenSpec, rng: random.Random) -> None:
        self.spec = spec
        self.rng = rng

    def key(self, offset: int) -> bytes | None:
        s, rng = self.spec, self.rng
        pattern = s.key_pattern
        if pattern == "mixed":
            pattern = rng.choice(("seq", "random", "binary", "null"))
        if pattern == "null" or (s.null_key_ratio and rng.random() < s.null_key_ratio):
            return None
        if pattern == "seq":
            return f"key-{offset}".encode()
        size = rng.randint(*s.key_size)
        if pattern == "binary":
            return rng.randbytes(size)
        return "".join(rng.choices("abcdefghijklmnopqrstuvwxyz0123456789", k=size)).encode()

    def value(self, offset: int, timestamp: int) -> bytes | None:
        s, rng = self.spec, self.rng
        if s.tombstone_ratio and rng.random() < s.tombstone_ratio:
            return None
        pattern = s.value_pattern
        if pattern == "mixed":
            pattern = rng.choice(("text", "json", "binary", "seq"))
        size = rng.randint(*s.value_size)
        if pattern == "seq":
            return f"value-{offset}".encode()
        if pattern == "binary":
            return rng.randbytes(size)
        if pattern == "json":
            words = " ".join(rng.choices(_WORDS, k=max(1, size // 8)))
            return (f'{{"id":{offset},"ts":{timestamp},"amount":{rng.randint(1, 99999) / 100},'
                    f'"note":"{words}"}}').encode()
        out: list[str] = []
        length = 0
        while length < size:
            word = rng.choice(_WORDS)
            out.append(word)
            length += len(word.encode()) + 1
        return " ".join(out).encode()

    def headers(self) -> tuple[Header, ...]:
        if not self.spec.max_headers:
            return ()
        n = self.rng.randint(0, self.spec.max_headers)
        return tuple((f"h{i}".encode(), None if self.rng.random() < 0.1 else f"v{self.rng.randint(0, 999)}".encode())
                     for i in range(n))


class _OffsetCommits(_Content):
    """``__consumer_offsets``' records: OffsetCommit records (type 1, value version 3, with a leader epoch)
    written through the message definitions of kdump.format.messages, as the group coordinator writes them
    (Kafka 4.4.0 group-coordinator/.../GroupCoordinatorRecordHelpers.newOffsetCommitRecord). Commit ``n`` is
    of key ``n % group_keys``: group ``group-<k // slots>`` on the ``k % slots``-th partition of the other
    topics, at an offset that grows by one per round (at most ``records``); ``tombstone_ratio`` deletes
    commits (a tombstone, as an expired or deleted offset's)."""

    OFFSET_COMMIT = 1
    VALUE_VERSION = 3

    def __init__(self, spec: GenSpec, rng: random.Random, slots: list[tuple[str, int]]) -> None:
        super().__init__(spec, rng)
        from kdump.format.messages import definitions, tables

        self.key_schema, self.value_schema = tables.group_coordinator(definitions.releases()[-1])[self.OFFSET_COMMIT]
        self.slots = slots or [("demo", 0)]

    def _key(self, offset: int) -> tuple[str, str, int, int]:
        k = offset % self.spec.group_keys
        topic, partition = self.slots[k % len(self.slots)]
        return f"group-{k // len(self.slots)}", topic, partition, offset // self.spec.group_keys

    def key(self, offset: int) -> bytes | None:
        from kdump.format.messages.encode import coordinator_key

        group, topic, partition, _ = self._key(offset)
        return coordinator_key(self.key_schema, self.OFFSET_COMMIT,
                               {"group": group, "topic": topic, "partition": partition})

    def value(self, offset: int, timestamp: int) -> bytes | None:
        from kdump.format.messages.encode import coordinator_value

        if self.spec.tombstone_ratio and self.rng.random() < self.spec.tombstone_ratio:
            return None
        committed = min(self.spec.records, self._key(offset)[3] + 1)
        return coordinator_value(self.value_schema, self.VALUE_VERSION,
                                 {"offset": committed, "leaderEpoch": 0, "metadata": "",
                                  "commitTimestamp": max(timestamp, 0)})

    def headers(self) -> tuple[Header, ...]:
        return ()


@dataclass
class _ProducerState:
    producer_id: int
    epoch: int = 0
    sequence: int = 0
    batches_in_txn: int = 0


def partition_appends(spec: GenSpec, topic: TopicSpec, topic_index: int, partition: int) -> Iterator[tuple[bytes, int]]:
    """Each produce request for one partition as (entries bytes, data records in it), in log order."""
    rng = _rng(spec.seed, topic.name, partition)
    content = _Content(spec, rng)
    if topic.name == CONSUMER_OFFSETS:
        content = _OffsetCommits(spec, rng, [(t.name, p) for t in spec.topics if t.name != CONSUMER_OFFSETS
                                             for p in range(t.partitions)])
    offset = 0
    written = 0
    clock = spec.start_time
    producer = None
    if topic.producer != "plain":
        producer = _ProducerState(producer_id=1000 * (topic_index + 1) + partition, epoch=topic_index % 3)
    transactional = topic.producer == "transactional"
    while written < spec.records:
        records: list[Record] = []
        size = 0
        while written + len(records) < spec.records and len(records) < spec.records_per_batch:
            ts = -1
            if topic.magic > 0:
                jitter = rng.randint(-spec.time_jitter, spec.time_jitter) if spec.time_jitter else 0
                ts = max(0, clock + jitter)
            clock += spec.time_step
            o = offset + len(records)
            key, value = content.key(o), content.value(o, ts)
            headers = content.headers() if topic.magic == 2 else ()
            records.append(Record(o, ts, key, value, headers))
            size += len(key or b"") + len(value or b"")
            if spec.batch_bytes is not None and size >= spec.batch_bytes:
                break
        append_time = max(r.timestamp for r in records)
        produced = len(records)
        if spec.compacted_ratio > 0 and topic.magic == 2:
            # LogCleaner's rewrite: removed records leave offset gaps, the batch keeps its base offset and
            # lastOffsetDelta (and with them the producer's sequences); at least its last record stays here.
            records = [r for r in records[:-1] if rng.random() >= spec.compacted_ratio] + records[-1:]
        data = _encode(topic, records, offset, append_time, producer, transactional, produced)
        offset += produced
        written += produced
        yield data, len(records)
        if transactional and producer is not None:
            producer.batches_in_txn += 1
            if producer.batches_in_txn >= spec.txn_batches or written >= spec.records:
                abort = spec.abort_ratio > 0 and rng.random() < spec.abort_ratio
                yield _marker(producer, offset, clock - spec.time_step, abort), 0
                offset += 1
                producer.batches_in_txn = 0
                if abort and spec.epoch_bump_ratio > 0 and rng.random() < spec.epoch_bump_ratio:
                    # InitProducerId after an abort (or a coordinator's timeout): a new epoch, sequences from 0.
                    producer.epoch, producer.sequence = producer.epoch + 1, 0
                if written < spec.records and spec.empty_txn_ratio > 0 and rng.random() < spec.empty_txn_ratio:
                    # The partition joined a transaction that ended before any data was sent to it: only the
                    # coordinator's marker arrives (its producer has no ongoing transaction here).
                    yield _marker(producer, offset, clock - spec.time_step, rng.random() < 0.5), 0
                    offset += 1


def _encode(topic: TopicSpec, records: list[Record], base_offset: int, append_time: int,
            producer: _ProducerState | None, transactional: bool, produced: int) -> bytes:
    lat = topic.timestamp_type is TimestampType.LOG_APPEND_TIME
    if topic.magic == 2:
        pid, epoch, seq = -1, -1, -1
        if producer is not None:
            pid, epoch, seq = producer.producer_id, producer.epoch, producer.sequence
            producer.sequence += produced
        return encode_batch_v2(records, base_offset=base_offset, codec=topic.compression,
                               timestamp_type=topic.timestamp_type, log_append_time=append_time if lat else None,
                               producer_id=pid, producer_epoch=epoch, base_sequence=seq, partition_leader_epoch=0,
                               is_transactional=transactional, last_offset_delta=produced - 1)
    if topic.compression is Codec.NONE:
        # One produce request with several uncompressed messages: one append, one entry per message.
        return b"".join(encode_legacy_message(r.offset, r.key, r.value, magic=topic.magic,
                                              timestamp=append_time if lat else r.timestamp,
                                              timestamp_type=topic.timestamp_type) for r in records)
    return encode_legacy_wrapper(records, magic=topic.magic, codec=topic.compression,
                                 timestamp_type=topic.timestamp_type, log_append_time=append_time if lat else None)


def _marker(producer: _ProducerState, offset: int, timestamp: int, abort: bool) -> bytes:
    kind = ControlType.ABORT if abort else ControlType.COMMIT
    record = Record(offset, timestamp, encode_control_key(kind), encode_end_txn_marker(0))
    return encode_batch_v2([record], base_offset=offset, producer_id=producer.producer_id,
                           producer_epoch=producer.epoch, partition_leader_epoch=0, is_transactional=True,
                           is_control=True)


@dataclass(frozen=True, slots=True)
class GenResult:
    outdir: str
    partitions: int
    segments: int
    records: int
    bytes_written: int


def generate(outdir: str, spec: GenSpec, *, force: bool = False,
             progress: Callable[[int], None] | None = None) -> GenResult:
    """Write a whole log.dirs tree at ``outdir`` (staged beside it; nothing is left on failure).

    With ``force`` an existing ``outdir`` is replaced if it is empty or an earlier ``generate``
    output (it holds ``GEN_MARKER``); anything else is refused (kdump.log.atomic.staged_directory).
    """
    segments = records = total_bytes = 0
    offsets: list[PartitionOffsets] = []
    with staged_directory(outdir, force=force, marker=GEN_MARKER) as stage:
        for t_index, topic in enumerate(spec.topics):
            config = spec.log
            if not topic.live and config.preallocate:
                config = replace(config, preallocate=False)
            for p in range(topic.partitions):
                pdir = os.path.join(stage, f"{topic.name}-{p}")
                observer = BrokerStateObserver()
                log = PartitionLog(pdir, config, observer=observer)
                with log:
                    for data, count in partition_appends(spec, topic, t_index, p):
                        log.append(data)
                        records += count
                        total_bytes += len(data)
                        if progress is not None and count:
                            progress(count)
                    active_base = log.active_base_offset or 0
                    log.close(live=topic.live)
                leo = log.log_end_offset
                if not topic.live and leo not in observer.snapshot_offsets and leo > 0:
                    observer.write_snapshot(pdir, leo)  # clean shutdown takes a last snapshot
                write_partition_files(pdir, _rng(spec.seed, "topic-id", topic.name).randbytes(16),
                                      observer.epochs)
                segments += log.segments_written
                offsets.append(PartitionOffsets(topic.name, p, 0, 0, active_base if topic.live else leo, leo))
        write_log_dir_files(stage, offsets, cluster_id=_rng(spec.seed, "cluster").randbytes(16),
                            node_id=spec.node_id, directory_id=_rng(spec.seed, "dir").randbytes(16),
                            written_at_ms=spec.start_time)
    return GenResult(os.path.abspath(outdir), len(offsets), segments, records, total_bytes)
