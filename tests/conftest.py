"""Shared test helpers: run the CLI in-process and capture stdout/stderr separately."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


def run_kdump(*args: str, cwd: str | os.PathLike[str] | None = None) -> CliResult:
    from kdump.cli.main import cli

    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)
    return CliResult(result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def kdump():
    return run_kdump
