"""docs/cli.md, the full command reference, generated from the click commands themselves.

    python -m kdump.cli.reference > docs/cli.md        (tests/test_docs.py fails when it is stale)

Every command and subcommand's ``--help``, as click formats it at a fixed width, in the order of
``kdump --help``; README.md keeps to the everyday examples and links here.
"""

from __future__ import annotations

import click

from kdump.cli.main import SUBCOMMANDS, cli, load_command

WIDTH = 100

_HEADER = """# kdump command reference

Generated from the commands' own help by `python -m kdump.cli.reference > docs/cli.md`; do not edit
(`tests/test_docs.py` fails when this file and the commands disagree). The everyday examples are in
[README.md](../README.md), exit codes in [exit-codes.md](exit-codes.md), JSON output in
[json-output.md](json-output.md).
"""


def _help(command: click.Command, name: str, parent: click.Context | None) -> tuple[str, click.Context]:
    # The command's own context settings (the root's `-h`), as `make_context` applies them: click
    # caches each command's help option by the first context that asked, so a context without them
    # would print `-h` or not depending on which commands ran before in the same process.
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = click.Context(command, info_name=name, parent=parent, **settings)
    # A subcommand invoked on its own first (CliRunner().invoke(txn, ...) in a test) cached a help
    # option without the root's `-h`: forget it, so the reference is the one `kdump txn --help` shows.
    command._help_option = None
    return command.get_help(ctx), ctx


def _section(title: str, text: str) -> str:
    return f"\n## `{title}`\n\n```text\n{text}\n```\n"


def reference() -> str:
    """The whole of docs/cli.md."""
    parts = [_HEADER]
    text, root = _help(cli, "kdump", None)
    parts.append(_section("kdump", text))
    for name in SUBCOMMANDS:
        command = load_command(name)
        assert command is not None
        text, ctx = _help(command, name, root)
        parts.append(_section(f"kdump {name}", text))
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                subcommand = command.get_command(ctx, sub)
                assert subcommand is not None
                parts.append(_section(f"kdump {name} {sub}", _help(subcommand, sub, ctx)[0]))
    return "".join(parts)


if __name__ == "__main__":
    click.echo(reference(), nl=False)
