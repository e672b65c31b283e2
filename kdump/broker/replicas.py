"""The replicas of each partition found under several brokers' log dirs, and what each one holds.

A PATH is a broker's log dir (the broker named by ``meta.properties`` ``node.id`` or ``broker.id``,
the dir by ``directory.id``), a partition dir, or a folder holding such log dirs. Replicas of one
partition are matched by topic name and topic id (``partition.metadata``, KIP-516). A PATH may be an
s3://, gs://, hdfs:// URI as well: every file is reached through kdump.log.locations, so the same bytes are read.

Per replica, from the log dir's checkpoints (read as the broker reads them, kdump.broker.log_dir_checkpoints) and
one walk over its batch headers (kdump.log.headers, no record is decoded):

* log start offset: max(log-start-offset-checkpoint, first segment's base offset) as LogLoader.load;
* log end offset: one past the last batch (the last segment's base offset when it holds none);
* high watermark, recovery point, cleaner's first dirty offset: the checkpoints;
* last stable offset: the first offset of the earliest transaction still open at the log end
  (ProducerStateManager.firstUnstableOffset), capped by the high watermark (UnifiedLog.lastStableOffset);
* the leader-epoch chain of ``leader-epoch-checkpoint`` and the one the batches carry; and the cache
  the broker holds after loading: the checkpoint, plus (after an unclean shutdown) the epochs of the
  batches LogSegment.recover reads from the recovery point's segment on, truncated to the log end and
  log start (LogLoader.load: truncateFromEndAsyncFlush, truncateFromStartAsyncFlush; Kafka 3.9.0-4.3.0,
  storage/src/main/java/org/apache/kafka/storage/internals/log/LogLoader.java and LogSegment.java).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kdump.broker import unified_log
from kdump.broker.leader_epoch_cache import LeaderEpochFileCache
from kdump.broker.log_dir_checkpoints import CLEANER_CHECKPOINT, read_leader_epochs
from kdump.broker.log_manager import CLEAN_SHUTDOWN_FILE, METADATA_TOPIC, LogDirState, read_log_dir_state
from kdump.errors import InputError, KdumpError
from kdump.format.checkpoint import (
    EpochEntry,
    parse_partition_metadata,
    parse_properties,
)
from kdump.log.headers import ReadCounter, SegmentHeader, partition_headers
from kdump.log.locations import base_name, exists, is_dir, join
from kdump.log.locations import parent as parent_of
from kdump.log.logdir import PartitionDir, walk_partitions
from kdump.log.segment import read_small_file

_SMALL_FILE_LIMIT = 64 << 20


@dataclass
class LogDir:
    """One broker log dir and what its own files say."""

    path: str
    broker: int | None
    directory_id: str | None
    state: LogDirState
    cleaner_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return str(self.broker) if self.broker is not None else base_name(self.path)


@dataclass
class Replica:
    """One replica of a partition on one broker's disk."""

    log_dir: LogDir
    partition: PartitionDir
    topic_id: str | None = None
    checkpoint_epochs: list[EpochEntry] = field(default_factory=list)
    batch_epochs: list[EpochEntry] = field(default_factory=list)      # where each epoch's batches start
    cache: LeaderEpochFileCache = field(default_factory=LeaderEpochFileCache)
    log_start_offset: int = 0
    log_start_checkpoint: int = 0
    log_end_offset: int = 0
    first_batch_offset: int | None = None
    high_watermark: int | None = None
    recovery_point: int | None = None
    cleaner_offset: int | None = None
    last_stable_offset: int | None = None
    batches: int = 0
    records: int = 0
    bytes: int = 0
    epoch_problems: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    read_errors: list[str] = field(default_factory=list)   # "<file>: position <n>: <reason>"

    @property
    def broker(self) -> int | None:
        return self.log_dir.broker

    @property
    def label(self) -> str:
        return self.log_dir.label

    @property
    def state(self) -> str | None:
        """None for a live replica; "future", "delete" or "stray" from the directory name."""
        return self.partition.state

    @property
    def clean_shutdown(self) -> bool:
        return self.log_dir.state.clean_shutdown

    @property
    def committed_end(self) -> int:
        """The high watermark as the broker loads it: within [log start, log end]."""
        hw = unified_log.high_watermark(self.high_watermark or 0, self.log_start_offset, self.log_end_offset)
        assert hw is not None
        return hw


def _read_log_dir(path: str) -> LogDir:
    broker = directory_id = None
    problems: list[str] = []
    props_path = join(path, "meta.properties")
    if exists(props_path):
        try:
            props = parse_properties(read_small_file(props_path, _SMALL_FILE_LIMIT), props_path)
            raw = props.get("node.id", props.get("broker.id"))
            broker = int(raw) if raw is not None and raw.strip().lstrip("-").isdigit() else None
            directory_id = props.get("directory.id")
        except KdumpError as err:
            problems.append(f"{props_path}: {err.reason}")
    log_dir = LogDir(path, broker, directory_id, read_log_dir_state(path), problems=problems)
    log_dir.problems.extend(log_dir.state.notes)
    if log_dir.state.refusal is not None:
        log_dir.problems.append(f"{log_dir.state.refusal[0]}: {log_dir.state.refusal[1]}")
    log_dir.cleaner_offsets = log_dir.state.checkpoints.tables.get(CLEANER_CHECKPOINT, {})
    if CLEANER_CHECKPOINT in log_dir.state.checkpoints.problems:
        log_dir.problems.append(f"{join(path, CLEANER_CHECKPOINT)}: "
                                f"{log_dir.state.checkpoints.problems[CLEANER_CHECKPOINT].reason}")
    return log_dir


@dataclass
class Discovery:
    """Every replica found, and the KRaft metadata log copies among them."""

    replicas: list[Replica] = field(default_factory=list)
    metadata_dirs: list[PartitionDir] = field(default_factory=list)
    log_dirs: list[LogDir] = field(default_factory=list)


def discover(paths: Iterable[str], *, topic: str | None = None, partition: int | None = None) -> Discovery:
    """The replicas under ``paths`` (each a log dir, a partition dir or a folder of log dirs)."""
    found = Discovery()
    log_dirs: dict[str, LogDir] = {}
    seen: set[str] = set()
    for path in paths:
        if not is_dir(path):
            raise InputError("not a directory", path=path)
        for pdir in walk_partitions(path):
            if pdir.path in seen:
                continue
            seen.add(pdir.path)
            parent = parent_of(pdir.path)
            if pdir.topic == METADATA_TOPIC:
                found.metadata_dirs.append(pdir)
                continue
            if (topic is not None and pdir.topic != topic) or (partition is not None and pdir.partition != partition):
                continue
            if parent not in log_dirs:
                log_dirs[parent] = _read_log_dir(parent)
                found.log_dirs.append(log_dirs[parent])
            found.replicas.append(Replica(log_dirs[parent], pdir))
    return found


def read_replica_files(replica: Replica) -> None:
    """The partition's own files and the log dir's checkpoints for it (no segment is read)."""
    pdir, key = replica.partition, (replica.partition.topic, replica.partition.partition)
    meta = join(pdir.path, "partition.metadata")
    if exists(meta):
        try:
            replica.topic_id = parse_partition_metadata(read_small_file(meta, _SMALL_FILE_LIMIT), meta).topic_id
        except KdumpError as err:
            replica.problems.append(f"{meta}: {err.reason}")
    epochs = join(pdir.path, "leader-epoch-checkpoint")
    try:
        replica.checkpoint_epochs = read_leader_epochs(pdir.path) or []
    except KdumpError as err:
        replica.problems.append(f"{epochs}: {err.reason}")
    first_base = pdir.segments[0].base_offset if pdir.segments else None
    checkpoints = replica.log_dir.state.partition(*key, first_base)   # kdump.broker.log_dir_checkpoints
    replica.high_watermark, replica.recovery_point = checkpoints.high_watermark, checkpoints.recovery_point
    replica.cleaner_offset = checkpoints.cleaner_offset
    replica.log_start_checkpoint = checkpoints.log_start_offset or 0
    # replicas compares the local logs: a tiered partition's log start below them is remote storage's
    replica.log_start_offset = checkpoints.offsets(first_base, None).local_log_start_offset


class ReplicaScan:
    """What one walk over a replica's batch headers establishes (offsets, counts, the epochs batches
    carry, open transactions, the leader epoch cache the broker holds after loading), fed a header at
    a time so the divergence walk (kdump.broker.replica_divergence) can feed it too."""

    def __init__(self, replica: Replica) -> None:
        self.replica = replica
        segments = replica.partition.segments
        self.cache = LeaderEpochFileCache(replica.checkpoint_epochs)
        self.recovering_from: int | None = None
        if not replica.clean_shutdown:
            point = replica.recovery_point if replica.recovery_point is not None else 0
            # LogLoader.recoverLog recovers every segment from the one holding the recovery point.
            holding = [s.base_offset for s in segments if s.base_offset <= point]
            self.recovering_from = holding[-1] if holding else (segments[0].base_offset if segments else 0)
        self.open_txns: dict[int, int] = {}
        self.last_end: int | None = None
        self.previous_epoch = -1
        self.failed = False

    def add(self, header: SegmentHeader) -> None:
        replica, batch, cache = self.replica, header.batch, self.cache
        replica.batches += 1
        replica.bytes += batch.size
        replica.records += batch.records_count if batch.records_count is not None else 1
        if replica.first_batch_offset is None:
            replica.first_batch_offset = batch.base_offset
        self.last_end = batch.last_offset + 1
        epoch = batch.partition_leader_epoch
        if batch.magic >= 2 and epoch >= 0:
            if epoch > self.previous_epoch:
                replica.batch_epochs.append(EpochEntry(epoch, batch.base_offset))
            elif epoch < self.previous_epoch:
                replica.epoch_problems.append(f"batch at offset {batch.base_offset} carries epoch {epoch}, "
                                              f"below the {self.previous_epoch} of an earlier batch")
            self.previous_epoch = max(self.previous_epoch, epoch)
            if self.recovering_from is not None and batch.base_offset >= self.recovering_from and \
                    (cache.latest_epoch is None or epoch > cache.latest_epoch):
                cache.assign(epoch, batch.base_offset)   # LogSegment.recover
        if batch.is_transactional and batch.producer_id >= 0:
            if batch.is_control:
                self.open_txns.pop(batch.producer_id, None)
            else:
                self.open_txns.setdefault(batch.producer_id, batch.base_offset)

    def fail(self, where: str, err: KdumpError) -> None:
        self.failed = True
        self.replica.read_errors.append(f"{where}: position {err.position}: {err.reason} "
                                        f"(the replica is compared up to there)")

    def finish(self) -> None:
        replica, segments, cache = self.replica, self.replica.partition.segments, self.cache
        # The active segment's next offset (an empty last segment: its base offset).
        last_base = segments[-1].base_offset if segments else replica.log_start_offset
        if self.failed:   # read up to a broken batch: its log ends there as far as kdump knows
            last_base = segments[0].base_offset if segments else replica.log_start_offset
        replica.log_end_offset = last_base if self.last_end is None else max(self.last_end, last_base)
        cache.truncate_from_end(replica.log_end_offset)
        cache.truncate_from_start(replica.log_start_checkpoint)   # LogLoader: the checkpoint's value
        replica.cache = cache
        first_unstable = min(self.open_txns.values()) if self.open_txns else None
        replica.last_stable_offset = unified_log.last_stable_offset(first_unstable, replica.committed_end,
                                                                    replica.log_end_offset)
        replica.epoch_problems.extend(compare_epoch_chains(replica))


def scan_replica(replica: Replica, counter: ReadCounter | None = None) -> None:
    """Walk the replica's batch headers once through a ``ReplicaScan`` (its files read already)."""
    scan = ReplicaScan(replica)
    where = replica.partition.path
    try:
        for header in partition_headers(replica.partition.segments, counter=counter):
            where = header.path
            scan.add(header)
    except KdumpError as err:
        scan.fail(where, err)
    scan.finish()


def compare_epoch_chains(replica: Replica) -> list[str]:
    """Where ``leader-epoch-checkpoint`` and the batches' epochs disagree.

    An entry no batch carries is normal at the log end (a leader elected, or leadership moved at a
    clean shutdown, before anything was written: Partition.makeLeader assigns the epoch at the log end
    offset) and below the log start (retention). Anywhere else the checkpoint and the log disagree.
    """
    out: list[str] = []
    carried = {e.epoch: e.start_offset for e in replica.batch_epochs}
    for entry in replica.checkpoint_epochs:
        if entry.start_offset >= replica.log_end_offset or entry.start_offset <= replica.log_start_offset:
            continue
        start = carried.get(entry.epoch)
        if start is None:
            out.append(f"leader-epoch-checkpoint has epoch {entry.epoch} from offset {entry.start_offset}, "
                       f"but no batch carries it")
        elif start != entry.start_offset:
            out.append(f"leader-epoch-checkpoint starts epoch {entry.epoch} at offset {entry.start_offset}, "
                       f"its first batch is at offset {start}")
    known = {e.epoch for e in replica.checkpoint_epochs}
    for entry in replica.batch_epochs:
        if entry.epoch not in known and entry.start_offset >= replica.log_start_offset:
            out.append(f"batches from offset {entry.start_offset} carry epoch {entry.epoch}, which "
                       f"leader-epoch-checkpoint does not list")
    return out


def group_partitions(replicas: Iterable[Replica]) -> Iterator[tuple[str, int, list[Replica]]]:
    """Replicas by (topic, partition) in name order; a replica whose topic id differs from the
    others' (a deleted and re-created topic) is still grouped, and flagged by the caller."""
    groups: dict[tuple[str, int], list[Replica]] = {}
    for replica in replicas:
        groups.setdefault((replica.partition.topic, replica.partition.partition), []).append(replica)
    for (topic, number), members in sorted(groups.items()):
        members.sort(key=lambda r: (r.broker if r.broker is not None else 1 << 31, r.log_dir.path,
                                    r.state or ""))
        yield topic, number, members


__all__ = ["CLEAN_SHUTDOWN_FILE", "Discovery", "LogDir", "Replica", "ReplicaScan", "compare_epoch_chains",
           "discover", "group_partitions", "read_replica_files", "scan_replica"]
