"""``kdump tiered LOGDIR... --remote ROOT``: a tiered partition's history, local and remote, and what is wrong.

The checks are ``kdump.verify.tiered_check`` (``kdump verify --remote ROOT`` runs the same ones); the remote
store is read through ``kdump.log.remote_layout`` (locally, or s3://, gs://, hdfs:// with pyarrow installed).
"""

from __future__ import annotations

import click

from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import json_option
from kdump.findings import Finding
from kdump.render import log_json
from kdump.render.tiered_text import summary_line, tiered_lines, tiered_object
from kdump.verify.tiered_check import check_tiered, tiered_findings


def tiered_verify_findings(log_dirs: tuple[str, ...], remote_root: str) -> list[Finding]:
    """What ``kdump verify --remote ROOT`` adds to its findings."""
    return tiered_findings(log_dirs, remote_root)


@click.command("tiered", cls=KdumpCommand, error_exit=ExitCode.UNREADABLE)
@click.argument("log_dirs", nargs=-1, required=True, metavar="LOGDIR...",
                type=click.Path(exists=True, file_okay=False))
@click.option("--remote", "remote_root", required=True, metavar="ROOT",
              help="The remote store's root (LocalTieredStorage: the dir holding kafka-tiered-storage/), "
                   "a local path or an s3://, gs://, hdfs:// URI.")
@click.option("--errors-only", is_flag=True, help="Only list partitions with errors.")
@json_option
def tiered(log_dirs: tuple[str, ...], remote_root: str, errors_only: bool, json_output: bool) -> None:
    """Tiered storage (KIP-405): remote segments, their __remote_log_metadata records and the local log.

    Per partition: the log start offset, the local log start offset, the log end offset, every remote
    segment (start and end offset, id, state replayed from __remote_log_metadata, whether its files are in
    the store) and the problems (docs/tiered.md lists them). Exit status as verify: 0 clean (notes
    allowed), 1 problems found, 2 usage error or unreadable input.

    \b
    kdump tiered /var/lib/kafka/data --remote /mnt/tiered
    kdump tiered /var/lib/kafka/data --remote s3://bucket/tiered --json
    """
    count = errors = notes = 0
    for part in check_tiered(log_dirs, remote_root):
        count += 1
        errors += sum(p.severity == "error" for p in part.problems)
        notes += sum(p.severity == "note" for p in part.problems)
        if errors_only and not part.has_errors:
            continue
        if json_output:
            click.echo(log_json.dumps(tiered_object(part)))
        else:
            for line in tiered_lines(part):
                click.echo(line)
    if not json_output:
        click.echo(summary_line(count, errors, notes))
    click.get_current_context().exit(ExitCode.PROBLEMS if errors else ExitCode.OK)
