"""``kdump completion SHELL``: the bash script, sourced in a real bash, completes subcommands and options.

bash calls the completion function with COMP_WORDS/COMP_CWORD set; the function runs ``kdump``
with ``_KDUMP_COMPLETE=bash_complete`` and fills COMPREPLY. The test does the same as bash on Tab.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from kdump_testing import run_kdump

COMPLETE = r'''
source "$SCRIPT"
read -ra COMP_WORDS <<< "$LINE"
[[ "$LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
_kdump_completion kdump
printf '%s\n' "${COMPREPLY[@]}"
'''


@pytest.fixture(scope="module")
def complete(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    tmp = tmp_path_factory.mktemp("completion")
    script = tmp / "kdump.bash"
    result = run_kdump("completion", "bash")
    assert result.exit_code == 0
    script.write_text(result.stdout)
    # `kdump` on PATH is this interpreter's kdump, as after `pip install`.
    (tmp / "kdump").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kdump "$@"\n')
    (tmp / "kdump").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "KDUMP_PURE_PYTHON"}
    env["PATH"] = f"{tmp}{os.pathsep}{env.get('PATH', '')}"

    def run(line: str) -> list[str]:
        done = subprocess.run(["bash", "--norc", "--noprofile", "-c", COMPLETE], capture_output=True, text=True,
                              env={**env, "SCRIPT": str(script), "LINE": line}, cwd=tmp, timeout=120, check=True)
        assert done.stderr == ""
        return sorted(filter(None, done.stdout.splitlines()))

    return run


def test_bash_completes_subcommands(complete) -> None:  # type: ignore[no-untyped-def]
    assert complete("kdump ver") == ["verify", "verify-index"]
    assert complete("kdump comp") == ["completion"]
    assert {"gen", "verify", "summary", "txn", "recover", "spark", "completion"} <= set(complete("kdump "))


def test_bash_completes_option_names_of_the_root_and_of_subcommands(complete) -> None:  # type: ignore[no-untyped-def]
    assert complete("kdump --print") == ["--print-data-log"]
    # The root group also takes Kafka's options: completion goes on after them.
    assert complete("kdump --files x.log --deep") == ["--deep-iteration"]
    assert complete("kdump verify --errors") == ["--errors-only"]
    assert complete("kdump completion ") == ["bash", "fish", "zsh"]


def test_zsh_and_fish_scripts_register_kdump() -> None:
    zsh = run_kdump("completion", "zsh")
    fish = run_kdump("completion", "fish")
    assert zsh.exit_code == fish.exit_code == 0
    assert "compdef _kdump_completion kdump" in zsh.stdout
    assert "_KDUMP_COMPLETE=zsh_complete" in zsh.stdout
    assert "complete --no-files --command kdump" in fish.stdout
    assert "_KDUMP_COMPLETE=fish_complete" in fish.stdout


def test_unknown_shell_is_a_usage_error() -> None:
    result = run_kdump("completion", "ksh")
    assert result.exit_code == 2
    assert "'ksh' is not one of 'bash', 'zsh', 'fish'" in result.stderr
