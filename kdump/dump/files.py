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
from typing import TYPE_CHECKING, TextIO

from kdump.dump.handlers import handler_for
from kdump.dump.log import dump_batches
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
FileMapper = Callable[[Callable[[list[FileJob]], "RecordedDump"], Iterable[list[FileJob]]],
                      Iterator[tuple[list[FileJob], "RecordedDump | None"]]]
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
               on_file: Callable[[str], None] = lambda path: None) -> DumpResult:
    """Dump ``paths`` (files, partition directories or log dirs) as ``kafka-dump-log --files`` does.

    ``map_files`` (``WorkerPool.ordered_map`` for ``--jobs``) dumps groups of files in worker
    processes; their recorded output is written here in the files' order, so it is the same bytes.
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
    # Workers only when there is more than one worker's share (GROUP_BYTES): forking costs more than
    # dumping a few small files (a partition dir of kilobytes).
    if (map_files is None or options.filter.limit is not None or len(jobs) < 2
            or sum(file_size(path) for path, _ in jobs) < GROUP_BYTES):
        for path, from_directory in jobs:
            if run.limit_reached:   # --limit counts records across files: one process, in order
                break
            dump_one(run, path, from_directory)
            on_file(path)
    else:
        _dump_in_workers(run, jobs, map_files, on_file)
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
    """A worker's dump of a group of files: its output (a ``tape``), failures and summaries."""

    tape: str
    failed: list[str]
    summaries: DumpSummaries


# The options of the run the workers serve. They hold decoders (closures, which cannot be pickled),
# so workers get them by inheriting this module's state when they are forked.
_worker_run: tuple[DumpOptions, str] | None = None


def _dump_recorded(group: list[FileJob]) -> RecordedDump:
    assert _worker_run is not None, "workers are forked after the run's options are set"
    options, directory = _worker_run
    from kdump.dump.tape import Tape

    tape = Tape(directory)
    run = DumpRun(options=options, out=tape.out, err=tape.err)
    try:
        for path, from_directory in group:
            dump_one(run, path, from_directory)
    finally:
        tape.close()
    return RecordedDump(tape.name, run.failed, run.summaries)


def file_size(path: str) -> int:
    """0 for a file that cannot be read: its dump reports it."""
    try:
        return os.stat(path).st_size if path else 0
    except OSError:
        return 0


def _groups(jobs: list[FileJob]) -> Iterator[list[FileJob]]:
    """Consecutive files of about ``GROUP_BYTES`` together: a worker's share costs more than sending it."""
    group: list[FileJob] = []
    size = 0
    for job in jobs:
        group.append(job)
        size += file_size(job[0])
        if size >= GROUP_BYTES:
            yield group
            group, size = [], 0
    if group:
        yield group


def _dump_in_workers(run: DumpRun, jobs: list[FileJob], map_files: FileMapper,
                     on_file: Callable[[str], None]) -> None:
    global _worker_run
    import tempfile  # here, as the tapes: only a run with workers records its output

    from kdump.dump.tape import play

    with tempfile.TemporaryDirectory(prefix="kdump-jobs-") as directory:
        _worker_run = (run.options, directory)
        try:
            for group, recorded in map_files(_dump_recorded, _groups(jobs)):
                assert recorded is not None
                play(recorded.tape, run.out, run.err)
                run.failed.extend(recorded.failed)
                run.summaries.absorb(recorded.summaries)
                for path, _ in group:
                    on_file(path)
        finally:
            _worker_run = None


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
        run.error(KdumpError(f"internal error {type(err).__name__}: {err} (rerun with --traceback and "
                             f"report it)"), path)


def _create_decoders(run: DumpRun) -> None:
    """What Kafka does when it creates the decoders for one .log file: print its notices, or fail."""
    records = run.options.records
    for notice in records.decoder_notices:
        run.out.write(notice + "\n")
    if records.decoder_load_error:
        raise KdumpError(records.decoder_load_error)
