"""``kdump recover PATH``: what a broker will do to a log dir at its next start, before it starts."""

from __future__ import annotations

import json
import os

import click

from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import index_settings_options, json_option
from kdump.errors import InputError, UsageError
from kdump.log.loader import (
    LogDirState,
    plan_log_dir,
    plan_partition,
    read_log_dir_state,
)
from kdump.log.logdir import is_partition_dir
from kdump.log.salvage import write_recovered_copy
from kdump.render.recover_text import log_dir_lines, plan_lines, plan_object


@click.command("recover", cls=KdumpCommand, error_exit=ExitCode.UNREADABLE)
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.option("--out", "out_dir", type=click.Path(), default=None,
              help="Also write the recovered copy a broker would leave into this new directory (never in place).")
@click.option("--force", is_flag=True, help="Replace --out if it holds an earlier kdump recover copy (or is empty).")
@index_settings_options
@json_option
def recover(path: str, out_dir: str | None, force: bool, index_interval_bytes: int, segment_index_bytes: int,
            json_output: bool) -> None:
    """The plan of Kafka's log loading for a partition dir or a whole log dir, read-only.

    \b
    After an unclean shutdown (no .kafka_cleanshutdown marker) the broker re-validates every
    segment from the recovery point on, truncates at the first invalid batch, deletes the later
    segments, rebuilds indexes and clamps its offsets. This prints what it will throw away.

    Exit status: 0 nothing would be lost, 1 data would be truncated or deleted, 2 unreadable
    input or a partition the broker would refuse to load.
    """
    if is_partition_dir(path):
        state = read_log_dir_state(os.path.dirname(os.path.abspath(path)))
        plans = [plan_partition(path, state)]
    else:
        state = read_log_dir_state(path)
        plans = list(plan_log_dir(path, state))
    _print(state, plans, json_output)
    if not plans:
        raise InputError("no partition directories found: nothing was checked", path=path)
    if any(p.refused for p in plans):
        if out_dir is not None:
            raise InputError("not written: the broker would refuse to load a partition", path=out_dir)
        raise SystemExit(ExitCode.UNREADABLE)
    if out_dir is not None:
        _write_copy(state, plans, out_dir, force, index_interval_bytes, segment_index_bytes, json_output)
    raise SystemExit(ExitCode.DATA_LOST if any(p.loses_data for p in plans) else ExitCode.OK)


def _write_copy(state: LogDirState, plans: list, out_dir: str, force: bool,
                interval: int, max_index_bytes: int, json_output: bool) -> None:
    source = os.path.realpath(state.path)
    target = os.path.realpath(out_dir)
    if target == source or target.startswith(source + os.sep) or source.startswith(target + os.sep):
        raise UsageError("--out must be outside the log dir it recovers (never in place)", path=out_dir)
    write_recovered_copy(state, plans, out_dir, force=force, index_interval_bytes=interval,
                         max_index_bytes=max_index_bytes)
    if json_output:
        click.echo(json.dumps({"type": "recoveredCopy", "path": os.path.abspath(out_dir)}, separators=(",", ":")))
    else:
        click.echo(f"wrote the recovered copy to {out_dir}")


def _print(state: LogDirState, plans: list, json_output: bool) -> None:
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
