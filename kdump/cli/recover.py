"""``kdump recover PATH``: what a broker will do to a log dir at its next start, before it starts."""

from __future__ import annotations

import json
import os

import click

from kdump.cli.options import json_option
from kdump.errors import KdumpError
from kdump.log.loader import LogDirState, plan_log_dir, plan_partition, read_log_dir_state
from kdump.log.logdir import is_partition_dir
from kdump.render.recover_text import log_dir_lines, plan_lines, plan_object

EXIT_NOTHING_LOST, EXIT_DATA_LOST, EXIT_UNREADABLE = 0, 1, 2


@click.command("recover")
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@json_option
def recover(path: str, json_output: bool) -> None:
    """The plan of Kafka's log loading for a partition dir or a whole log dir, read-only.

    \b
    After an unclean shutdown (no .kafka_cleanshutdown marker) the broker re-validates every
    segment from the recovery point on, truncates at the first invalid batch, deletes the later
    segments, rebuilds indexes and clamps its offsets. This prints what it will throw away.

    Exit status: 0 nothing would be lost, 1 data would be truncated or deleted, 2 unreadable
    input or a partition the broker would refuse to load.
    """
    try:
        if is_partition_dir(path):
            state = read_log_dir_state(os.path.dirname(os.path.abspath(path)))
            plans = [plan_partition(path, state)]
        else:
            state = read_log_dir_state(path)
            plans = list(plan_log_dir(path, state))
    except KdumpError as err:
        click.echo(f"Error: {err}", err=True)
        raise SystemExit(EXIT_UNREADABLE) from None
    _print(state, plans, json_output)
    if not plans:
        click.echo(f"Error: {path}: no partition directories found", err=True)
        raise SystemExit(EXIT_UNREADABLE)
    if any(p.refused for p in plans):
        raise SystemExit(EXIT_UNREADABLE)
    raise SystemExit(EXIT_DATA_LOST if any(p.loses_data for p in plans) else EXIT_NOTHING_LOST)


def _print(state: LogDirState, plans: list, json_output: bool) -> None:  # type: ignore[type-arg]
    if json_output:
        click.echo(json.dumps({"type": "logDir", "path": state.path, "cleanShutdown": state.clean_shutdown,
                               "notes": state.notes}, separators=(",", ":")))
        for plan in plans:
            click.echo(json.dumps(plan_object(plan), separators=(",", ":")))
        return
    for line in log_dir_lines(state):
        click.echo(line)
    for plan in plans:
        for line in plan_lines(plan):
            click.echo(line)
    lost = [p for p in plans if p.loses_data]
    click.echo(f"recover: {len(plans)} partitions, {len(lost)} would lose data, "
               f"{sum(len(p.deleted_segments) for p in plans)} segments deleted, "
               f"{sum(1 for p in plans if p.refused)} refused")
