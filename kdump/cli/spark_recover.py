"""``kdump spark recover PATH...``: ``kdump recover`` of many log dirs, one Spark task per partition dir;
its output and exit status come from the same functions (``kdump.cli.recover.report``)."""

from __future__ import annotations

import click

from kdump.cli.options import json_option
from kdump.cli.recover import exit_status, report
from kdump.cli.spark import MISSING, SessionSettings, session_options, spark, spark_session
from kdump.errors import UsageError


@spark.command("recover")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@session_options
@json_option
def recover_command(paths: tuple[str, ...], settings: SessionSettings, json_output: bool) -> None:
    """What a broker will do to each log dir (or partition dir) in PATHS at its next start.

    \b
    The plans of `kdump recover PATHS`, computed in Spark tasks (one per partition dir); every
    executor must see PATHS at the same location. Exit status: 0 nothing would be lost, 1 data
    would be truncated or deleted, 2 unreadable input or a partition the broker would refuse.
    """
    try:
        from kdump.spark.recover import plan_log_dirs
    except ImportError:
        raise UsageError(MISSING) from None
    with spark_session(settings, "kdump spark recover") as session:
        results = plan_log_dirs(session, list(paths))
    report(results, json_output, paths)
    raise SystemExit(exit_status(results))
