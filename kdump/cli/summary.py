"""``kdump summary PATH``: per partition segments, offsets, sizes, counts, codecs, producers, checkpoints."""

from __future__ import annotations

import json
import sys

import click

from kdump.cli.options import json_option
from kdump.errors import KdumpError
from kdump.log.logdir import walk_partitions
from kdump.render.summary_text import summary_lines, summary_object, summary_renderable
from kdump.verify.partition_summary import summarize_partition


@click.command("summary")
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.option("--plain", is_flag=True, help="Plain text even on a terminal.")
@json_option
def summary(path: str, plain: bool, json_output: bool) -> None:
    """Summarise every partition in a partition directory or a log.dirs (Rich table on a terminal)."""
    console = None
    if not json_output and not plain and sys.stdout.isatty():
        from rich.console import Console

        console = Console()
    cache: dict[str, dict[str, dict[tuple[str, int], int]]] = {}
    try:
        for partition in walk_partitions(path):
            result = summarize_partition(partition, cache)
            if json_output:
                click.echo(json.dumps(summary_object(result), separators=(",", ":")))
            elif console is not None:
                console.print(summary_renderable(result))
            else:
                for line in summary_lines(result):
                    click.echo(line)
    except KdumpError as err:
        click.echo(f"Error: {err}", err=True)
        raise SystemExit(1) from None
