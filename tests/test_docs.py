"""Docs cannot drift: every command and option is in README.md, and CI runs README's test command."""

from __future__ import annotations

import re
from pathlib import Path

import click

from kdump.cli.main import SUBCOMMANDS, cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _fenced_commands() -> list[str]:
    return re.findall(r"```sh\n(.*?)\n```", README, flags=re.S)


def test_readme_gives_exactly_two_setup_commands_and_ci_runs_the_test_one():
    section = README.split("## Two commands for a fresh machine", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)\n```", section, flags=re.S)
    assert len(commands) == 2
    demo, tests = commands
    assert "kdump" in demo and "pytest" in tests
    assert tests in (ROOT / ".ci" / "run").read_text()


def test_demo_command_uses_bundled_fixtures_that_exist():
    demo = _fenced_commands()[0]
    for path in re.findall(r"fixtures/\S+", demo):
        assert (ROOT / path).exists(), path


def test_every_top_level_option_is_in_the_readme():
    for param in cli.params:
        for opt in param.opts:
            if opt.startswith("--"):
                assert f"`{opt}" in README, f"{opt} is not documented in README.md"


def test_every_subcommand_is_in_the_readme():
    ctx = click.Context(cli)
    for name in SUBCOMMANDS:
        if cli.get_command(ctx, name) is not None:
            assert f"kdump {name}" in README, f"`kdump {name}` is not documented in README.md"
