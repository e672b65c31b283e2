"""``kdump verify-index PATH...``: check that index entries match the log, for people and for CI.

``run_verify`` is shared with ``kdump verify``: it renders what ``kdump.verify.driver.verify_paths`` finds.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn, TextIO

import click

from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import json_option, option_stack, traceback_option
from kdump.cli.parallel import jobs_option, split_bytes
from kdump.cli.progress import ProgressBar
from kdump.cli.walk import Walk
from kdump.errors import write_error
from kdump.findings import Finding
from kdump.log.index_builder import DEFAULT_INDEX_INTERVAL_BYTES
from kdump.render import verify_text
from kdump.render.verify_text import VerifyCounts
from kdump.verify.driver import Report, SegmentChecked, verify_paths
from kdump.verify.engine import INDEX, Options


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


def run_verify(command: str, paths: tuple[str, ...], options: Options, *, as_json: bool, errors_only: bool,
               traceback: bool, jobs: int, extra: Callable[[], list[Finding]] | None = None) -> NoReturn:
    """Check ``paths`` (``verify_paths``, ``jobs`` runs of segments at a time in worker processes), print, exit."""
    out, err = sys.stdout, sys.stderr
    counts = VerifyCounts()
    with Walk(command, paths, jobs=jobs, json_output=as_json) as walk:
        for event in verify_paths(paths, options, counts.tally, ordered_map=walk.pool.ordered_map,
                                  split_bytes=split_bytes() if jobs > 1 else None):
            if isinstance(event, SegmentChecked):
                walk.bar.advance(event.log_bytes)
            elif isinstance(event, Report):
                _write(event.findings, counts, out, as_json, errors_only, walk.bar)
            else:
                if traceback:
                    raise event.error
                walk.bar.clear_for(out)
                if as_json:
                    out.write(verify_text.unreadable_json(event.path, str(event.error)) + "\n")
                else:
                    write_error(event.error, err=err, out=out)
        if extra is not None:   # checks beyond the paths' own files (verify --remote: kdump.verify.tiered_check)
            _write(extra(), counts, out, as_json, errors_only, walk.bar)
    out.write((verify_text.summary_json(counts, command) if as_json
               else verify_text.summary_line(counts, command)) + "\n")
    out.flush()
    if counts.tally.unreadable or counts.nothing_checked:
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
@click.option("--deep", is_flag=True,
              help="Also note an offset index denser than --index-interval-bytes allows, or far sparser.")
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
