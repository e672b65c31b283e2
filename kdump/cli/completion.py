"""``kdump completion SHELL``: print the shell completion script, built by click's own mechanism.

``eval "$(kdump completion bash)"`` in ~/.bashrc (zsh: ~/.zshrc; fish: ``kdump completion fish |
source``) is what ``_KDUMP_COMPLETE=bash_source kdump`` gives, under a name that is easier to find.
The script calls ``kdump`` back with ``_KDUMP_COMPLETE=bash_complete`` on every Tab, and click
answers from the command tree: subcommands, option names, choices and paths, and the values of
``--kafka-version`` and the decoder options (the completers below, named by those options).
Nothing here is imported by a command until it runs: a Tab must stay as quick as ``--version``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

SHELLS = ("bash", "zsh", "fish")

# Kafka's feature releases kdump reproduces (kdump.render.dialect: 2.2 to its LATEST_RELEASE); the last
# minor of each major: 2.8 (then 3.0), 3.9 (then 4.0).
_LAST_MINOR = {2: 8, 3: 9}


def kafka_releases() -> list[str]:
    """``2.2`` ... the latest release, for completing ``--kafka-version``."""
    from kdump.render.dialect import LATEST_RELEASE, OLDEST_SUPPORTED

    releases = []
    for major in range(OLDEST_SUPPORTED[0], LATEST_RELEASE[0] + 1):
        first = OLDEST_SUPPORTED[1] if major == OLDEST_SUPPORTED[0] else 0
        last = LATEST_RELEASE[1] if major == LATEST_RELEASE[0] else _LAST_MINOR[major]
        releases += [f"{major}.{minor}" for minor in range(first, last + 1)]
    return releases


def _items(values: list[str], incomplete: str) -> list[CompletionItem]:
    from click.shell_completion import CompletionItem

    return [CompletionItem(value) for value in values if value.startswith(incomplete)]


def complete_kafka_version(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    return _items(kafka_releases(), incomplete)


def complete_decoder(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    from kdump.render.decoders import decoder_names

    return _items(decoder_names(), incomplete)


def completion_script(root: click.Command, shell: str, prog_name: str = "kdump") -> str:
    """The ``shell`` script completing ``prog_name`` (click's ``{shell}_source`` output)."""
    from click.shell_completion import get_completion_class

    completer = get_completion_class(shell)
    assert completer is not None  # every name in SHELLS is one of click's built-in shells
    complete_var = f"_{prog_name.replace('-', '_').upper()}_COMPLETE"
    return completer(root, {}, prog_name, complete_var).source()


@click.command(cls=KdumpCommand, error_exit=ExitCode.USAGE)
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the completion script for SHELL (bash, zsh or fish).

    \b
    bash: eval "$(kdump completion bash)"     (in ~/.bashrc; bash 4.4 or later)
    zsh:  eval "$(kdump completion zsh)"      (in ~/.zshrc)
    fish: kdump completion fish | source      (in ~/.config/fish/config.fish)
    """
    # For the installed `kdump` command, whatever name this process was started under.
    click.echo(completion_script(ctx.find_root().command, shell), nl=False)
