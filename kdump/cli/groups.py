"""``kdump groups PATH...``: what every consumer group will do when its consumers next start, from the disks
alone (kdump.broker.group_report): the committed offsets as the coordinator loads them, each partition after
restart, and where the consumer starts by kafka-clients' rules.

``run_groups`` is the one driver.
"""

from __future__ import annotations

import sys

import click

from kdump.broker.consumer_position import ISOLATIONS, POLICIES
from kdump.broker.group_report import GroupsOptions, GroupsReport, analyze_groups
from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import DIR_OR_URI, json_option
from kdump.cli.replicas import replicas_options, replicas_options_stack
from kdump.errors import InputError, UsageError
from kdump.render import log_json
from kdump.render.groups_text import group_lines, group_renderables, offset_object


def print_groups(report: GroupsReport, json_output: bool, explain: bool) -> ExitCode:
    for error in report.read_errors:
        click.echo(f"Error: {error}", err=True)
    if json_output:
        for offset in report.offsets:
            click.echo(log_json.dumps(offset_object(offset)))
    elif sys.stdout.isatty():
        from rich.console import Console

        console = Console()
        for renderable in group_renderables(report, explain):
            console.print(renderable)
    else:
        for line in group_lines(report, explain):
            click.echo(line)
    if report.read_errors:
        return ExitCode.PROBLEMS
    return ExitCode.GROUPS_AT_RISK if any(o.at_risk for o in report.offsets) else ExitCode.OK


def run_groups(paths: tuple[str, ...], options: GroupsOptions, json_output: bool, explain: bool) -> ExitCode:
    report = analyze_groups(paths, options)
    if not report.coordinators:
        raise InputError("no __consumer_offsets or __share_group_state partition found (log dirs, partition dirs "
                         "or folders of log dirs)", path=", ".join(paths))
    return print_groups(report, json_output, explain)


@click.command("groups", cls=KdumpCommand, error_exit=ExitCode.UNREADABLE)
@click.argument("paths", nargs=-1, required=True, type=DIR_OR_URI)
@click.option("--group", default=None, help="Only this group.")
@replicas_options_stack
@click.option("--isolation", type=click.Choice(ISOLATIONS), default="read_uncommitted", show_default=True,
              help="The consumers' isolation.level: lag and 'latest' are measured to the HW, or to the LSO.")
@click.option("--reset", "policy", type=click.Choice(POLICIES), default="latest", show_default=True,
              help="The consumers' auto.offset.reset.")
@click.option("--now", type=int, default=None, metavar="MS",
              help="The time (ms since the epoch) to judge offset expiry at (kdump does not know the clock).")
@click.option("--offsets-retention-minutes", "retention", type=click.IntRange(min=1), default=None, metavar="N",
              help="The brokers' offsets.retention.minutes (Kafka's default 10080); with --now, expired commits.")
@json_option
def groups(paths: tuple[str, ...], group: str | None, topic: str | None, partition: int | None,
           if_leader: int | None, index_interval_bytes: int | None, explain: bool, kafka_version: str,
           isolation: str, policy: str, now: int | None, retention: int | None, json_output: bool) -> None:
    """What each consumer group will do when its consumers next start, offline.

    \b
    PATH is a broker's log dir, a partition dir, or a folder of log dirs (broker-1/ broker-2/ ...),
    local or an s3://, gs://, hdfs:// URI. The __consumer_offsets and __share_group_state partitions
    among them are replayed as their coordinators load them, from the copy their leader after restart
    serves (as `kdump replicas` predicts it), and joined with each committed partition's log start,
    high watermark, last stable offset and leader epochs after restart. --topic and --partition
    select the committed partitions, not the coordinator's.

    \b
    Each partition's fate (a prediction, by kafka-clients' rules; --explain names them):
    resume, reset-below-log-start, truncation-detected, out-of-range-reset, expired, share-start.

    Exit status: 0 every group resumes, 1 a segment could not be read to its end (an Error: line says
    where), 3 a group would skip, re-read, fail or has lost consumed records, 2 usage error or no
    coordinator partition found.
    """
    if (now is None) != (retention is None):
        raise UsageError("--now and --offsets-retention-minutes go together")
    replicas = replicas_options(None, None, if_leader, explain, kafka_version, index_interval_bytes)
    options = GroupsOptions(replicas, group, topic, partition, isolation, policy, now, retention)
    raise SystemExit(run_groups(paths, options, json_output, explain))
