"""``kdump recover PATH...``: what a broker will do to its log dirs at its next start, before it starts.

``report`` prints the plans and ends the run with the exit status; ``kdump spark recover`` plans the
partitions in Spark tasks and ends through the same function, so both print the same lines.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import click

from kdump.broker.loader import plan_partition
from kdump.broker.log_manager import LogDirState, recover_targets
from kdump.broker.partition_plan import PartitionPlan
from kdump.broker.salvage import write_recovered_copy
from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import index_settings_options, json_option
from kdump.cli.progress import ProgressBar, wants_progress
from kdump.errors import InputError, UsageError
from kdump.render import log_json
from kdump.render.dialect import DEFAULT_KAFKA_VERSION, parse_kafka_version
from kdump.render.recover_text import log_dir_lines, log_dir_object, plan_lines, plan_object, totals_line

LogDirPlans = tuple[LogDirState, list[PartitionPlan]]
@click.command("recover", cls=KdumpCommand, error_exit=ExitCode.UNREADABLE)
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--out", "out_dir", type=click.Path(), default=None,
              help="Also write the recovered copy a broker would leave into this new directory (never in place; "
                   "one PATH only).")
@click.option("--force", is_flag=True, help="Replace --out if it holds an earlier kdump recover copy (or is empty).")
@index_settings_options
@click.option("--kafka-version", default=DEFAULT_KAFKA_VERSION, show_default=True, metavar="V",
              help="The broker's Kafka release (3.0 ... 4.4): what its log loading does where releases differ.")
@json_option
def recover(paths: tuple[str, ...], out_dir: str | None, force: bool, index_interval_bytes: int,
            segment_index_bytes: int, kafka_version: str, json_output: bool) -> None:
    """The plan of Kafka's log loading for partition dirs or whole log dirs, read-only.

    \b
    After an unclean shutdown (no .kafka_cleanshutdown marker) the broker re-validates every
    segment from the recovery point on, truncates at the first invalid batch, deletes the later
    segments, rebuilds indexes and clamps its offsets. This prints what it will throw away.

    Exit status: 0 nothing would be lost, 1 data would be truncated or deleted, 2 unreadable
    input or a partition the broker would refuse to load.
    """
    release = parse_kafka_version(kafka_version)
    if not release.has_log_loader:
        raise UsageError(f"--kafka-version {kafka_version}: kdump recover follows the LogLoader of Kafka 3.0 and later")
    if out_dir is not None and len(paths) != 1:
        raise UsageError("--out writes the recovered copy of one PATH")
    targets = [recover_targets(path) for path in paths]
    results = []
    # A bar while the plans are made; they are printed after it is gone.
    with ProgressBar(sum(len(dirs) for _, dirs in targets), "recover", show=wants_progress(json_output),
                      unit="partitions") as bar:
        for state, dirs in targets:
            plans = []
            for partition_dir in dirs:
                plans.append(plan_partition(partition_dir, state, index_interval_bytes))
                bar.advance(1)
            results.append((state, plans))
    report(results, json_output, paths)
    if out_dir is not None:
        _write_copy(*results[0], out_dir, force, index_interval_bytes, segment_index_bytes,
                    release.indexes_each_appended_batch, json_output)
    raise SystemExit(exit_status(results))


def report(results: Sequence[LogDirPlans], json_output: bool, paths: Sequence[str]) -> None:
    """Print every log dir's plans (text or JSON Lines); raise the run's error when the broker would
    refuse a partition or nothing was found."""
    for state, plans in results:
        if json_output:
            lines = [log_json.dumps(obj) for obj in (log_dir_object(state), *map(plan_object, plans))]
        else:
            lines = [*log_dir_lines(state), *(line for plan in plans for line in plan_lines(plan))]
        for line in lines:
            click.echo(line)
    every = [plan for _, plans in results for plan in plans]
    if not json_output:
        click.echo(totals_line(every))
    if not every:
        raise InputError("no partition directories found: nothing was checked", path=", ".join(paths))
    refused = next((p for p in every if p.refused_file), None)
    if refused is not None:
        raise InputError(f"the broker refuses to load {refused.topic}-{refused.partition}: "
                         f"{refused.refused_reason}", path=refused.refused_file)


def exit_status(results: Sequence[LogDirPlans]) -> ExitCode:
    lost = any(plan.loses_data for _, plans in results for plan in plans)
    return ExitCode.DATA_LOST if lost else ExitCode.OK


def _write_copy(state: LogDirState, plans: list[PartitionPlan], out_dir: str, force: bool,
                interval: int, max_index_bytes: int, per_batch: bool, json_output: bool) -> None:
    source = os.path.realpath(state.path)
    target = os.path.realpath(out_dir)
    if target == source or target.startswith(source + os.sep) or source.startswith(target + os.sep):
        raise UsageError("--out must be outside the log dir it recovers (never in place)", path=out_dir)
    write_recovered_copy(state, plans, out_dir, force=force, index_interval_bytes=interval,
                         max_index_bytes=max_index_bytes, split_indexed_per_batch=per_batch)
    if json_output:
        click.echo(log_json.dumps({"type": "recoveredCopy", "path": os.path.abspath(out_dir)}))
    else:
        click.echo(f"wrote the recovered copy to {out_dir}")
