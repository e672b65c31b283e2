"""``kdump replicas PATH...``: several brokers' replicas of each partition side by side, where they
diverge, and what each follower truncates when a leader leads (kdump.broker.replica_report).

``run_replicas`` is the one driver: ``kdump spark replicas`` prints through it too, so both give the
same JSON.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

import click

from kdump.broker.replica_report import PartitionReport, ReplicasOptions, analyze
from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import DIR_OR_URI, json_option, option_stack
from kdump.errors import InputError
from kdump.render import log_json
from kdump.render.dialect import DEFAULT_KAFKA_VERSION, parse_kafka_version
from kdump.render.replicas_text import partition_lines, partition_object, partition_renderable


def print_reports(reports: Iterable[PartitionReport], json_output: bool, paths: Iterable[str]) -> ExitCode:
    """Print each partition's report as it comes; the exit status of the run."""
    console = None
    if not json_output and sys.stdout.isatty():
        from rich.console import Console

        console = Console()
    seen = problems = errors = False
    for report in reports:
        seen = True
        problems = problems or report.problems
        for error in report.read_errors:
            errors = True
            click.echo(f"Error: {error}", err=True)
        if json_output:
            click.echo(log_json.dumps(partition_object(report)))
        elif console is not None:
            console.print(partition_renderable(report))
        else:
            for line in partition_lines(report):
                click.echo(line)
    if not seen:
        raise InputError("no partition replicas found (log dirs, partition dirs or folders of log dirs)",
                         path=", ".join(paths))
    if errors:
        return ExitCode.PROBLEMS
    return ExitCode.REPLICAS_DIVERGE if problems else ExitCode.OK


def replicas_options(topic: str | None, partition: int | None, if_leader: int | None, explain: bool,
                     kafka_version: str, index_interval_bytes: int | None = None) -> ReplicasOptions:
    release = parse_kafka_version(kafka_version).major_minor
    return ReplicasOptions(topic, partition, if_leader, explain, release, index_interval_bytes)


replicas_options_stack = option_stack(
    click.option("--topic", default=None, help="Only this topic."),
    click.option("--partition", type=click.IntRange(min=0), default=None, help="Only this partition number."),
    click.option("--if-leader", "if_leader", type=int, default=None, metavar="BROKER",
                 help="Predict the followers' truncation as if BROKER leads (default: the metadata's leader, or the "
                      "one its controller elects, or without metadata the replica with the latest epoch)."),
    click.option("--index-interval-bytes", type=click.IntRange(min=0), default=None, metavar="N",
                 help="The topic's index.interval.bytes, which restart recovery depends on (default: the "
                      "metadata's topic config, else 4096)."),
    click.option("--explain", is_flag=True, help="Show each divergence's two batches: file, position, records."),
    click.option("--kafka-version", default=DEFAULT_KAFKA_VERSION, show_default=True, metavar="V",
                 help="The cluster's Kafka release (its __cluster_metadata record definitions)."),
)
"""The options of ``kdump replicas`` and ``kdump spark replicas`` (one list for both)."""


@click.command("replicas", cls=KdumpCommand, error_exit=ExitCode.UNREADABLE)
@click.argument("paths", nargs=-1, required=True, type=DIR_OR_URI)
@replicas_options_stack
@json_option
def replicas(paths: tuple[str, ...], topic: str | None, partition: int | None, if_leader: int | None,
             index_interval_bytes: int | None, explain: bool, kafka_version: str, json_output: bool) -> None:
    """Compare the replicas of each partition across several brokers' log dirs, offline.

    \b
    PATH is a broker's log dir, a partition dir, or a folder of log dirs (broker-1/ broker-2/ ...),
    local or an s3://, gs://, hdfs:// URI (with pyarrow: pip install 'kdump[spark]').
    Replicas are matched by topic name and topic id; the brokers by meta.properties. Where a copy of
    __cluster_metadata is among the PATHs it is replayed for the leader, epoch, ISR and ELR.
    Batches are compared by their headers only (offsets, leader epoch, CRC).

    Exit status: 0 the replicas agree (followers may lag), 1 a segment could not be read to its end
    (an Error: line says where; the replica is compared up to there), 3 replicas diverge or a
    follower would drop records the leader lacks, 2 usage error or nothing readable found.
    """
    options = replicas_options(topic, partition, if_leader, explain, kafka_version, index_interval_bytes)
    raise SystemExit(print_reports(analyze(paths, options), json_output, paths))
