"""``kdump txn PATH``: committed, aborted and still-open (hanging) transactions per partition."""

from __future__ import annotations

import sys

import click

from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import json_option
from kdump.cli.parallel import jobs_option
from kdump.cli.time_options import time_style_options
from kdump.cli.walk import Walk
from kdump.render import log_json
from kdump.render.times import TimeStyle
from kdump.render.txn_text import report_object, txn_lines
from kdump.verify.transactions import analyze_transactions


@click.command("txn", cls=KdumpCommand, error_exit=ExitCode.UNREADABLE)
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.option("--hanging-only", is_flag=True, help="Only list partitions with transactions open at the log end.")
@jobs_option
@time_style_options(default=None, default_text="no times in the text")
@json_option
def txn(path: str, hanging_only: bool, jobs: int, times: TimeStyle | None, json_output: bool) -> None:
    """Transactions in a partition directory or a whole log.dirs.

    Exit status: 0; 1 when an error line was printed (a segment or .txnindex that could not be read
    completely, an aborted transaction with no .txnindex entry, an index entry no aborted transaction
    matches: the errors verify reports); 2 usage error or unreadable PATH; otherwise
    3 when a transaction is still open at the log end (a hanging transaction holds the last stable
    offset and blocks read_committed consumers).

    --time-format/--tz add each transaction's time span to the text (JSON keeps milliseconds).
    """
    hanging = errors = False
    with Walk("txn", (path,), jobs=jobs, json_output=json_output) as walk:
        for _, report in walk.partitions(analyze_transactions):
            hanging = hanging or bool(report.open)
            errors = errors or any(f.severity == "error" for f in report.findings)
            if hanging_only and not report.open:
                continue
            walk.bar.clear_for(sys.stdout)
            if json_output:
                click.echo(log_json.dumps(report_object(report)))
            else:
                for line in txn_lines(report, times):
                    click.echo(line)
    code = ExitCode.PROBLEMS if errors else ExitCode.HANGING if hanging else ExitCode.OK
    click.get_current_context().exit(code)
