"""DumpLogSegments' top-level loop as a library call: ``dump_files(paths, DumpOptions(...))``.

Each path is dumped by the handler of its file kind (``handlers.py``); a directory expands to its
files (``paths.py``); a file that cannot be dumped completely gets one ``Error:`` line on ``err`` and
the run goes on; Kafka's end-of-run summaries follow the last file (on ``err``, or on ``out`` as JSON).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, TextIO

from kdump.dump.handlers import handler_for
from kdump.dump.log import DumpedRange, RecordedRanges, dump_batches, dump_range, dump_window
from kdump.dump.paths import expand_paths
from kdump.dump.run import DumpOptions, DumpRun
from kdump.errors import InputError, KdumpError, UsageError
from kdump.format.crc import CRC32C_IMPLEMENTATION, CRC32C_IS_SLOW
from kdump.log.files import FileKind, file_kind, java_path, kafka_suffix, segment_base_offset
from kdump.log.segment import ReadOnlyFile
from kdump.render.summaries import DumpSummaries

if TYPE_CHECKING:
    from kdump.log.logdir import SegmentFiles

FileJob = tuple[str, bool]   # a file, and whether it came from a directory given


class LogRange(NamedTuple):
    """Work for a worker: the bytes ``[start, end)`` of a segment whose batches are dumped in ranges (the last
    ends at ``window``, the bytes the dump reads of the ``size`` the file had when they were planned)."""

    path: str
    from_directory: bool
    start: int
    end: int
    window: int
    size: int


Work = list[FileJob] | LogRange
FileMapper = Callable[[Callable[[Work], "RecordedDump"], Iterable[Work]], Iterator[tuple[Work, "RecordedDump | None"]]]
GROUP_BYTES = 8 << 20


@dataclass
class DumpResult:
    """What a run did: the files it was given (directories expanded), those it could not dump completely."""

    files: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    summaries: DumpSummaries = field(default_factory=DumpSummaries)

    @property
    def ok(self) -> bool:
        return not self.failed


def dump_files(paths: list[str], options: DumpOptions | None = None, *, out: TextIO | None = None,
               err: TextIO | None = None, map_files: FileMapper | None = None,
               on_file: Callable[[str], None] = lambda path: None, split_bytes: int | None = None) -> DumpResult:
    """Dump ``paths`` (files, partition directories or log dirs) as ``kafka-dump-log --files`` does.

    ``map_files`` (``WorkerPool.ordered_map`` for ``--jobs``) dumps groups of files in worker
    processes, and the batches of a segment of more than ``split_bytes`` (None: none) in byte ranges
    of about that size; their recorded output is written here in order, so it is the same bytes.
    ``on_file(path)`` is called once each file's output is written (a progress bar's tick).
    """
    run = DumpRun(options=options or DumpOptions(), out=out or sys.stdout, err=err or sys.stderr)
    options = run.options
    dialect = run.dialect
    result = DumpResult(summaries=run.summaries, failed=run.failed)
    load_error = options.records.decoder_load_error
    if load_error and not dialect.decoders_created_per_file:
        run.fail(load_error, "")  # 2.2 created the decoders once, before the first file
        return result
    if CRC32C_IS_SLOW:
        run.warn(f"Warning: CRC-32C is computed by {CRC32C_IMPLEMENTATION}; install the 'crc32c' package "
                 f"or a compiler for crcmod's C extension for normal speed.")
    jobs = list(_file_jobs(paths, options, result))
    # Workers only when there is more than one worker's share (GROUP_BYTES), or a segment to split: forking
    # costs more than dumping a few small files (a partition dir of kilobytes).
    splits = split_bytes is not None and any(file_size(path) > split_bytes for path, _ in jobs)
    if (map_files is None or options.filter.limit is not None
            or (not splits and (len(jobs) < 2 or sum(file_size(path) for path, _ in jobs) < GROUP_BYTES))):
        for path, from_directory in jobs:
            if run.limit_reached:   # --limit counts records across files: one process, in order
                break
            dump_one(run, path, from_directory)
            on_file(path)
    else:
        _dump_in_workers(run, _work(jobs, options, split_bytes), map_files, on_file)
    if options.json:  # JSON consumers read one stream: the summaries join the objects on stdout
        from kdump.render import log_json

        for obj in run.summaries.json_objects(dialect):
            run.out.write(log_json.dumps(obj) + "\n")
    run.out.flush()
    if not options.json:
        for line in run.summaries.lines(dialect):
            run.err.write(line + "\n")
        run.err.flush()
    return result


def _file_jobs(paths: list[str], options: DumpOptions, result: DumpResult) -> Iterator[FileJob]:
    for given in paths:
        # kdump extension: a partition directory or log.dirs expands to its files in Kafka's order.
        from_directory = bool(given) and os.path.isdir(given)
        files = expand_paths([given])
        if from_directory and options.filter.active:
            from kdump.dump.filters import segments_to_filter  # here: the index lookups it imports

            files = segments_to_filter(files, options.filter)
        result.files.extend(files)
        yield from ((path, from_directory) for path in files)


@dataclass
class RecordedDump:
    """A worker's dump of a group of files or of a ``LogRange``: its output (a ``tape``), failures and
    summaries, and for a range how it ended."""

    tape: str
    failed: list[str]
    summaries: DumpSummaries
    range: DumpedRange | None = None


# The options of the run the workers serve. They hold decoders (closures, which cannot be pickled),
# so workers get them by inheriting this module's state when they are forked.
_worker_run: tuple[DumpOptions, str] | None = None


def _dump_recorded(work: Work) -> RecordedDump:
    assert _worker_run is not None, "workers are forked after the run's options are set"
    options, directory = _worker_run
    from kdump.dump.tape import Tape

    tape = Tape(directory)
    run = DumpRun(options=options, out=tape.out, err=tape.err)
    dumped = None
    try:
        if isinstance(work, LogRange):
            dumped = _dump_range(run, work)
        else:
            for path, from_directory in work:
                dump_one(run, path, from_directory)
    finally:
        tape.close()
    return RecordedDump(tape.name, run.failed, run.summaries, dumped)


def _dump_range(run: DumpRun, work: LogRange) -> DumpedRange:
    """A worker's range; an error that is kdump's bug stops it as ``dump_one`` stops a file (``internal_error``)."""
    run.records = run.options.records_for(work.path, work.from_directory)
    try:
        return dump_range(run, work.path, work.start, work.end, work.size)
    except Exception as err:
        if run.options.traceback:
            raise
        return DumpedRange(work.start, work.end, work.start, None, internal_error(err), None, None)


def file_size(path: str) -> int:
    """0 for a file that cannot be read: its dump reports it."""
    try:
        return os.stat(path).st_size if path else 0
    except OSError:
        return 0


def _work(jobs: list[FileJob], options: DumpOptions, split_bytes: int | None) -> Iterator[Work]:
    """Consecutive files of about ``GROUP_BYTES`` together (a worker's share costs more than sending it), and
    a segment of more than ``split_bytes`` in ranges (``_log_ranges``)."""
    group: list[FileJob] = []
    size = 0
    for job in jobs:
        ranges = _log_ranges(job, options, split_bytes)
        first = next(ranges, None)
        if first is not None:
            if group:
                yield group
                group, size = [], 0
            yield first
            yield from ranges
            continue
        group.append(job)
        size += file_size(job[0])
        if size >= GROUP_BYTES:
            yield group
            group, size = [], 0
    if group:
        yield group


def _log_ranges(job: FileJob, options: DumpOptions, split_bytes: int | None) -> Iterator[LogRange]:
    """The byte ranges of about ``split_bytes`` a segment's batches are dumped in by workers, found as they are
    handed out (``batch_ranges``); none for a file that is dumped whole: not a segment, not more than
    ``split_bytes`` to read, or filtered (a filter's start position and end are one walk's). Every reader of
    the ranges reads the file as it was when this opened it (``size``), so a file that shrinks in the
    meantime is reported as one reader would report it (one range when the walk found no boundary)."""
    path, from_directory = job
    if (split_bytes is None or options.filter.active or file_kind(path) is not FileKind.LOG or _maybe_extra(path)
            or file_size(path) <= split_bytes):
        return
    try:
        segment = ReadOnlyFile(path)
    except KdumpError:
        return   # its dump says why
    # here: a run without a large segment needs neither index lookups nor ranges
    from kdump.log.lookup import segment_of
    from kdump.log.ranges import batch_ranges

    seg = segment_of(path, segment_base_offset(os.path.basename(path)) or 0)
    with segment:
        window = dump_window(segment.size, options.max_bytes)
        for start, end in batch_ranges(seg, segment, split_bytes, window):
            yield LogRange(path, from_directory, start, end, window, segment.size)


def _dump_in_workers(run: DumpRun, work: Iterator[Work], map_files: FileMapper,
                     on_file: Callable[[str], None]) -> None:
    global _worker_run
    import tempfile  # here, as the tapes: only a run with workers records its output

    from kdump.dump.tape import play

    with tempfile.TemporaryDirectory(prefix="kdump-jobs-") as directory:
        _worker_run = (run.options, directory)
        try:
            results = map_files(_dump_recorded, work)
            for done, recorded in results:
                assert recorded is not None
                if isinstance(done, LogRange):
                    _dump_in_ranges(run, done, recorded, results)
                    on_file(done.path)
                    continue
                play(recorded.tape, run.out, run.err)
                run.failed.extend(recorded.failed)
                run.summaries.absorb(recorded.summaries)
                for path, _ in done:
                    on_file(path)
        finally:
            _worker_run = None


def _dump_in_ranges(run: DumpRun, first: LogRange, recorded: RecordedDump,
                    results: Iterator[tuple[Work, RecordedDump | None]]) -> None:
    """``dump_one`` of a segment whose first range ``first`` is back from a worker: its lines before and after
    the batches are written here, the batches' from the ranges' recordings as they come back (``results``
    holds the rest of them next, in order; ``kdump.dump.log.join_ranges``)."""
    ranges = _Ranges(first, recorded, results)
    run.ranges = RecordedRanges(first.path, first.size, ranges.played(run))
    try:
        dump_one(run, first.path, first.from_directory)
    finally:
        run.ranges = None
    ranges.discard()
    if ranges.broken is not None:
        raise ranges.broken   # the workers' results ended (a worker died): as for a group of files


class _Ranges:
    """The recorded ranges of one segment, taken from the workers' results as its dump reaches them."""

    def __init__(self, first: LogRange, recorded: RecordedDump,
                 results: Iterator[tuple[Work, RecordedDump | None]]) -> None:
        self._pending: tuple[LogRange, RecordedDump] | None = (first, recorded)
        self._results = results
        self._more = True
        self.broken: Exception | None = None

    def _take(self) -> tuple[LogRange, RecordedDump] | None:
        """The next range and its recording, None after the last."""
        pair, self._pending = self._pending, None
        if pair is None and self._more:
            try:
                done, recorded = next(self._results)
            except Exception as err:
                self.broken = err
                self._more = False
                raise
            assert isinstance(done, LogRange) and recorded is not None, "a segment's ranges come in a row"
            pair = (done, recorded)
        if pair is not None:
            self._more = pair[0].end < pair[0].window
        return pair

    def played(self, run: DumpRun) -> Iterator[tuple[DumpedRange, DumpSummaries]]:
        """Each range's recorded output written to ``run``'s streams, then what the range ended with."""
        from kdump.dump.tape import play

        while (pair := self._take()) is not None:
            play(pair[1].tape, run.out, run.err)
            assert pair[1].range is not None
            yield pair[1].range, pair[1].summaries

    def discard(self) -> None:
        """The ranges the dump did not reach (it stopped at an error before them), thrown away."""
        while self.broken is None and (pair := self._take()) is not None:
            os.unlink(pair[1].tape)
            for gaps in pair[1].summaries.non_consecutive.values():
                gaps.close()


def dump_records_from(segments: Sequence[SegmentFiles], position: int, options: DumpOptions, *,
                      out: TextIO | None = None, err: TextIO | None = None) -> DumpResult:
    """The batch and record lines of ``segments`` (no file lines) from ``position`` in the first, as
    ``options.filter`` selects, until its limit: ``find --count``."""
    run = DumpRun(options=options, out=out or sys.stdout, err=err or sys.stderr)
    result = DumpResult(summaries=run.summaries, failed=run.failed)
    for seg in segments:
        if seg.log is None:
            continue
        result.files.append(seg.log)
        with ReadOnlyFile(seg.log) as log:
            try:
                dump_batches(run, seg.log, log, position if seg is segments[0] else 0, log.size)
            except KdumpError as problem:
                raise problem.with_file(seg.log) from None
        if run.limit_reached:
            break
    run.out.flush()
    return result


def _ignore_unknown(run: DumpRun, path: str) -> None:
    """Kafka's tool ignores a file it has no handler for, and exits 0 even when the path does not
    exist (4.3: ``Ignoring unknown file typo-dir``); a mistyped path must not pass a CI step, so
    kdump fails that file instead (exit 1, after the same ``Dumping`` line)."""
    if not os.path.lexists(path):
        raise InputError("No such file or directory", path=path)
    run.warn(f"Ignoring unknown file {java_path(path)}")


def _maybe_extra(path: str) -> bool:
    """False for a segment, index or snapshot named by its base offset, which Kafka's tool dumps itself
    (``dump_extra`` would return False for it: no such name is a checkpoint, a remote segment's
    ``<offset>-<id>`` name, or carries a temporary suffix), so a plain dump need not import it."""
    name = os.path.basename(path)
    return file_kind(name) is None or segment_base_offset(name) is None


def dump_one(run: DumpRun, path: str, from_directory: bool) -> None:
    run.records = run.options.records_for(path, from_directory)
    if not run.options.json:
        run.out.write(f"Dumping {java_path(path)}\n")
    try:
        if path == "":
            raise UsageError("empty file name in --files (two commas in a row?)")
        # kdump extension: checkpoints, partition.metadata, meta.properties, quorum-state and
        # .deleted/.cleaned/.swap segment files, which Kafka's tool crashes on or ignores.
        if _maybe_extra(path):
            from kdump.dump.extra import dump_extra  # here: checkpoint and remote-layout parsers

            if dump_extra(run, path):
                return
        if kafka_suffix(path) is None and run.dialect.ignores_names_without_dot:
            _ignore_unknown(run, path)
            return
        if kafka_suffix(path) is None:
            # Kafka <= 4.2 dies here with StringIndexOutOfBoundsException; kdump names the file and goes on.
            raise UsageError("the file name has no '.', so its type is unknown (Kafka's tool crashes on "
                             "such names; checkpoint files are read by `kdump summary`)")
        kind = file_kind(path)
        if kind is None:
            _ignore_unknown(run, path)
            return
        if kind in (FileKind.LOG, FileKind.CHECKPOINT) and not run.options.json:
            _create_decoders(run)
        handler_for(kind)(run, path)
    except KdumpError as err:
        run.error(err, path)
    except Exception as err:  # a bug in kdump: still one line, unless --traceback
        if run.options.traceback:
            raise
        run.error(internal_error(err), path)


def internal_error(err: Exception) -> KdumpError:
    """A bug in kdump, as the one ``Error:`` line of the file it stopped."""
    return KdumpError(f"internal error {type(err).__name__}: {err} (rerun with --traceback and report it)")


def _create_decoders(run: DumpRun) -> None:
    """What Kafka does when it creates the decoders for one .log file: print its notices, or fail."""
    records = run.options.records
    for notice in records.decoder_notices:
        run.out.write(notice + "\n")
    if records.decoder_load_error:
        raise KdumpError(records.decoder_load_error)
