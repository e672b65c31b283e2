"""What one replica holds: on disk, from one walk over its batch headers, and after loading, from the
broker's loader (kdump.broker.loader, LogLoader: the one "after loading" of ``recover``, ``replicas`` and
Spark).

On disk (``DiskWalk``, no record decoded): the log end offset (one past the last batch; the last segment's
base offset when it holds none), the batch, record and byte counts, where each leader epoch's batches
start, and whether ``leader-epoch-checkpoint`` agrees with them (kdump.broker.epoch_chain).

After loading (``load_replica``): the loader's plan for the partition dir with the log dir's state
(clean shutdown or not, checkpoints): segments recovered from the recovery point after an unclean
shutdown, or whose index is missing or transaction index fails its sanity check, truncated at the first
invalid batch; the log end, recovery point, high watermark, leader-epoch cache and last stable offset
that follow (kdump.broker.partition_plan.LoadedLog). The loader reads what LogLoader reads: the CRCs of the
segments it recovers, the control records that complete transactions; elsewhere batch headers only.
"""

from __future__ import annotations

from kdump.broker.epoch_chain import EpochRun, check_epoch_chain
from kdump.broker.loader import plan_partition
from kdump.broker.replica_discovery import Replica
from kdump.broker.unified_log import local_log_start_offset
from kdump.errors import KdumpError
from kdump.findings import ERROR, Finding
from kdump.format.checkpoint import EpochEntry
from kdump.log.headers import ReadCounter, SegmentHeader, partition_headers
from kdump.log.locations import join


def load_replica(replica: Replica, index_interval_bytes: int) -> None:
    """The log the broker's loader leaves of ``replica`` (a ``-delete`` dir is not loaded: LogManager deletes it),
    for a topic whose ``index.interval.bytes`` is ``index_interval_bytes``."""
    if replica.partition.state == "delete":
        return
    plan = plan_partition(replica.partition.path, replica.log_dir.state, index_interval_bytes, inspect=False)
    if plan.refused_file is not None:
        replica.offline = f"{plan.refused_file}: {plan.refused_reason}"
        replica.findings.append(Finding(ERROR, "offline", plan.refused_file, f"the broker cannot load this "
                                        f"replica: {plan.refused_reason}"))
        return
    replica.loaded = plan.loaded
    replica.kept_parts, replica.lost_parts = plan.kept_parts, plan.lost_parts


class DiskWalk:
    """What one walk over a replica's batch headers as they lie establishes, fed a header at a time so the
    divergence walk (kdump.broker.replica_divergence) can feed it too. ``add`` says whether the batch is
    part of the loaded log (within the bytes the loader keeps)."""

    def __init__(self, replica: Replica) -> None:
        self.replica = replica
        self.runs: list[EpochRun] = []
        self.last_end: int | None = None
        self.previous_epoch = -1
        self.failed = False
        self.kept: dict[str, list[tuple[int, int | None]]] | None = None
        if replica.loaded is not None:
            self.kept = {}
            for part in replica.kept_parts:
                if part.log is not None:
                    self.kept.setdefault(part.log, []).append((part.start, part.end))

    def add(self, header: SegmentHeader) -> bool:
        disk, batch = self.replica.disk, header.batch
        disk.batches += 1
        disk.bytes += batch.size
        disk.records += batch.records_count if batch.records_count is not None else 1
        if disk.first_batch_offset is None:
            disk.first_batch_offset = batch.base_offset
        self.last_end = batch.last_offset + 1
        epoch = batch.partition_leader_epoch
        if batch.magic >= 2 and epoch >= 0:
            if epoch > self.previous_epoch:
                disk.batch_epochs.append(EpochEntry(epoch, batch.base_offset))
            if epoch != self.previous_epoch:
                self.runs.append((epoch, batch.base_offset, header.path))
            self.previous_epoch = max(self.previous_epoch, epoch)
        if self.kept is None:
            return True
        return any(start <= batch.position and (end is None or batch.position < end)
                   for start, end in self.kept.get(header.path, ()))

    def fail(self, where: str, err: KdumpError) -> None:
        self.failed = True
        self.replica.disk.read_errors.append(f"{where}: position {err.position}: {err.reason} "
                                             f"(the replica is compared up to there)")

    def finish(self) -> None:
        replica, segments = self.replica, self.replica.partition.segments
        first = segments[0].base_offset if segments else None
        start = local_log_start_offset(replica.log_start_checkpoint, first)
        # The active segment's next offset (an empty last segment: its base offset).
        last_base = segments[-1].base_offset if segments else start
        if self.failed:   # read up to a broken batch: its log ends there as far as kdump knows
            last_base = first if first is not None else start
        end = replica.disk.log_end_offset = last_base if self.last_end is None else max(self.last_end, last_base)
        replica.findings.extend(check_epoch_chain(join(replica.partition.path, "leader-epoch-checkpoint"),
                                                  replica.checkpoint_epochs, self.runs, start, end))


def walk_replica(replica: Replica, counter: ReadCounter | None = None) -> None:
    """Walk the replica's batch headers once through a ``DiskWalk`` (its small files read already)."""
    walk = DiskWalk(replica)
    where = replica.partition.path
    try:
        for header in partition_headers(replica.partition.segments, counter=counter):
            where = header.path
            walk.add(header)
    except KdumpError as err:
        walk.fail(where, err)
    walk.finish()


__all__ = ["DiskWalk", "load_replica", "walk_replica"]
