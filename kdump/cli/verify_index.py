"""``kdump verify-index PATH...``: check that index entries match the log, for people and for CI.

PATH is a segment file (``.log``, ``.index``, ``.timeindex``), a partition directory, or a whole
``log.dirs`` tree. Exit status: 0 clean (notes allowed), 1 errors found, 2 usage or unreadable input,
or nothing found to check. ``run_verify`` is shared with ``kdump verify``; the rules are in
``kdump.verify.engine``.
"""

from __future__ import annotations

import sys
from typing import TextIO

import click

from kdump.cli.boundary import KdumpCommand, print_error
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import json_option, traceback_option
from kdump.errors import KdumpError
from kdump.render import verify_text
from kdump.render.verify_text import VerifyCounts
from kdump.verify.engine import (
    INDEX,
    Options,
    plan,
    verify_target,
)
from kdump.verify.findings import Finding
from kdump.verify.index_checks import DEFAULT_INDEX_INTERVAL_BYTES


def _write(findings: list[Finding], counts: VerifyCounts, out: TextIO, as_json: bool, errors_only: bool) -> None:
    counts.errors += sum(1 for f in findings if f.is_error and f.check != "unreadable")
    counts.notes += sum(1 for f in findings if not f.is_error)
    if as_json:
        for f in findings:
            if f.is_error or not errors_only:
                out.write(verify_text.finding_json(f) + "\n")
    else:
        for line in verify_text.text_lines(findings, errors_only=errors_only):
            out.write(line + "\n")


def run_verify(paths: tuple[str, ...], options: Options, *, command: str, out: TextIO, err: TextIO,
               as_json: bool, errors_only: bool, traceback: bool = False) -> int:
    counts = VerifyCounts()
    tally = counts.tally
    cache: dict[str, object] = {}
    for path in paths:
        findings: list[Finding] = []
        try:
            for target in plan(path):
                findings = list(verify_target(target, options, tally, cache))
                _write(findings, counts, out, as_json, errors_only)
                findings = []
        except KdumpError as error:
            if traceback:
                raise
            _write(findings, counts, out, as_json, errors_only)
            tally.unreadable.append(path)
            if as_json:
                out.write(verify_text.unreadable_json(path, str(error)) + "\n")
            else:
                print_error(error, err=err, out=out)
    out.write((verify_text.summary_json(counts, command) if as_json
               else verify_text.summary_line(counts, command)) + "\n")
    out.flush()
    if tally.unreadable or counts.nothing_checked:
        return ExitCode.UNREADABLE
    return ExitCode.PROBLEMS if counts.errors else ExitCode.OK


@click.command("verify-index", cls=KdumpCommand, error_exit=ExitCode.UNREADABLE)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--strict", is_flag=True, help="Kafka's --verify-index-only rule: entries must name a batch's last "
              "offset (pre-4.1 follower and cleaner layouts become errors).")
@click.option("--deep", is_flag=True, help="Also note offset-index density far from --index-interval-bytes.")
@click.option("--index-interval-bytes", type=click.IntRange(min=0), default=DEFAULT_INDEX_INTERVAL_BYTES,
              show_default=True, help="The topic's index.interval.bytes, for --deep.")
@click.option("--errors-only", is_flag=True, help="Print errors only (notes are still counted).")
@json_option
@traceback_option
def verify_index(paths: tuple[str, ...], strict: bool, deep: bool, index_interval_bytes: int, errors_only: bool,
                 json_output: bool, traceback: bool) -> None:
    """Check that .index and .timeindex entries agree with their .log, as Kafka's lookups need.

    PATH is a segment file, a partition directory or a log.dirs directory (walked). Prints one line
    per problem and a summary. Exit status: 0 clean, 1 problems found, 2 usage error, unreadable
    input, or nothing to check. `kdump verify` runs these rules and every other one.

    \b
    kdump verify-index /var/lib/kafka/data
    kdump verify-index --json my-topic-0 > findings.jsonl
    """
    options = Options(scope=INDEX, strict=strict, deep=deep, interval=index_interval_bytes)
    code = run_verify(paths, options, command="verify-index", out=sys.stdout, err=sys.stderr, as_json=json_output,
                      errors_only=errors_only, traceback=traceback)
    click.get_current_context().exit(code)
