"""Docs cannot drift: README's examples print what README shows, docs/cli.md is what the commands
say about themselves, and CI runs README's test command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kdump.cli.main import SUBCOMMANDS
from kdump.cli.reference import reference

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _fenced(kind: str, text: str = README) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)\n```", text, flags=re.S)


def test_readme_gives_exactly_two_setup_commands_and_ci_runs_the_test_one() -> None:
    section = README.split("## Two commands for a fresh machine", 1)[1].split("\n## ", 1)[0]
    commands = _fenced("sh", section)
    assert len(commands) == 2
    demo, tests = commands
    assert "kdump" in demo and "pytest" in tests
    assert tests in (ROOT / ".ci" / "run").read_text()


def test_demo_command_uses_bundled_fixtures_that_exist() -> None:
    demo = _fenced("sh")[0]
    for path in re.findall(r"fixtures/\S+", demo):
        assert (ROOT / path).exists(), path


def test_readme_stays_short_and_names_every_command() -> None:
    # Issue 24: about 150 lines: what kdump is and why, the two commands, a dozen everyday examples,
    # the commands, links; plus the two worked examples from real Kafka that issues 22 and 23 ask README
    # to show (an unclean election with kdump replicas, tiered storage), whole runs in docs/; issue 32's
    # brief real run of kdump groups.
    assert len(README.splitlines()) <= 166
    for name in SUBCOMMANDS:
        assert f"kdump {name}" in README, f"`kdump {name}` is not in README.md"


def test_docs_cli_md_is_generated_from_the_commands() -> None:
    """Regenerate with `python -m kdump.cli.reference > docs/cli.md`."""
    assert (ROOT / "docs" / "cli.md").read_text() == reference(), \
        "docs/cli.md is stale: python -m kdump.cli.reference > docs/cli.md"


def test_readme_links_resolve() -> None:
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        if "://" not in target:
            assert (ROOT / target).exists(), target


# --- every console example, run --------------------------------------------------------------------

def console_steps() -> list[tuple[str, list[str]]]:
    """(command, the lines README shows under it) of every ```console block, in order."""
    steps: list[tuple[str, list[str]]] = []
    for block in _fenced("console"):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
    return steps


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Run README commands as a reader does from a checkout: `kdump` on PATH, ./fixtures there, stdout
    and stderr on one terminal. A directory of its own, so what `gen` and `recover --out` write goes
    away with it; README shows the absolute directory kdump prints as `...`."""
    work = tmp_path_factory.mktemp("readme")
    (work / "fixtures").symlink_to(ROOT / "fixtures")
    bin_dir = work / ".bin"
    bin_dir.mkdir()
    (bin_dir / "kdump").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kdump "$@"\n')
    (bin_dir / "kdump").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "LC_ALL": "C.UTF-8"}
    env.pop("KDUMP_PURE_PYTHON", None)

    def run(command: str) -> list[str]:
        done = subprocess.run(["bash", "-c", f"exec 2>&1; {command}"], cwd=work, env=env, capture_output=True,
                              text=True, timeout=120)
        text = done.stdout.replace(f"{ROOT}/", ".../").replace(f"{work}/", ".../")
        return text.splitlines()

    return run


def test_every_readme_example_prints_what_readme_shows(shell) -> None:  # type: ignore[no-untyped-def]
    steps = console_steps()
    assert len([c for c, _ in steps if c.startswith("kdump")]) >= 12
    for command, shown in steps:
        assert shell(command) == shown, command
