"""``kdump completion SHELL``: print the shell completion script, built by click's own mechanism.

``eval "$(kdump completion bash)"`` in ~/.bashrc (zsh: ~/.zshrc; fish: ``kdump completion fish |
source``) is what ``_KDUMP_COMPLETE=bash_source kdump`` gives, under a name that is easier to find.
The script calls ``kdump`` back with ``_KDUMP_COMPLETE=bash_complete`` on every Tab, and click
answers from the command tree: subcommands, option names, choices and paths.
"""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode

SHELLS = ("bash", "zsh", "fish")


def completion_script(root: click.Command, shell: str, prog_name: str = "kdump") -> str:
    """The ``shell`` script completing ``prog_name`` (click's ``{shell}_source`` output)."""
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
