"""``kdump summary PATH``: per partition segments, offsets, sizes, counts, codecs, producers, checkpoints."""

from __future__ import annotations

import json
import sys

import click

from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import json_option
from kdump.log.logdir import walk_partitions
from kdump.render.summary_text import summary_lines, summary_object, summary_renderable
from kdump.verify.partition_summary import summarize_partition


@click.command("summary", cls=KdumpCommand, error_exit=ExitCode.UNREADABLE)
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.option("--plain", is_flag=True, help="Plain text even on a terminal.")
@json_option
def summary(path: str, plain: bool, json_output: bool) -> None:
    """Summarise every partition in a partition directory or a log.dirs (Rich table on a terminal).

    Exit status: 0, 1 when an error line was printed (a file that could not be read completely),
    2 usage error or unreadable PATH.
    """
    console = None
    if not json_output and not plain and sys.stdout.isatty():
        from rich.console import Console

        console = Console()
    cache: dict[str, dict[str, dict[tuple[str, int], int]]] = {}
    errors = False
    for partition in walk_partitions(path):
        result = summarize_partition(partition, cache)
        errors = errors or any(f.severity == "error" for f in result.findings)
        if json_output:
            click.echo(json.dumps(summary_object(result), separators=(",", ":")))
        elif console is not None:
            console.print(summary_renderable(result))
        else:
            for line in summary_lines(result):
                click.echo(line)
    click.get_current_context().exit(ExitCode.PROBLEMS if errors else ExitCode.OK)
