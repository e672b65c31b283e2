"""``kdump verify-index PATH...``: check that index entries match the log, for people and for CI.

``run_verify`` is shared with ``kdump verify``; the rules are in ``kdump.verify.engine``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import NoReturn, TextIO

import click

from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import json_option, option_stack, traceback_option
from kdump.cli.parallel import WorkerPool, jobs_option
from kdump.cli.progress import ProgressBar, wants_progress
from kdump.errors import KdumpError, write_error
from kdump.log.logdir import PartitionDir, SegmentFiles, log_bytes
from kdump.render import verify_text
from kdump.render.verify_text import VerifyCounts
from kdump.verify.engine import (
    INDEX,
    Options,
    Tally,
    begin_partition,
    check_segment,
    finish_partition,
    plan,
)
from kdump.verify.findings import Finding
from kdump.verify.index_checks import DEFAULT_INDEX_INTERVAL_BYTES
from kdump.verify.partition_check import PartitionState
from kdump.verify.segment_check import SegmentFacts


def _write(findings: list[Finding], counts: VerifyCounts, out: TextIO, as_json: bool, errors_only: bool,
           bar: ProgressBar) -> None:
    if findings:
        bar.clear_for(out)
    counts.errors += sum(1 for f in findings if f.is_error and f.check != "unreadable")
    counts.notes += sum(1 for f in findings if not f.is_error)
    if as_json:
        for f in findings:
            if f.is_error or not errors_only:
                out.write(verify_text.finding_json(f) + "\n")
    else:
        for line in verify_text.text_lines(findings, errors_only=errors_only):
            out.write(line + "\n")


@dataclass
class _Partition:
    """A partition being checked: what its files said before its segments, and what they gave."""

    partition: PartitionDir
    before: PartitionState
    tally: Tally
    facts: list[SegmentFacts] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


@dataclass(frozen=True)
class _Segments:
    """Work for a worker: consecutive segments (of ``owner``, or one named by a file when None)."""

    path: str
    segments: tuple[tuple[SegmentFiles, bool], ...]   # (segment, is the partition's active one)
    options: Options
    owner: _Partition | None = None

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "owner": None}   # the worker needs the segments, not the partition


@dataclass(frozen=True)
class _Edge:
    """Where a partition's segments begin (its tally joins the run's) or end (its findings are written)."""

    path: str
    owner: _Partition
    end: bool


@dataclass(frozen=True)
class _Unreadable:
    path: str
    error: KdumpError


_Item = _Segments | _Edge | _Unreadable
_Checked = tuple[list[Finding], SegmentFacts | None, Tally, KdumpError | None]

# Small segments go to a worker together up to this many bytes of .log, so that passing work to
# processes does not cost more than the work (an index check reads little of each segment).
_TASK_BYTES = 8 << 20


def _check(item: _Item) -> list[_Checked]:
    """A worker's job: each segment's findings and facts, with the tally of what it looked at."""
    assert isinstance(item, _Segments)
    results: list[_Checked] = []
    for seg, active in item.segments:
        tally = Tally()
        try:
            findings, facts = check_segment(seg, active, item.options, tally)
        except KdumpError as error:
            results.append(([], None, tally, error))
            break
        results.append((findings, facts, tally, None))
    return results


def _runs(partition: PartitionDir) -> Iterator[tuple[tuple[SegmentFiles, bool], ...]]:
    """The partition's segments in order, cut into runs of about ``_TASK_BYTES``."""
    run: list[tuple[SegmentFiles, bool]] = []
    size = 0
    last = len(partition.segments) - 1
    for i, seg in enumerate(partition.segments):
        run.append((seg, i == last))
        size += log_bytes((seg,))
        if size >= _TASK_BYTES:
            yield tuple(run)
            run, size = [], 0
    if run:
        yield tuple(run)


def _items(paths: tuple[str, ...], options: Options) -> Iterator[_Item]:
    """Every segment to check, in order; a partition's own files are read just before its segments."""
    cache: dict[str, object] = {}
    for path in paths:
        try:
            for target in plan(path):
                if not isinstance(target, PartitionDir):
                    yield _Segments(path, (target,), options)
                    continue
                tally = Tally()
                owner = _Partition(target, begin_partition(target, options, tally, cache=cache), tally)
                yield _Edge(path, owner, end=False)
                for run in _runs(target):
                    yield _Segments(path, run, options, owner)
                yield _Edge(path, owner, end=True)
        except KdumpError as error:
            yield _Unreadable(path, error)


def _log_bytes(paths: tuple[str, ...]) -> int:
    total = 0
    for path in paths:
        try:
            for target in plan(path):
                total += log_bytes(target.segments if isinstance(target, PartitionDir) else (target[0],))
        except KdumpError:
            continue
    return total


def _take(item: _Segments, checked: list[_Checked], counts: VerifyCounts, out: TextIO, as_json: bool,
          errors_only: bool, bar: ProgressBar) -> KdumpError | None:
    """Add a worker's results in order: to their partition, or written (a segment named by a file)."""
    for (seg, _active), (findings, facts, seg_tally, error) in zip(item.segments, checked, strict=False):
        counts.tally.merge(seg_tally)
        bar.advance(log_bytes((seg,)))
        if error is not None:
            return error
        if item.owner is not None:
            item.owner.findings.extend(findings)
            item.owner.facts.append(facts)  # type: ignore[arg-type]
        else:
            _write(findings, counts, out, as_json, errors_only, bar)
    return None


def run_verify(command: str, paths: tuple[str, ...], options: Options, *, as_json: bool, errors_only: bool,
               traceback: bool, jobs: int, extra: Callable[[], list[Finding]] | None = None) -> NoReturn:
    """Check ``paths``; ``jobs`` segments at a time in worker processes, output as with one; exit."""
    out, err = sys.stdout, sys.stderr
    counts = VerifyCounts()
    tally = counts.tally
    failed: set[str] = set()
    show = wants_progress(as_json)
    with WorkerPool(jobs) as pool, ProgressBar(_log_bytes(paths) if show else None, command, show=show) as bar:
        for item, checked in pool.ordered_map(_check, _items(paths, options),
                                              is_work=lambda i: isinstance(i, _Segments)):
            if item.path in failed:
                continue
            error: KdumpError | None = None
            if isinstance(item, _Unreadable):
                error = item.error
            elif isinstance(item, _Edge) and not item.end:
                tally.merge(item.owner.tally)
            elif isinstance(item, _Edge):
                item.owner.findings.extend(finish_partition(item.owner.partition, item.owner.before,
                                                            item.owner.facts, options))
                _write(item.owner.findings, counts, out, as_json, errors_only, bar)
            else:
                assert checked is not None
                error = _take(item, checked, counts, out, as_json, errors_only, bar)
            if error is not None:
                if traceback:
                    raise error
                failed.add(item.path)
                bar.clear_for(out)
                tally.unreadable.append(item.path)
                if as_json:
                    out.write(verify_text.unreadable_json(item.path, str(error)) + "\n")
                else:
                    write_error(error, err=err, out=out)
    if extra is not None:   # checks beyond the paths' own files (verify --remote: kdump.verify.tiered_check)
        _write(extra(), counts, out, as_json, errors_only, bar)
    out.write((verify_text.summary_json(counts, command) if as_json
               else verify_text.summary_line(counts, command)) + "\n")
    out.flush()
    if tally.unreadable or counts.nothing_checked:
        click.get_current_context().exit(ExitCode.UNREADABLE)
    click.get_current_context().exit(ExitCode.PROBLEMS if counts.errors else ExitCode.OK)


# What verify and verify-index both take after their own --strict and --deep.
check_options = option_stack(
    click.option("--index-interval-bytes", type=click.IntRange(min=0), default=DEFAULT_INDEX_INTERVAL_BYTES,
                 show_default=True, help="The topic's index.interval.bytes, for --deep."),
    click.option("--errors-only", is_flag=True, help="Print errors only (notes are still counted)."),
    jobs_option,
    json_option,
    traceback_option,
)


@click.command("verify-index", cls=KdumpCommand, error_exit=ExitCode.UNREADABLE)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--strict", is_flag=True, help="Kafka's --verify-index-only rule: entries must name a batch's last "
              "offset (pre-4.1 follower and cleaner layouts become errors).")
@click.option("--deep", is_flag=True, help="Also note offset-index density far from --index-interval-bytes.")
@check_options
def verify_index(paths: tuple[str, ...], strict: bool, deep: bool, index_interval_bytes: int, errors_only: bool,
                 jobs: int, json_output: bool, traceback: bool) -> None:
    """Check that .index and .timeindex entries agree with their .log, as Kafka's lookups need.

    PATH is a segment file, a partition directory or a log.dirs directory (walked). Prints one line
    per problem and a summary. Exit status: 0 clean, 1 problems found, 2 usage error, unreadable
    input, or nothing to check. `kdump verify` runs these rules and every other one.

    \b
    kdump verify-index /var/lib/kafka/data
    kdump verify-index --json my-topic-0 > findings.jsonl
    """
    run_verify("verify-index", paths, Options(scope=INDEX, strict=strict, deep=deep, interval=index_interval_bytes),
               as_json=json_output, errors_only=errors_only, traceback=traceback, jobs=jobs)
