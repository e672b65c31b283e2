"""``kdump``: Kafka's ``kafka-dump-log.sh`` options at the top level, extra tools as subcommands.

``kdump --files A,B [...]`` behaves like DumpLogSegments; ``kdump gen``, ``kdump verify-index``
and the other subcommands are kdump's own. Subcommand modules are imported only when used, so a
plain dump starts fast (start-up time dominates a dump of a small file).
"""

from __future__ import annotations

import importlib

import click

from kdump import __version__, accelerators
from kdump.cli.boundary import KdumpGroup
from kdump.cli.dump_files import dump_files
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import dump_options

# name -> "module:attribute"; each module holds one click command.
SUBCOMMANDS: dict[str, str] = {
    "gen": "kdump.cli.gen:gen",
    "verify-index": "kdump.cli.verify_index:verify_index",
    "verify": "kdump.cli.verify:verify",
    "rebuild-index": "kdump.cli.rebuild_index:rebuild_index",
    "find": "kdump.cli.find:find",
    "summary": "kdump.cli.summary:summary",
    "txn": "kdump.cli.txn:txn",
    "partition-for": "kdump.cli.partition_for:partition_for",
    "recover": "kdump.cli.recover:recover",
    "replicas": "kdump.cli.replicas:replicas",
    "spark": "kdump.cli.spark:spark",
    "completion": "kdump.cli.completion:completion",
    "tiered": "kdump.cli.tiered:tiered",
}


class TopLevelGroup(KdumpGroup):
    """Lazy subcommands, and Kafka's rule that words which are not options are ignored."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = SUBCOMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        return command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as err:
            err.exit_code = ExitCode.DUMP_USAGE  # type: ignore[misc]  # a bad top-level option: kafka-dump-log's usage exit
            raise

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        if ctx.params.get("files") is not None and self.get_command(ctx, args[0]) is None:
            # DumpLogSegments silently ignores non-option words (`--files a.log b.log` dumps a.log);
            # kdump ignores them too, but says so.
            click.echo(f"Ignoring argument(s) that are not options: {' '.join(args)} "
                       f"(list files as --files a,b)", err=True)
            return None, _IGNORED, []
        return super().resolve_command(ctx, args)


_IGNORED = click.Command("ignored", callback=lambda: None, hidden=True)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from kdump.format.crc import CRC32C_IMPLEMENTATION
    from kdump.format.records import RECORD_DECODER
    from kdump.render.log_text import LINE_FORMATTER

    click.echo(f"kdump {__version__} (reproduces kafka-dump-log output of Kafka 2.2 to 4.3)")
    click.echo(f"CRC-32C: {CRC32C_IMPLEMENTATION}; v2 records: {RECORD_DECODER}; dump lines: {LINE_FORMATTER}")
    click.echo(accelerators.status())
    ctx.exit()


@click.group(cls=TopLevelGroup, error_exit=ExitCode.FILE_ERROR, invoke_without_command=True,
             context_settings={"help_option_names": ["--help", "-h"], "max_content_width": 110})
@dump_options
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version, and which CRC-32C and C accelerators this install uses, and exit.")
@click.pass_context
def cli(ctx: click.Context, **options: object) -> None:
    """Parse Kafka log directory files and dump them, like kafka-dump-log.sh (DumpLogSegments).

    \b
    kdump --files 00000000000000000000.log --print-data-log
    kdump --files a.index,a.timeindex --verify-index-only
    kdump verify-index /var/lib/kafka/data
    kdump gen demo-logs
    """
    accelerators.warn_once()  # an install without a compiler is otherwise silent (pip -q hides it)
    if ctx.invoked_subcommand is not None:
        return
    if options.get("files") is None:
        click.echo('Missing required argument "[files]"', err=True)
        click.echo(ctx.get_usage(), err=True)
        click.echo("Try 'kdump --help' for help.", err=True)
        ctx.exit(ExitCode.DUMP_USAGE)
    ctx.exit(dump_files(**options))


def main() -> None:
    cli.main(prog_name="kdump")  # exits; kdump.cli.boundary decides how
