"""``kdump verify PATH...``: is this log intact? Every rule kdump knows, in one pass over each log.

Checks every batch's framing and CRC, offsets (increasing through segments, within the base
offset of their file name), the offset and time indexes, the transaction index against the log's
markers, producer snapshots, and the checkpoints (recovery point, high watermark, log start offset,
leader epochs) against the log end. Records are decoded only with ``--deep`` (the CRC already
covers their bytes; decoding finds a writer's bugs, not the disk's), except a compressed v0/v1
wrapper, whose inner messages are always counted.
"""

from __future__ import annotations

import functools

import click

from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.tiered import tiered_verify_findings
from kdump.cli.verify_index import check_options, run_verify
from kdump.verify.engine import ALL, Options


@click.command("verify", cls=KdumpCommand, error_exit=ExitCode.UNREADABLE)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--deep", is_flag=True, help="Decode every record too (slower), and note offset-index density.")
@click.option("--strict", is_flag=True, help="Index entries must name a batch's last offset, as Kafka's "
              "--verify-index-only requires (pre-4.1 follower and cleaner layouts become errors).")
@click.option("--remote", "remote_root", metavar="ROOT", help="Also check tiered storage against this remote "
              "store's root (the checks of `kdump tiered`, docs/tiered.md).")
@check_options
def verify(paths: tuple[str, ...], deep: bool, strict: bool, index_interval_bytes: int, errors_only: bool,
           jobs: int, json_output: bool, traceback: bool, remote_root: str | None = None) -> None:
    """Check segment files, partition dirs or whole log.dirs: CRCs, framing, offsets, indexes, checkpoints.

    One line per problem (file and position), then a summary. Exit status: 0 clean (notes
    allowed), 1 problems found, 2 usage error, unreadable input, or nothing found to check.

    \b
    kdump verify /var/lib/kafka/data
    kdump verify --json --errors-only /var/lib/kafka/data > problems.jsonl
    """
    run_verify("verify", paths, Options(scope=ALL, strict=strict, deep=deep, interval=index_interval_bytes),
               as_json=json_output, errors_only=errors_only, traceback=traceback, jobs=jobs,
               extra=None if remote_root is None else functools.partial(tiered_verify_findings, paths, remote_root))
