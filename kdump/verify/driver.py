"""``verify_paths``: the one driver of ``kdump verify``, ``verify-index``, their ``--jobs`` workers and Spark.

    tally = Tally()
    for event in verify_paths(paths, Options(), tally, ordered_map=pool.ordered_map):
        ...   # SegmentChecked: progress; Report: findings to show; PathFailed: a path that cannot be read

It walks each path (``engine.plan``), reads a partition's own files just before its segments
(``begin_partition``), hands runs of consecutive segments to ``ordered_map`` (``check_run``: in this
process by default, in a worker process with ``--jobs``, in a Spark task for ``kdump spark verify``) and
applies the partition rules once the partition's last segment is back (``finish_partition``). Events come
in the order of the paths whatever ran the work, so what a caller renders does not depend on it; callers
render, nothing else. ``tally`` counts what was looked at (a run that looked at nothing is not OK).

A path whose walk fails (missing, not a directory Kafka writes) is one ``PathFailed`` and the next path
goes on; so does a run that fails outside the per-segment findings, and the rest of that path is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from kdump.broker.log_dir_checkpoints import CheckpointCache
from kdump.errors import KdumpError
from kdump.findings import Finding
from kdump.log.logdir import PartitionDir, SegmentFiles, files_bytes, log_bytes
from kdump.log.ranges import batch_ranges
from kdump.log.segment import ReadOnlyFile
from kdump.log.state_files import read_if_exists
from kdump.verify.engine import Options, Tally, begin_partition, check_segment, finish_partition, plan
from kdump.verify.partition_check import PartitionState, ReadSmall
from kdump.verify.segment_check import DecodedRanges, Opener, RangeRecords, SegmentFacts, decode_range

Target = PartitionDir | tuple[SegmentFiles, bool]
"""What ``plan`` yields: a partition, or one segment named by a file (and whether it is the last one)."""

OrderedMap = Callable[..., Iterator[tuple[Any, Any]]]
"""``ordered_map(func, items, is_work=..., weight=...)`` yielding ``(item, func(item))`` in the order of
``items`` (``None`` for items ``is_work`` rejects; ``weight``: the bytes of an item's files, which a pool
may use to keep small work in this process): ``serial_map``, ``WorkerPool.ordered_map``, or Spark's."""

TASK_BYTES = 8 << 20
"""Small segments go to a worker together up to this many bytes of ``.log``, so that handing work to a
process does not cost more than the work (an index check reads little of each segment)."""


def serial_map(func: Callable[[Any], Any], items: Iterable[Any], *, is_work: Callable[[Any], bool] | None = None,
               weight: Callable[[Any], int] | None = None) -> Iterator[tuple[Any, Any]]:
    """``ordered_map`` in this process."""
    for item in items:
        yield item, func(item) if is_work is None or is_work(item) else None


@dataclass(frozen=True)
class SegmentChecked:
    """One segment was checked (its findings are also in its ``Report``); ``log_bytes`` is for progress."""

    partition: PartitionDir | None
    segment: SegmentFiles
    findings: list[Finding]
    facts: SegmentFacts

    @property
    def log_bytes(self) -> int:
        return log_bytes((self.segment,))


@dataclass(frozen=True)
class Report:
    """The findings to show for a partition (its segments' and the partition rules'), or for one segment
    named by a file (``partition`` None)."""

    path: str
    partition: PartitionDir | None
    findings: list[Finding]


@dataclass(frozen=True)
class PathFailed:
    """``path`` could not be checked (the rest of it was skipped)."""

    path: str
    error: KdumpError


Event = SegmentChecked | Report | PathFailed


@dataclass
class _Owner:
    """A partition (or a segment named by a file) being checked: what its files said, what its segments gave."""

    path: str
    partition: PartitionDir | None
    before: PartitionState | None
    tally: Tally
    facts: list[SegmentFacts] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


@dataclass(frozen=True)
class Run:
    """Work for a worker: consecutive segments, each with whether it is its partition's active one."""

    segments: tuple[tuple[SegmentFiles, bool], ...]
    options: Options
    open_file: Opener = ReadOnlyFile
    owner: _Owner | None = None

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "owner": None}   # a worker needs the segments, not the partition


@dataclass(frozen=True)
class SegmentRange:
    """Work for a worker: the records of the batches in ``[start, end)`` of a segment that ``--deep`` checks in
    ranges, decoded (``decode_range``) while its walk runs in the driver's process (``check_in_ranges``); the
    last range ends at ``size``, the file's when they were planned."""

    segment: SegmentFiles
    active: bool
    start: int
    end: int
    size: int
    options: Options
    open_file: Opener = ReadOnlyFile
    owner: _Owner | None = None

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "owner": None}


@dataclass(frozen=True)
class _Edge:
    """Where an owner's segments begin (its tally joins the run's) or end (its report is due)."""

    owner: _Owner
    end: bool


@dataclass(frozen=True)
class _Failed:
    path: str
    error: KdumpError


Checked = tuple[list[Finding], SegmentFacts | None, Tally, KdumpError | None]


def check_run(run: Run) -> list[Checked]:
    """What a worker (or Spark task) does: each segment's findings and facts, and what it looked at."""
    results: list[Checked] = []
    for seg, active in run.segments:
        tally = Tally()
        try:
            findings, facts = check_segment(seg, active, run.options, tally, run.open_file)
        except KdumpError as error:
            results.append(([], None, tally, error))
            break
        results.append((findings, facts, tally, None))
    return results


def check_work(work: Run | SegmentRange) -> list[Checked] | RangeRecords:
    """What a worker (or Spark task) does with a piece of work: ``check_run``, or a range's records decoded."""
    if not isinstance(work, SegmentRange):
        return check_run(work)
    assert work.segment.log is not None
    try:
        with work.open_file(work.segment.log) as log:
            return decode_range(log, work.start, work.end, work.options.deep)
    except KdumpError:
        return RangeRecords(work.start, work.end, work.start, True, {})   # the walk reads the file itself


def check_in_ranges(first: SegmentRange, records: RangeRecords, results: Iterator[tuple[Any, Any]]) -> Checked:
    """``check_run`` of one segment whose records workers decode in ranges: its walk runs here, taking the
    decoded records of each range from ``results`` (``DecodedRanges``), where the segment's other ranges come
    next, in order, after ``first`` (whose ``records`` are back)."""
    def ranges() -> Iterator[RangeRecords]:
        item, decoded = first, records
        while True:
            yield decoded
            if item.end >= item.size:
                return
            item, decoded = next(results)
            assert isinstance(item, SegmentRange) and item.segment == first.segment, "a segment's ranges come in a row"

    tally = Tally()
    decoded = DecodedRanges(ranges())
    try:
        findings, facts = check_segment(first.segment, first.active, first.options, tally, first.open_file, decoded)
        checked: Checked = (findings, facts, tally, None)
    except KdumpError as error:
        checked = ([], None, tally, error)
    decoded.close()
    return checked


def _segment_ranges(seg: SegmentFiles, active: bool, run: Run, split_bytes: int | None) -> Iterator[SegmentRange]:
    """The ranges of about ``split_bytes`` (``batch_ranges``) a segment's records are decoded in by workers when
    ``--deep`` decodes them all; none when it is not more than that, or is walked without decoding (its walk
    reads a segment at the speed of the walk that finds ranges)."""
    if split_bytes is None or not run.options.deep or seg.log is None or log_bytes((seg,)) <= split_bytes:
        return
    try:
        log = run.open_file(seg.log)
    except KdumpError:
        return   # its check says why
    with log:
        ranges = batch_ranges(seg, log, split_bytes)
        start, end = next(ranges)
        if end < log.size:
            yield SegmentRange(seg, active, start, end, log.size, run.options, run.open_file, run.owner)
            for start, end in ranges:
                yield SegmentRange(seg, active, start, end, log.size, run.options, run.open_file, run.owner)


def _split(run: Run, split_bytes: int | None) -> Iterator[Run | SegmentRange]:
    """``run``, with each segment checked in ranges (``_segment_ranges``) taken out of it, in order."""
    rest: list[tuple[SegmentFiles, bool]] = []
    for seg, active in run.segments:
        ranges = _segment_ranges(seg, active, run, split_bytes)
        first = next(ranges, None)
        if first is None:
            rest.append((seg, active))
            continue
        if rest:
            yield replace(run, segments=tuple(rest))
            rest = []
        yield first
        yield from ranges
    if rest:
        yield replace(run, segments=tuple(rest))


def _runs(partition: PartitionDir, task_bytes: int) -> Iterator[tuple[tuple[SegmentFiles, bool], ...]]:
    """The partition's segments in order, cut into runs of about ``task_bytes`` (0: one segment each)."""
    run: list[tuple[SegmentFiles, bool]] = []
    size = 0
    last = len(partition.segments) - 1
    for i, seg in enumerate(partition.segments):
        run.append((seg, i == last))
        size += log_bytes((seg,))
        if size >= task_bytes:
            yield tuple(run)
            run, size = [], 0
    if run:
        yield tuple(run)


_Item = Run | SegmentRange | _Edge | _Failed


def _work_bytes(work: Run | SegmentRange) -> int:
    if isinstance(work, SegmentRange):
        return work.end - work.start
    return files_bytes(segment for segment, _ in work.segments)


def _is_work(item: _Item) -> bool:
    return isinstance(item, Run | SegmentRange)


def _items(paths: Iterable[str], options: Options, planner: Callable[[str], Iterable[Target]], read: ReadSmall,
           open_file: Opener, task_bytes: int, split_bytes: int | None) -> Iterator[_Item]:
    """Every run of segments, in order, between the edges of its owner."""
    cache = CheckpointCache(read)
    for path in paths:
        try:
            for target in planner(path):
                if isinstance(target, PartitionDir):
                    tally = Tally()
                    owner = _Owner(path, target, begin_partition(target, options, tally, read, cache), tally)
                    runs: Iterable[tuple[tuple[SegmentFiles, bool], ...]] = _runs(target, task_bytes)
                else:
                    owner = _Owner(path, None, None, Tally())
                    runs = ((target,),)
                yield _Edge(owner, end=False)
                for segments in runs:
                    yield from _split(Run(segments, options, open_file, owner), split_bytes)
                yield _Edge(owner, end=True)
        except KdumpError as error:
            yield _Failed(path, error)


def verify_paths(paths: Iterable[str], options: Options, tally: Tally, *, ordered_map: OrderedMap = serial_map,
                 planner: Callable[[str], Iterable[Target]] = plan, read: ReadSmall = read_if_exists,
                 open_file: Opener = ReadOnlyFile, task_bytes: int | None = None,
                 split_bytes: int | None = None) -> Iterator[Event]:
    """The events of checking ``paths`` (see the module docstring); ``tally`` is added to as they come.

    ``planner``, ``read`` and ``open_file`` list, read and open what the paths name (Spark's reach
    object stores); ``task_bytes`` is how much ``.log`` one call of ``check_run`` gets (``TASK_BYTES``).
    With ``split_bytes`` (None: never), the records of a segment of more than that, where ``--deep`` decodes
    them all, are decoded by ``ordered_map`` in ranges of about that size (``SegmentRange``) while its walk,
    which holds every rule in their order, runs here (``check_in_ranges``).
    """
    failed: set[str] = set()
    items = _items(paths, options, planner, read, open_file, TASK_BYTES if task_bytes is None else task_bytes,
                   split_bytes)
    results = ordered_map(check_work, items, is_work=_is_work, weight=_work_bytes)
    for item, checked in results:
        path = item.path if isinstance(item, _Failed) else item.owner.path
        if path in failed:
            continue
        error: KdumpError | None = None
        if isinstance(item, _Failed):
            error = item.error
        elif isinstance(item, _Edge) and not item.end:
            tally.merge(item.owner.tally)
        elif isinstance(item, _Edge):
            owner = item.owner
            if owner.partition is not None:
                assert owner.before is not None
                owner.findings.extend(finish_partition(owner.partition, owner.before, owner.facts, options, read))
            yield Report(path, owner.partition, owner.findings)
        else:
            assert isinstance(item, Run | SegmentRange) and item.owner is not None and checked is not None
            segments = item.segments if isinstance(item, Run) else ((item.segment, item.active),)
            if isinstance(item, SegmentRange):
                checked = [check_in_ranges(item, checked, results)]
            for (seg, _active), (findings, facts, seg_tally, error) in zip(segments, checked, strict=False):
                tally.merge(seg_tally)
                if error is not None:
                    break
                assert facts is not None
                item.owner.findings.extend(findings)
                item.owner.facts.append(facts)
                yield SegmentChecked(item.owner.partition, seg, findings, facts)
        if error is not None:
            failed.add(path)
            tally.unreadable.append(path)
            yield PathFailed(path, error)
