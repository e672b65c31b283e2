"""Java sources compiled into a shared cache entry (a directory of classes), as every shared cache entry
of the tests is made: in a private directory beside the entry (the same file system), renamed into place
whole once complete. xdist workers and parallel test runs compile the same sources on a cold cache at
once; a process finds an entry complete or not at all, never another's javac still writing into it.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

COMPLETE = ".complete"
# javac is a short-lived JVM: the client compiler and the serial collector cost it half the CPU time.
_JAVAC_JVM = ("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC")


class JavacError(RuntimeError):
    """javac failed; the message holds the end of what it printed."""


def compiled_classes(out: Path, sources: Sequence[Path], classpath: str = "", timeout: float = 120) -> Path:
    """``out``, the classes of ``sources`` compiled against ``classpath`` (compiled now unless an earlier
    process did). ``out``'s name must change with what it is compiled from (a hash of the sources)."""
    if (out / COMPLETE).exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    private = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        proc = subprocess.run(["javac", *_JAVAC_JVM, "-nowarn", "-encoding", "UTF-8",
                               *(["-cp", classpath] if classpath else []), "-d", str(private), *map(str, sources)],
                              capture_output=True, text=True, timeout=timeout, check=False)
        if proc.returncode != 0:
            raise JavacError(f"javac {' '.join(path.name for path in sources)} exited {proc.returncode}: "
                             f"{proc.stderr[-3000:]}")
        (private / COMPLETE).touch()
        _publish(private, out)
    finally:
        shutil.rmtree(private, ignore_errors=True)   # gone once renamed; else a failed or a second compile
    return out


def _publish(private: Path, out: Path) -> None:
    """Rename ``private`` to ``out`` unless another process did first (then ``out`` holds the marker)."""
    try:
        private.rename(out)
    except OSError:
        if not (out / COMPLETE).exists():
            raise JavacError(f"{out} exists without {COMPLETE}: not made here; remove it") from None
