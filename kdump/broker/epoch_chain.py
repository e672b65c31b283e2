"""Whether a partition's ``leader-epoch-checkpoint`` agrees with the epochs its batches carry: the one rule,
for ``kdump verify`` (one replica) and ``kdump replicas`` (each replica of a partition).

A broker writes the checkpoint from its LeaderEpochFileCache, which assigns an epoch at the base offset
of the first batch carrying it (UnifiedLog.append, LogSegment.recover) or at the log end offset when a
leader is elected (Partition.makeLeader), and truncates it with the log (truncateFromEnd,
truncateFromStart). Kafka 4.3.0, storage/src/main/java/org/apache/kafka/storage/internals/epoch/
LeaderEpochFileCache.java. So, on a healthy replica:

- batch epochs never decrease along the log (a follower copies the leader's batches);
- checkpoint entries increase in epoch and start offset;
- no entry starts past the log end (an entry at the log end is a leader elected before it wrote);
- every epoch the batches carry is in the checkpoint, starting at its first batch, except an epoch
  newer than the checkpoint's latest (the file is written after the batch) and epochs below the log
  start (truncateFromStart moves the earliest entry kept to the log start offset);
- an entry that starts inside the log and that no batch carries is unusual: a later assign at the same
  start offset replaces an entry no batch was written under.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import pairwise

from kdump.findings import ERROR, NOTE, Finding
from kdump.format.checkpoint import EpochEntry

EpochRun = tuple[int, int, str]
"""(epoch, first offset, segment path): where the batches of a log start carrying an epoch."""


def check_epoch_chain(file: str, entries: Sequence[EpochEntry] | None, runs: Sequence[EpochRun],
                      log_start: int, log_end: int) -> Iterator[Finding]:
    """Where the checkpoint ``file`` (its ``entries``; None: there is none) and the batches' ``runs`` disagree,
    for a log of offsets [``log_start``, ``log_end``) as it lies on disk (see the module docstring)."""
    merged: list[EpochRun] = []
    for epoch, first, segment in runs:
        if merged and merged[-1][0] == epoch:
            continue
        if merged and epoch < merged[-1][0]:
            yield Finding(ERROR, "leader-epoch-decreasing", segment, f"batches with leader epoch {epoch} "
                          f"follow batches with epoch {merged[-1][0]}", offset=first)
        merged.append((epoch, first, segment))
    if entries is None:
        return
    for prev, entry in pairwise(entries):
        if entry.epoch <= prev.epoch or entry.start_offset < prev.start_offset:
            yield Finding(ERROR, "leader-epoch-order", file, f"entry (epoch {entry.epoch}, start offset "
                          f"{entry.start_offset}) does not follow (epoch {prev.epoch}, start offset "
                          f"{prev.start_offset})", offset=entry.start_offset)
    if entries and entries[-1].start_offset > log_end:
        yield Finding(ERROR, "leader-epoch-past-log", file, f"epoch {entries[-1].epoch} starts at offset "
                      f"{entries[-1].start_offset}, after the log end offset {log_end}",
                      offset=entries[-1].start_offset)
    starts = {e.epoch: e.start_offset for e in entries}
    for i, (epoch, first, _) in enumerate(merged):
        start = starts.get(epoch)
        if start is None:
            if not entries or epoch > entries[-1].epoch or first < log_start:
                continue  # not checkpointed yet, or below the log start (truncateFromStart)
            yield Finding(ERROR, "leader-epoch-missing", file, f"the log has batches of leader epoch {epoch} from "
                          f"offset {first}, the checkpoint has no such epoch", offset=first)
        elif start > first:
            yield Finding(ERROR, "leader-epoch-start", file, f"epoch {epoch} starts at offset {start} in the "
                          f"checkpoint, but the log has a batch of that epoch at offset {first}", offset=first)
        elif start < first and i > 0:
            yield Finding(NOTE, "leader-epoch-start", file, f"epoch {epoch} starts at offset {start} in the "
                          f"checkpoint; the log's first batch of that epoch is at offset {first}", offset=first)
    carried = {epoch for epoch, _, _ in merged}
    for entry in entries:
        if log_start < entry.start_offset < log_end and entry.epoch not in carried:
            yield Finding(NOTE, "leader-epoch-unused", file, f"epoch {entry.epoch} starts at offset "
                          f"{entry.start_offset} in the checkpoint, but no batch carries it",
                          offset=entry.start_offset)


__all__ = ["EpochRun", "check_epoch_chain"]
