"""``kdump txn PATH``: committed, aborted and still-open (hanging) transactions per partition."""

from __future__ import annotations

import json

import click

from kdump.cli.options import json_option
from kdump.errors import KdumpError
from kdump.log.logdir import walk_partitions
from kdump.render.txn_text import report_object, txn_lines
from kdump.verify.transactions import analyze_transactions

EXIT_HANGING = 3  # documented: some transaction is still open at the log end


@click.command("txn")
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.option("--hanging-only", is_flag=True, help="Only list partitions with transactions open at the log end.")
@json_option
def txn(path: str, hanging_only: bool, json_output: bool) -> None:
    """Transactions in a partition directory or a whole log.dirs.

    Exit status: 0, 1 for unreadable input, 3 when a transaction is still open at the log end
    (a hanging transaction holds the last stable offset and blocks read_committed consumers).
    """
    hanging = False
    try:
        for partition in walk_partitions(path):
            report = analyze_transactions(partition)
            hanging = hanging or bool(report.open)
            if hanging_only and not report.open:
                continue
            if json_output:
                click.echo(json.dumps(report_object(report), separators=(",", ":")))
            else:
                for line in txn_lines(report):
                    click.echo(line)
    except KdumpError as err:
        click.echo(f"Error: {err}", err=True)
        raise SystemExit(1) from None
    if hanging:
        raise SystemExit(EXIT_HANGING)
