"""``kdump summary PATH``: per partition segments, offsets, sizes, counts, codecs, producers, checkpoints.

Partitions are summarised ``--jobs`` at a time in worker processes (``cli.walk``); the log dir's
checkpoints are read here, before each partition's segments.
"""

from __future__ import annotations

import sys

import click

from kdump.broker.log_dir_checkpoints import CheckpointCache
from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import json_option
from kdump.cli.parallel import jobs_option
from kdump.cli.time_options import time_style_options
from kdump.cli.walk import Walk
from kdump.log.logdir import PartitionDir
from kdump.render import log_json
from kdump.render.summary_table import PartitionRow, partition_row, partitions_table
from kdump.render.summary_text import summary_lines, summary_object, summary_renderable
from kdump.render.times import TimeStyle
from kdump.verify.partition_summary import (
    CheckpointsRead,
    PartitionSummary,
    read_partition_checkpoints,
    summarize_segments,
)

_Work = tuple[PartitionDir, CheckpointsRead]


def _summarize(work: _Work) -> PartitionSummary:
    return summarize_segments(*work)


def _with_checkpoints(cache: CheckpointCache, partition: PartitionDir) -> _Work:
    return partition, read_partition_checkpoints(partition, cache)


@click.command("summary", cls=KdumpCommand, error_exit=ExitCode.UNREADABLE)
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.option("--plain", is_flag=True, help="Plain text even on a terminal.")
@click.option("--detail", is_flag=True, help="On a terminal: every partition's segments, not one row per partition.")
@jobs_option
@time_style_options(default=None, default_text="iso in the terminal's table, epoch in plain text")
@json_option
def summary(path: str, plain: bool, detail: bool, jobs: int, times: TimeStyle | None, json_output: bool) -> None:
    """Summarise every partition in a partition directory or a log.dirs.

    On a terminal: one table row per partition (topic, partition, segments, records, offsets, size,
    time range, flags) with totals per topic and overall; --detail shows each partition's segments.
    Piped (or --plain): plain text, a block per partition. --json: one JSON object per partition.

    Exit status: 0, 1 when an error line was printed (a file that could not be read completely),
    2 usage error or unreadable PATH.
    """
    console = None
    if not json_output and not plain and sys.stdout.isatty():
        from rich.console import Console

        console = Console()
    rows: list[PartitionRow] = []
    errors = False
    cache = CheckpointCache()
    with Walk("summary", (path,), jobs=jobs, json_output=json_output) as walk:
        bar = walk.bar
        for _, result in walk.partitions(_summarize, lambda partition: _with_checkpoints(cache, partition)):
            errors = errors or any(f.severity == "error" for f in result.findings)
            if json_output:
                click.echo(log_json.dumps(summary_object(result)))
            elif console is None:
                bar.clear_for(sys.stdout)
                for line in summary_lines(result, times or TimeStyle("epoch")):
                    click.echo(line)
            elif detail:
                bar.clear()
                console.print(summary_renderable(result, times or TimeStyle("iso")))
            else:
                rows.append(partition_row(result))
    if console is not None and not detail and rows:
        console.print(partitions_table(rows, times or TimeStyle("iso")))
    click.get_current_context().exit(ExitCode.PROBLEMS if errors else ExitCode.OK)
