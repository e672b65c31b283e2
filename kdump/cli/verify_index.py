"""``kdump verify-index PATH...``: check that index entries match the log, for people and for CI.

PATH is a segment file (``.log``, ``.index``, ``.timeindex``), a partition directory, or a whole
``log.dirs`` tree. Exit status: 0 clean (notes allowed), 1 errors found, 2 usage or unreadable input.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import TextIO

import click

from kdump.cli.boundary import KdumpCommand, print_error
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import json_option, traceback_option
from kdump.errors import KdumpError
from kdump.log.files import FileKind, base_offset_of, file_kind, sibling
from kdump.log.logdir import SegmentFiles, walk_partitions
from kdump.render import verify_text
from kdump.render.verify_text import VerifyCounts
from kdump.verify.index_checks import DEFAULT_INDEX_INTERVAL_BYTES, verify_segment


def _segment_of_file(path: str) -> SegmentFiles:
    """The segment a single file names: the file itself, plus the .log it is checked against."""
    kind = file_kind(path)
    if kind not in (FileKind.LOG, FileKind.INDEX, FileKind.TIME_INDEX):
        raise KdumpError("not a .log, .index or .timeindex file, nor a directory", path=path)
    base = base_offset_of(path)
    full = os.path.abspath(path)
    log = full if kind is FileKind.LOG else sibling(path, ".log")
    log_path = log if os.path.exists(log) else None
    if kind is FileKind.LOG:
        index, tindex = sibling(path, ".index"), sibling(path, ".timeindex")
        return SegmentFiles(base, full, index if os.path.exists(index) else None,
                            tindex if os.path.exists(tindex) else None)
    if kind is FileKind.INDEX:
        return SegmentFiles(base, log_path, index=full)
    return SegmentFiles(base, log_path, time_index=full)


def _segments(path: str, counts: VerifyCounts) -> Iterator[tuple[SegmentFiles, bool]]:
    """(segment, is the partition's last segment) for every segment at or below ``path``."""
    if not os.path.isdir(path):
        if not os.path.exists(path):
            raise KdumpError("No such file or directory", path=path)
        counts.segments += 1
        yield _segment_of_file(path), False
        return
    found = False
    for partition in walk_partitions(os.path.abspath(path)):  # '.' must show its real name
        found = True
        counts.partitions += 1
        for i, seg in enumerate(partition.segments):
            counts.segments += 1
            yield seg, i == len(partition.segments) - 1
    if not found:
        raise KdumpError("no partition directories (<topic>-<partition>) at or below this directory", path=path)


def run_verify(paths: tuple[str, ...], *, out: TextIO, err: TextIO, as_json: bool, deep: bool, interval: int,
               errors_only: bool, traceback: bool = False) -> int:
    counts = VerifyCounts()
    for path in paths:
        try:
            for seg, last in _segments(path, counts):
                counts.files += len(seg.paths())
                findings = list(verify_segment(seg, deep=deep, interval=interval, active=last))
                counts.errors += sum(1 for f in findings if f.is_error)
                counts.notes += sum(1 for f in findings if not f.is_error)
                if as_json:
                    for f in findings:
                        if f.is_error or not errors_only:
                            out.write(verify_text.finding_json(f) + "\n")
                else:
                    for line in verify_text.text_lines(findings, errors_only=errors_only):
                        out.write(line + "\n")
        except KdumpError as error:
            counts.unreadable.append(path)
            if as_json:
                out.write(verify_text.unreadable_json(path, str(error)) + "\n")
            else:
                print_error(error, err=err, out=out, traceback_of=error if traceback else None)
    out.write((verify_text.summary_json(counts) if as_json else verify_text.summary_line(counts)) + "\n")
    out.flush()
    if counts.unreadable:
        return ExitCode.UNREADABLE
    return ExitCode.PROBLEMS if counts.errors else ExitCode.OK


@click.command("verify-index", cls=KdumpCommand, error_exit=ExitCode.UNREADABLE)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--deep", is_flag=True, help="Also note offset-index density far from --index-interval-bytes.")
@click.option("--index-interval-bytes", type=click.IntRange(min=0), default=DEFAULT_INDEX_INTERVAL_BYTES,
              show_default=True, help="The topic's index.interval.bytes, for --deep.")
@click.option("--errors-only", is_flag=True, help="Print errors only (notes are still counted).")
@json_option
@traceback_option
def verify_index(paths: tuple[str, ...], deep: bool, index_interval_bytes: int, errors_only: bool,
                 json_output: bool, traceback: bool) -> None:
    """Check that .index and .timeindex entries agree with their .log, as Kafka's lookups need.

    PATH is a segment file, a partition directory or a log.dirs directory (walked). Prints one line
    per problem and a summary. Exit status: 0 clean, 1 problems found, 2 usage error or unreadable input.

    \b
    kdump verify-index /var/lib/kafka/data
    kdump verify-index --json my-topic-0 > findings.jsonl
    """
    code = run_verify(paths, out=sys.stdout, err=sys.stderr, as_json=json_output, deep=deep,
                      interval=index_interval_bytes, errors_only=errors_only, traceback=traceback)
    click.get_current_context().exit(code)
