"""``kdump gen --brokers N --replica-scenario S``: several brokers' log dirs for one topic, written as a
cluster's replicas would leave them, agreeing or diverging as asked.

A replica's log is a list of ``Run``s: ``count`` records written by the leader of ``epoch`` from
``start``. A batch is a pure function of (topic, partition, offset, epoch), so a follower that copied
a run holds the very bytes its leader wrote, and two leaders of different epochs write different
bytes at the same offsets. Records are generated batch by batch as the log is written, so a replica
of any size costs flat memory. Each scenario follows what Kafka does at each step: a leader assigns
its epoch at its log end when elected (Partition.makeLeader), a follower's cache learns an epoch
from the first batch carrying it (LogSegment.append), an unclean leader election bumps the epoch
(each leaderless moment also takes one, so epochs skip numbers). Every broker dir also gets a
``__cluster_metadata-0`` holding the topic, its partitions' final registration and its configs.

Scenarios (brokers 1..N; R = records):

* ``agree``: R records replicated everywhere; leadership then moved cleanly to broker 2 (its
  leader-epoch-checkpoint has an epoch no batch carries).
* ``lagging``: broker N stopped cleanly after R; the others took R/2 more.
* ``unclean``: leader 1 took R/4 records its followers never fetched (ISR [1], so they count as
  committed there), was killed, and broker 2 was elected uncleanly (epoch 2) and took R/2 more.
* ``multi-round``: brokers 1 and 3 led alternately through unclean elections (epochs 0-4), each
  writing records the other never saw; broker 3 leads at epoch 5 and broker 1 truncates in two
  rounds (KIP-279).
* ``retention``: broker N stopped after R; the others took 2R more and deleted their segments below
  1.5R, past broker N's log end (it truncates fully).
* ``compacted``: a compacted topic; broker 1 cleaned below R/2, broker 2 below R, broker 3 never.
"""

from __future__ import annotations

import functools
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from kdump.broker.broker_files import PartitionOffsets, write_log_dir_files, write_partition_files
from kdump.broker.leader_epoch_cache import LeaderEpochFileCache
from kdump.errors import UsageError
from kdump.format.checkpoint import EpochEntry, OffsetCheckpointEntry, encode_offset_checkpoint, uuid_to_string
from kdump.format.encode import encode_batch_v2
from kdump.format.messages import definitions, tables
from kdump.format.messages.encode import metadata_record
from kdump.format.messages.protocol import Uuid
from kdump.format.records import Record
from kdump.log.atomic import staged_directory, write_new_file
from kdump.log.files import parse_segment_file_name
from kdump.log.writer import LogConfig, PartitionLog

SCENARIOS = ("agree", "lagging", "unclean", "multi-round", "retention", "compacted")
GEN_MARKER = (".kdump-gen", b"Written by kdump gen; kdump gen --force may replace this directory.\n")
START_TIME = 1_700_000_000_000
METADATA_TOPIC_ID = uuid_to_string(bytes(15) + b"\x01")   # Uuid.METADATA_TOPIC_ID


@dataclass(frozen=True, slots=True)
class Run:
    epoch: int
    start: int
    count: int       # 0: the epoch assigned at the log end by an elected leader, no batch


@dataclass
class ReplicaSpec:
    runs: list[Run] = field(default_factory=list)
    high_watermark: int | None = None
    clean_shutdown: bool = True
    log_start: int = 0
    cleaned_below: int | None = None

    @property
    def log_end(self) -> int:
        return max((r.start + r.count for r in self.runs), default=0)


@dataclass
class PartitionSpec:
    replicas: dict[int, ReplicaSpec]
    leader: int
    leader_epoch: int
    isr: list[int]
    elr: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ClusterGenSpec:
    topic: str = "replicated"
    brokers: int = 3
    partitions: int = 1
    scenario: str = "agree"
    records: int = 1000
    records_per_batch: int = 10
    value_bytes: int = 100
    keys: int = 50                     # distinct keys (compaction keeps the latest of each)
    seed: int = 0
    log: LogConfig = field(default_factory=lambda: LogConfig(segment_bytes=64 << 10))

    def __post_init__(self) -> None:
        if self.scenario not in SCENARIOS:
            raise UsageError(f"--replica-scenario must be one of {', '.join(SCENARIOS)}, not {self.scenario!r}")
        if self.brokers < 2 or (self.scenario in ("unclean", "multi-round", "compacted") and self.brokers < 3):
            raise UsageError(f"the {self.scenario} scenario needs at least {2 if self.brokers < 2 else 3} brokers")
        if self.records < 8 or self.records_per_batch < 1 or self.keys < 1 or self.value_bytes < 0:
            raise UsageError("--records must be at least 8 for replica scenarios")


def _extend(replica: ReplicaSpec, epoch: int, count: int) -> None:
    replica.runs.append(Run(epoch, replica.log_end, count))


def _copy(source: ReplicaSpec) -> ReplicaSpec:
    return ReplicaSpec(list(source.runs))


def scenario(spec: ClusterGenSpec) -> PartitionSpec:
    """The replicas' runs and the partition's final registration for ``spec.scenario``."""
    n, r = spec.brokers, spec.records
    ids = list(range(1, n + 1))
    base = ReplicaSpec([Run(0, 0, r)])
    reps = {b: _copy(base) for b in ids}
    name = spec.scenario
    if name == "agree":
        _extend(reps[2], 1, 0)   # leadership moved to broker 2 at a clean shutdown of broker 1
        return _finish(PartitionSpec(reps, 2, 1, ids))
    if name == "lagging":
        for b in ids[:-1]:
            _extend(reps[b], 0, r // 2)
        return _finish(PartitionSpec(reps, 1, 0, ids[:-1]))
    if name == "unclean":
        for b in ids:
            reps[b].high_watermark = r
        _extend(reps[1], 0, r // 4)                 # acks=1 records the followers never fetched
        reps[1].high_watermark = r + r // 4          # ISR [1]: its own high watermark moved on
        reps[1].clean_shutdown = False               # killed
        for b in ids[1:]:
            _extend(reps[b], 2, r // 2)              # epoch 1 was the leaderless moment
        part = PartitionSpec(reps, 2, 2, ids[1:])
        return _finish(part, keep_hw={1})
    if name == "multi-round":
        a, b_, c, d = r // 2, r // 5, r // 3, r // 4
        for bid in (3, 2):
            _extend(reps[bid], 1, a)                 # broker 3 leads epoch 1, broker 2 follows
        _extend(reps[1], 2, b_)                      # broker 1 alone, unclean, epoch 2
        for bid in (3, 2):
            _extend(reps[bid], 3, c)
        _extend(reps[1], 4, d)
        reps[1].high_watermark = reps[1].log_end    # an ISR of one commits what it writes
        reps[1].clean_shutdown = False
        _extend(reps[3], 5, 0)                       # broker 3 leads again at epoch 5
        return _finish(PartitionSpec(reps, 3, 5, [3, 2, *ids[3:]]), keep_hw={1})
    if name == "retention":
        for bid in ids[:-1]:
            _extend(reps[bid], 0, 2 * r)
        return _finish(PartitionSpec(reps, 1, 0, ids[:-1]), retention_below=r + r // 2)
    # compacted
    reps[1].cleaned_below, reps[2].cleaned_below = r // 2, r
    for bid in ids:
        _extend(reps[bid], 0, r // 2)   # a dirty tail, so the cleaned part is not the active segment
    return _finish(PartitionSpec(reps, 1, 0, ids))


def _finish(part: PartitionSpec, *, keep_hw: set[int] = frozenset(),  # type: ignore[assignment]
            retention_below: int | None = None) -> PartitionSpec:
    leader_end = part.replicas[part.leader].log_end
    for broker, rep in part.replicas.items():
        if broker not in keep_hw:
            rep.high_watermark = min(rep.log_end, leader_end) if broker in part.isr else rep.log_end
        if retention_below is not None and broker in part.isr:
            rep.log_start = retention_below
    return part


def _value(topic: str, partition: int, offset: int, epoch: int, size: int) -> bytes:
    """``size`` bytes naming the record's offset and epoch (so leaders of different epochs write
    different bytes), padded with the epoch's filler."""
    head = f"{topic}-{partition} offset {offset} epoch {epoch} ".encode()
    if size <= len(head):
        return head[:size]
    return head + _filler(topic, partition, epoch, size)[:size - len(head)]


@functools.lru_cache(maxsize=64)
def _filler(topic: str, partition: int, epoch: int, size: int) -> bytes:
    return random.Random(f"{topic}/{partition}/{epoch}").randbytes(size // 2 + 1).hex().encode()


def run_batches(spec: ClusterGenSpec, partition: int, run: Run,
                cleaned_below: int | None = None, latest: dict[bytes, int] | None = None) -> Iterator[bytes]:
    """The batches of ``run``: ``records_per_batch`` records each, aligned to multiples of it from the run's
    start. Below ``cleaned_below`` only each key's latest record (``latest``) survives, in a batch that
    keeps its base and last offsets (MemoryRecords.filterTo); an emptied batch is dropped."""
    step = spec.records_per_batch
    for base in range(run.start, run.start + run.count, step):
        last = min(base + step, run.start + run.count) - 1
        records = []
        for offset in range(base, last + 1):
            key = f"key-{offset % spec.keys}".encode()
            if cleaned_below is not None and offset < cleaned_below and latest is not None \
                    and latest.get(key) != offset:
                continue
            records.append(Record(offset, START_TIME + offset, key,
                                  _value(spec.topic, partition, offset, run.epoch, spec.value_bytes)))
        if not records:
            continue
        yield encode_batch_v2(records, base_offset=base, partition_leader_epoch=run.epoch,
                              last_offset_delta=last - base)


def _latest_offsets(spec: ClusterGenSpec, below: int) -> dict[bytes, int]:
    """Each key's last offset below ``below`` (what the cleaner's offset map holds)."""
    return {f"key-{k}".encode(): max(o for o in range(k, below, spec.keys)) for k in range(min(spec.keys, below))}


def _write_replica(spec: ClusterGenSpec, partition: int, rep: ReplicaSpec, pdir: str,
                   topic_id: bytes) -> PartitionOffsets:
    cache = LeaderEpochFileCache()
    latest = _latest_offsets(spec, rep.cleaned_below) if rep.cleaned_below else None
    written = 0
    with PartitionLog(pdir, spec.log) as log:
        for run in rep.runs:
            if run.count == 0:
                cache.assign(run.epoch, run.start)
                continue
            for data in run_batches(spec, partition, run, rep.cleaned_below, latest):
                log.append(data)
                written += len(data)
            cache.assign(run.epoch, run.start)
        log.close()
    first_base = 0
    if rep.log_start:
        first_base = _apply_retention(pdir, rep.log_start)
        cache.truncate_from_start(max(first_base, 0))
    write_partition_files(pdir, topic_id, cache.entries)
    end = rep.log_end
    return PartitionOffsets(spec.topic, partition, first_base, first_base,
                            end if rep.clean_shutdown else 0, rep.high_watermark)


def _apply_retention(pdir: str, below: int) -> int:
    """Delete the segments before the first one at or past ``below`` (retention deletes whole
    segments, never the active one); the new first base offset."""
    named = [(parsed, name) for name in os.listdir(pdir) if (parsed := parse_segment_file_name(name)) is not None]
    bases = sorted(parsed[0] for parsed, _ in named if parsed[1:] == ("log", ""))
    keep_from = min([b for b in bases if b >= below] or [bases[-1]])
    for parsed, name in named:
        if parsed[0] < keep_from:
            os.remove(os.path.join(pdir, name))
    return keep_from


def _metadata_batch(spec: ClusterGenSpec, topic_id: bytes, parts: list[PartitionSpec]) -> bytes:
    registry = {s.name: s for s in tables.metadata(definitions.releases()[-1]).values()}

    def record(name: str, values: dict[str, object]) -> bytes:
        schema = registry[name]
        return metadata_record(schema, schema.valid_versions.hi, values)

    values = [record("TopicRecord", {"Name": spec.topic, "TopicId": Uuid(topic_id)})]
    for number, part in enumerate(parts):
        values.append(record("PartitionRecord", {
            "PartitionId": number, "TopicId": Uuid(topic_id), "Replicas": sorted(part.replicas),
            "Isr": part.isr, "RemovingReplicas": [], "AddingReplicas": [], "Leader": part.leader,
            "LeaderRecoveryState": 0, "LeaderEpoch": part.leader_epoch, "PartitionEpoch": part.leader_epoch,
            "Directories": [Uuid(bytes(16))] * len(part.replicas), "EligibleLeaderReplicas": part.elr,
            "LastKnownElr": []}))
    if spec.scenario == "compacted":
        values.append(record("ConfigRecord", {"ResourceType": 2, "ResourceName": spec.topic,
                                              "Name": "cleanup.policy", "Value": "compact"}))
    records = [Record(i, START_TIME, None, v) for i, v in enumerate(values)]
    return encode_batch_v2(records, base_offset=0, partition_leader_epoch=1)


@dataclass(frozen=True, slots=True)
class ClusterGenResult:
    outdir: str
    brokers: int
    partitions: int
    bytes_written: int


def generate_cluster(outdir: str, spec: ClusterGenSpec, *, force: bool = False) -> ClusterGenResult:
    """Write ``outdir/broker-<id>/`` for every broker (staged; nothing is left on failure)."""
    rng = random.Random(f"{spec.seed}/cluster/{spec.topic}")
    topic_id = rng.randbytes(16)
    cluster_id = rng.randbytes(16)
    parts = [scenario(spec) for _ in range(spec.partitions)]
    total = 0
    with staged_directory(outdir, force=force, marker=GEN_MARKER) as stage:
        for broker in range(1, spec.brokers + 1):
            root = os.path.join(stage, f"broker-{broker}")
            os.makedirs(root)
            offsets = []
            cleaned = []
            clean = True
            for number, part in enumerate(parts):
                rep = part.replicas[broker]
                pdir = os.path.join(root, f"{spec.topic}-{number}")
                offsets.append(_write_replica(spec, number, rep, pdir, topic_id))
                clean = clean and rep.clean_shutdown
                if rep.cleaned_below is not None:
                    cleaned.append(OffsetCheckpointEntry(spec.topic, number, rep.cleaned_below))
            total += sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(root) for f in fs)
            write_log_dir_files(root, offsets, cluster_id=cluster_id, node_id=broker,
                                directory_id=rng.randbytes(16), written_at_ms=START_TIME)
            if cleaned:
                write_new_file(os.path.join(root, "cleaner-offset-checkpoint"), encode_offset_checkpoint(cleaned))
            if clean:
                write_new_file(os.path.join(root, ".kafka_cleanshutdown"),
                               f'{{"version":0,"brokerEpoch":{broker}}}'.encode())
            meta = os.path.join(root, "__cluster_metadata-0")
            with PartitionLog(meta, LogConfig()) as log:
                log.append(_metadata_batch(spec, topic_id, parts))
                log.close()
            write_new_file(os.path.join(meta, "partition.metadata"),
                           f"version: 0\ntopic_id: {METADATA_TOPIC_ID}".encode())
    return ClusterGenResult(os.path.abspath(outdir), spec.brokers, spec.partitions, total)


__all__ = ["SCENARIOS", "ClusterGenResult", "ClusterGenSpec", "EpochEntry", "Run", "generate_cluster", "scenario"]
