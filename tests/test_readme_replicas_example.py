"""docs/guide.md's worked `kdump replicas` example stays true: its commands are run here, in a fresh
directory, and every command's output must be what the guide shows under it (exit status 3: data loss)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _example() -> list[tuple[str, list[str]]]:
    readme = (ROOT / "docs" / "guide.md").read_text()
    after = readme.split(f"`tests/{Path(__file__).name}` runs these", 1)[1]
    block = re.search(r"```console\n(.*?)\n```", after, flags=re.S)
    assert block is not None
    steps: list[tuple[str, list[str]]] = []
    for line in block.group(1).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def test_the_worked_replicas_example_prints_what_readme_shows(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", LC_ALL="C")
    steps = _example()
    assert [c.split()[1] for c, _ in steps] == ["gen", "replicas"]
    codes = []
    for command, shown in steps:
        proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              check=False, timeout=120)
        assert proc.stderr == "", (command, proc.stderr)
        assert proc.stdout.replace(f"{tmp_path}/", "").splitlines() == shown, command
        codes.append(proc.returncode)
    assert codes == [0, 3]
