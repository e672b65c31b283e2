"""What ``kdump summary`` reports for each partition. Library only: reads files, returns model objects.

Per segment: offsets, sizes, batch/record counts, codecs, magics, timestamps, producers. Per
partition: the same totals plus what the log dir's checkpoints say:
recovery point (flushed below), high watermark (replication-offset-checkpoint), log start offset,
cleaner's first dirty offset, leader epochs, topic id, compared with the log end offset.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from kdump.broker.log_dir_checkpoints import (
    CLEANER_CHECKPOINT,
    HIGH_WATERMARK_CHECKPOINT,
    LOG_START_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    CheckpointCache,
    read_leader_epochs,
)
from kdump.broker.recovery import offset_range_problem
from kdump.broker.unified_log import LogOffsetsSnapshot, log_end_offset
from kdump.errors import KdumpError
from kdump.findings import ERROR, NOTE, WARNING, Finding, Severity
from kdump.format.checkpoint import LEADER_EPOCH_CHECKPOINT_NAME, EpochEntry, parse_partition_metadata
from kdump.log.batches import LogBatches
from kdump.log.logdir import PartitionDir
from kdump.log.segment import ReadOnlyFile
from kdump.log.state_files import read_if_exists
from kdump.verify.partition_check import partition_checkpoints


@dataclass(slots=True)
class SegmentSummary:
    base_offset: int
    path: str
    log_bytes: int = 0
    index_bytes: int = 0
    time_index_bytes: int = 0
    txn_index_bytes: int = 0
    batches: int = 0
    records: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    min_timestamp: int | None = None
    max_timestamp: int | None = None
    invalid_bytes: int = 0
    padding_bytes: int = 0             # preallocated zero tail (log.preallocate, or a crashed active segment)
    codecs: set[str] = field(default_factory=set)
    magics: set[int] = field(default_factory=set)
    producers: set[int] = field(default_factory=set)
    transactional_batches: int = 0
    control_batches: int = 0


@dataclass(slots=True)
class PartitionSummary:
    topic: str
    partition: int
    path: str
    state: str | None
    segments: list[SegmentSummary] = field(default_factory=list)
    snapshots: list[str] = field(default_factory=list)
    checkpoints: dict[str, int] = field(default_factory=dict)   # CHECKPOINT_MEANING name -> offset
    remote_log_enabled: bool = False                           # tiered: the log start is in remote storage
    leader_epochs: list[EpochEntry] = field(default_factory=list)
    topic_id: str | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def offsets(self) -> LogOffsetsSnapshot | None:
        """What the partition's files say of its offsets (kdump.broker.unified_log); None without segments."""
        if not self.segments:
            return None
        return LogOffsetsSnapshot.of(log_start_checkpoint=self.checkpoints.get("logStartOffset"),
                                     first_segment_base=self.segments[0].base_offset,
                                     log_end=log_end_offset(self.segments),
                                     high_watermark_checkpoint=self.checkpoints.get("highWatermark"),
                                     recovery_point=self.checkpoints.get("recoveryPoint"),
                                     remote_log_enabled=self.remote_log_enabled)

    @property
    def log_start_offset(self) -> int | None:
        offsets = self.offsets
        return None if offsets is None else offsets.log_start_offset

    @property
    def log_end_offset(self) -> int | None:
        return log_end_offset(self.segments)

    def total(self, name: str) -> int:
        return sum(getattr(s, name) for s in self.segments)

    def union(self, name: str) -> set[object]:
        out: set[object] = set()
        for s in self.segments:
            out |= getattr(s, name)
        return out

    @property
    def time_range(self) -> tuple[int | None, int | None]:
        lows = [s.min_timestamp for s in self.segments if s.min_timestamp is not None]
        highs = [s.max_timestamp for s in self.segments if s.max_timestamp is not None]
        return (min(lows) if lows else None, max(highs) if highs else None)


CHECKPOINT_MEANING = {
    RECOVERY_POINT_CHECKPOINT: "recoveryPoint",
    HIGH_WATERMARK_CHECKPOINT: "highWatermark",
    LOG_START_CHECKPOINT: "logStartOffset",
    CLEANER_CHECKPOINT: "firstDirtyOffset",
}
_FIELDS = {"recoveryPoint": "recovery_point", "highWatermark": "high_watermark", "logStartOffset": "log_start_offset",
           "firstDirtyOffset": "cleaner_offset"}


def _file_size(path: str | None) -> int:
    try:
        return os.path.getsize(path) if path else 0
    except OSError:
        return 0


def summarize_segment(base_offset: int, log_path: str, findings: list[Finding]) -> SegmentSummary:
    seg = SegmentSummary(base_offset, log_path)
    try:
        with ReadOnlyFile(log_path) as log:
            seg.log_bytes = log.size
            end = 0
            batches = LogBatches(log, check_crc=False)
            try:
                out_of_range = False
                for batch in batches:
                    problem = None if out_of_range else offset_range_problem(batch, base_offset)
                    if problem is not None:  # reported once a segment: every later batch is likely the same
                        out_of_range = True
                        findings.append(Finding(ERROR, "offset-range", log_path, problem, offset=batch.base_offset))
                    end = batch.end
                    seg.batches += 1
                    seg.records += batches.record_count(batch)
                    seg.first_offset = batch.base_offset if seg.first_offset is None else seg.first_offset
                    seg.last_offset = batch.last_offset
                    seg.magics.add(batch.magic)
                    seg.codecs.add(batch.codec.kafka_name)
                    low = batch.base_timestamp if batch.delete_horizon_ms is None else batch.max_timestamp
                    if low >= 0:
                        seg.min_timestamp = low if seg.min_timestamp is None else min(seg.min_timestamp, low)
                    if batch.max_timestamp >= 0:
                        seg.max_timestamp = batch.max_timestamp if seg.max_timestamp is None \
                            else max(seg.max_timestamp, batch.max_timestamp)
                    if batch.producer_id >= 0:
                        seg.producers.add(batch.producer_id)
                    seg.transactional_batches += batch.is_transactional
                    seg.control_batches += batch.is_control
            except KdumpError as err:
                findings.append(Finding(ERROR, "unreadable", log_path, f"stopped reading: {err.reason}",
                                        position=err.position))
            if batches.zero_padding_from is not None:
                seg.padding_bytes = seg.log_bytes - batches.zero_padding_from
            seg.invalid_bytes = seg.log_bytes - seg.padding_bytes - end
    except KdumpError as err:
        findings.append(Finding(ERROR, "unreadable", log_path, err.reason))
    return seg


def _problem_text(err: KdumpError) -> str:
    line = getattr(err, "line_number", None)
    return f"{err.reason} (line {line})" if line else err.reason


@dataclass(slots=True)
class CheckpointsRead:
    """What the log dir's checkpoints say of one partition, read before its segments."""

    values: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)   # a bad checkpoint, told with the first partition
    remote_log_enabled: bool = False


def read_partition_checkpoints(partition: PartitionDir, cache: CheckpointCache | None = None) -> CheckpointsRead:
    """The checkpoint values of ``partition`` (``cache`` keyed by log dir avoids re-reading root files).

    Read before the segments: a broker writes the checkpoints after the log, so read in this order a
    live partition's high watermark is never past the log end kdump then reads.
    """
    checkpoints, problems = partition_checkpoints(partition, cache)
    values = {meaning: value for meaning in CHECKPOINT_MEANING.values()
              if (value := getattr(checkpoints, _FIELDS[meaning])) is not None}
    return CheckpointsRead(values, [Finding(ERROR, "checkpoint-unreadable", path, _problem_text(err))
                                    for path, err in problems], checkpoints.remote_log_enabled)


def summarize_segments(partition: PartitionDir, checkpoints: CheckpointsRead) -> PartitionSummary:
    """The summary of a partition whose checkpoints were read already (what a worker process runs)."""
    summary = PartitionSummary(partition.topic, partition.partition, partition.path, partition.state)
    summary.findings.extend(checkpoints.findings)
    summary.checkpoints.update(checkpoints.values)
    summary.remote_log_enabled = checkpoints.remote_log_enabled
    for files in partition.segments:
        if files.log is None:
            summary.findings.append(Finding(WARNING, "orphan-index", files.paths()[0],
                                                 "index files without a .log (Kafka deletes such orphans at start-up)"))
            continue
        seg = summarize_segment(files.base_offset, files.log, summary.findings)
        seg.index_bytes = _file_size(files.index)
        seg.time_index_bytes = _file_size(files.time_index)
        seg.txn_index_bytes = _file_size(files.txn_index)
        summary.segments.append(seg)
    summary.snapshots = list(partition.snapshots)
    _partition_files(partition, summary)
    summary.findings.extend(compare_checkpoints(summary))
    return summary


def _partition_files(partition: PartitionDir, summary: PartitionSummary) -> None:
    epoch_path = os.path.join(partition.path, LEADER_EPOCH_CHECKPOINT_NAME)
    meta_path = os.path.join(partition.path, "partition.metadata")
    for path in (epoch_path, meta_path):
        try:
            if path == epoch_path:
                summary.leader_epochs = read_leader_epochs(partition.path) or []
            elif (data := read_if_exists(path)) is not None:
                summary.topic_id = parse_partition_metadata(data, path).topic_id
        except KdumpError as err:
            summary.findings.append(Finding(ERROR, "checkpoint-unreadable", path, _problem_text(err)))


def compare_checkpoints(summary: PartitionSummary) -> list[Finding]:
    """What the checkpoints claim versus the log end offset found on disk."""
    leo = summary.log_end_offset
    out: list[Finding] = []
    if leo is None:
        return out

    def add(severity: Severity, check: str, offset: int, text: str, path: str = summary.path) -> None:
        out.append(Finding(severity, check, path, text, offset=offset))

    hw = summary.checkpoints.get("highWatermark")
    if hw is not None:
        if hw > leo:
            add(WARNING, "checkpoint-past-log", hw, f"high watermark {hw} is above the log end offset {leo}: "
                f"committed data is missing from this replica")
        elif hw < leo:
            add(NOTE, "above-high-watermark", hw, f"{leo - hw} offset(s) above the high watermark {hw} "
                f"(not yet committed when it was checkpointed)")
    rp = summary.checkpoints.get("recoveryPoint")
    if rp is not None:
        if rp > leo:
            add(WARNING, "checkpoint-past-log", rp, f"recovery point {rp} is above the log end offset {leo}")
        elif rp < leo:
            add(NOTE, "unflushed", rp, f"offsets {rp}..{leo - 1} were not known to be flushed; "
                f"an unclean start-up recovers from the recovery point")
    ls = summary.checkpoints.get("logStartOffset")
    if ls is not None and summary.segments:
        if ls > leo:
            add(WARNING, "checkpoint-past-log", ls, f"log start offset {ls} is above the log end offset {leo}")
        elif ls < summary.segments[0].base_offset and not summary.remote_log_enabled:   # tiered: remote
            add(WARNING, "log-start-below-segments", ls, f"log start offset {ls} is below the first segment's "
                f"base offset {summary.segments[0].base_offset}")
    if summary.leader_epochs and summary.leader_epochs[-1].start_offset > leo:
        add(WARNING, "leader-epoch-past-log", summary.leader_epochs[-1].start_offset,
            f"latest leader epoch {summary.leader_epochs[-1].epoch} starts after the log end offset")
    for seg in summary.segments:
        if seg.invalid_bytes:
            add(WARNING, "invalid-bytes", seg.log_bytes - seg.invalid_bytes,
                f"{seg.invalid_bytes} invalid byte(s) at the end of the segment", seg.path)
    return out
