"""Build kdump's sdist and wheels and install them into throwaway venvs outside the repository.

Each venv gets kdump only from what a test installs. Its dependencies (pyspark among them, too big
to install per test) come from the running interpreter's site-packages through one line in a
``.pth`` file: a directory added that way is not a site directory, so its own ``.pth`` files (the
editable kdump of the development venv) are not processed, and kdump is not importable from it.
pip builds in isolation from its cache, so after the first run no download is needed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(args: list[str | Path], *, cwd: Path | None = None, env: dict[str, str] | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run a command outside the repository, failing with its output when it fails."""
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"{args} exited {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}")
    return done


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without the test run's own Python settings (a venv, PYTHONPATH, pure-Python mode)."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "KDUMP_PURE_PYTHON", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return {**env, **extra}


def build_sdist(out: Path) -> Path:
    run([sys.executable, "-m", "build", "--sdist", "--outdir", out, ROOT], cwd=out.parent)
    (sdist,) = out.glob("kdump-*.tar.gz")
    return sdist


def build_wheel(sdist: Path, out: Path, **env: str) -> Path:
    """A wheel built from the sdist, as pip builds one on a machine with no wheel for it (``CC=false``: no compiler)."""
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", out, sdist], cwd=out.parent,
        env=clean_env(**env))
    (wheel,) = out.glob("kdump-*.whl")
    return wheel


def venv_with_dependencies(path: Path) -> Path:
    """A new venv at ``path`` without kdump; returns its python."""
    run([sys.executable, "-m", "venv", "--without-pip", path])
    python = path / "bin" / "python"
    purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    Path(purelib, "_kdump_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def pip_install(python: Path, *args: str | Path) -> None:
    """Install into ``python``'s venv only (``--ignore-installed``: never touch the dependencies' venv)."""
    run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--ignore-installed",
         *args], cwd=python.parent, env=clean_env())
