"""``kdump``: Kafka's ``kafka-dump-log.sh`` options at the top level, extra tools as subcommands.

``kdump --files A,B [...]`` behaves like DumpLogSegments; ``kdump gen``, ``kdump verify-index``
and the other subcommands are kdump's own. Start-up is most of a small run's time (a CI loop calls
``kdump verify-index`` once per segment), so this module imports only click and the top-level
options: each subcommand's module is imported when that subcommand runs, the dump machinery when
``--files`` is given, and ``--help``, ``--version`` and shell completion import neither
(tests/cli/test_startup.py checks which modules each loads).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import click

from kdump.cli.boundary import KdumpGroup
from kdump.cli.entry import imports_done
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import dump_options

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

# Every subcommand, in `kdump --help`'s order: name -> ("module:function", the line --help and a Tab show).
# Adding a command is one line here; its module is imported only when it runs (or its own --help is asked).
SUBCOMMANDS: dict[str, tuple[str, str] | str] = {
    "gen": ("kdump.cli.gen:gen", "Write a realistic log.dirs, appending and rolling as a broker does."),
    "verify-index": ("kdump.cli.verify_index:verify_index", "Check .index/.timeindex files against their logs."),
    "verify": ("kdump.cli.verify:verify", "Check logs, indexes and checkpoints: CRCs, offsets, .txnindex..."),
    "rebuild-index": ("kdump.cli.rebuild_index:rebuild_index", "Write the .index and .timeindex a broker would."),
    "find": ("kdump.cli.find:find", "Find a record by offset or timestamp, as Kafka's lookups do."),
    "summary": ("kdump.cli.summary:summary", "Per partition: segments, offsets, sizes, times, checkpoints."),
    "txn": ("kdump.cli.txn:txn", "Committed, aborted and still-open transactions, against .txnindex."),
    "partition-for": ("kdump.cli.partition_for:partition_for",
                      "The __consumer_offsets / __transaction_state partition of a group or id."),
    "recover": ("kdump.cli.recover:recover", "What a broker will do to a log dir at its next start."),
    "replicas": ("kdump.cli.replicas:replicas", "Compare each partition's replicas across brokers' log dirs, offline."),
    "groups": ("kdump.cli.groups:groups", "What each consumer group will do at its next start, from the disks."),
    "spark": ("kdump.cli.spark:spark", "Run verify, export, recover or replicas as Spark jobs."),
    "completion": ("kdump.cli.completion:completion", "Print the shell completion script (bash, zsh, fish)."),
    "tiered": ("kdump.cli.tiered:tiered", "Tiered storage (KIP-405): remote segments against their metadata."),
    "export": ("kdump.cli.export:export", "Write the records under PATHS as Parquet, without Spark."),
}


def _summary(name: str) -> str:
    entry = SUBCOMMANDS[name]
    if isinstance(entry, str):   # a "module:function" line without its summary: ask the command
        command = load_command(name)
        return command.get_short_help_str() if command is not None else ""
    return entry[1]


def load_command(name: str) -> click.Command | None:
    """The click command called ``name``, its module imported now; None for an unknown name."""
    entry = SUBCOMMANDS.get(name)
    if entry is None:
        return None
    module_name, attr = (entry if isinstance(entry, str) else entry[0]).split(":")
    command = getattr(importlib.import_module(module_name), attr)
    assert isinstance(command, click.Command)
    imports_done()
    return command


class TopLevelGroup(KdumpGroup):
    """Lazy subcommands, and Kafka's rule that words which are not options are ignored."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load_command(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The table's summaries: --help imports no subcommand.
        with formatter.section("Commands"):
            formatter.write_dl([(name, _summary(name)) for name in SUBCOMMANDS])

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        # Subcommand names from the table, so a Tab imports no subcommand; option names as click does.
        from click.shell_completion import CompletionItem

        names = [CompletionItem(name, help=_summary(name)) for name in SUBCOMMANDS if name.startswith(incomplete)]
        return names + click.Command.shell_complete(self, ctx, incomplete)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as err:
            err.exit_code = ExitCode.DUMP_USAGE  # type: ignore[misc]  # a bad top-level option: kafka-dump-log's usage exit
            raise

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        known = args[0] in SUBCOMMANDS
        if ctx.params.get("files") is not None and not known:
            # DumpLogSegments silently ignores non-option words (`--files a.log b.log` dumps a.log);
            # kdump ignores them too, but says so.
            click.echo(f"Ignoring argument(s) that are not options: {' '.join(args)} "
                       f"(list files as --files a,b)", err=True)
            return None, _IGNORED, []
        if not known and not args[0].startswith("-") and not ctx.resilient_parsing:
            import difflib  # only for a misspelt subcommand: every other run is spared its import

            close = difflib.get_close_matches(args[0], list(SUBCOMMANDS), n=3, cutoff=0.6)
            hint = f" Did you mean {' or '.join(repr(name) for name in close)}?" if close else ""
            ctx.fail(f"No such command {args[0]!r}.{hint} (kdump --help lists them)")
        return super().resolve_command(ctx, args)


_IGNORED = click.Command("ignored", callback=lambda: None, hidden=True)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from kdump.cli.version import version_lines

    for line in version_lines():
        click.echo(line)
    ctx.exit()


def dump_files(**options: object) -> int:
    """``kdump --files``: the dump machinery is imported here, when there is something to dump."""
    from kdump.cli.dump_files import dump_files as run

    imports_done()
    return run(**options)


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
    from kdump import accelerators

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
