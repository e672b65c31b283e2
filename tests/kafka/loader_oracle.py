"""Kafka's own log loader as a test oracle: `UnifiedLog.create` (4.x) or the Scala companion's `apply`
(3.x) run on a copy of a log dir, with the jars of the release asked for.

LoaderOracle.java (the protocol and the answer) and the sources for the release's loader API (SOURCES:
LoaderOracle4.java for 4.3/4.4; LoaderOracle39.java or LoaderOracle33.java on LoaderOracle3.java for 3.x;
LoaderOracleStorage.java for the classes 3.9 and 4.x share) are compiled together once per release into
the jar cache; one JVM per release serves every request of a test session (`loader_oracle` and
`loader_oracles` fixtures in conftest.py), each answered in well under a second. A request names a
directory the oracle may change (a copy: the loader truncates, deletes and rebuilds as a broker does,
then the log is closed as at a clean stop) and returns what the loader recovered: log start offset, log
end offset, recovery point, segments (base offset, size, `.txnindex` entries), producer state (epochs,
last sequences, ongoing transactions) and the leader-epoch cache (those three from LoaderOracle4.java
only). With ``stop=True`` each log is stopped as LogManager.shutdown stops it, and the answer says what
the broker's checkpoints would hold (``checkpoints``).
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

from broker import HERE, BrokerError, driver_classes, jvm_temp_flags

# The loader API generations: the release line -> the sources that call its loader, compiled with
# PROTOCOL; the first holds the main class.
PROTOCOL = "LoaderOracle.java"
_STORAGE = "LoaderOracleStorage.java"
SOURCES = {"4.3": ("LoaderOracle4.java", _STORAGE), "4.4": ("LoaderOracle4.java", _STORAGE),
           "3.9": ("LoaderOracle39.java", "LoaderOracle3.java", _STORAGE),
           "3.3": ("LoaderOracle33.java", "LoaderOracle3.java")}
RELEASE = "4.3.0"


def sources_for(release: str) -> tuple[Path, ...]:
    """The LoaderOracle sources for ``release``, its main class's first (BrokerError for a line without one)."""
    line = ".".join(release.split(".")[:2])
    if line not in SOURCES:
        raise BrokerError(f"no loader oracle for Kafka {release} (lines: {', '.join(sorted(SOURCES))})")
    return tuple(HERE / name for name in (*SOURCES[line], PROTOCOL))


_JVM_FLAGS = ("-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")


def _child_setup() -> None:
    # Runs between fork and exec: default signal dispositions, and SIGKILL when the test process exits.
    import signal

    from broker import _die_with_parent

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    _die_with_parent()


class LoaderOracle:
    """One JVM running the release's LoaderOracle; `load(path, ...)` sends a request and waits for its answer."""

    def __init__(self, lib: Path, release: str = RELEASE, timeout: float = 60) -> None:
        sources = sources_for(release)
        classes = driver_classes(lib, source=sources)
        self.release = release
        self.process = subprocess.Popen(
            ["java", *_JVM_FLAGS, *jvm_temp_flags(), "-Dlog4j2.level=ERROR",
             "-cp", f"{classes}:{lib}/*", sources[0].stem],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            preexec_fn=_child_setup,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        if self._answer(timeout).get("ready") is not True:
            raise BrokerError("the loader oracle did not start")

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _answer(self, timeout: float) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            self.close()
            raise BrokerError(f"the loader oracle gave no answer within {timeout}s") from None
        if line is None:
            raise BrokerError(f"the loader oracle exited ({self.process.wait(10)})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def load(self, path: Path, *, partition: bool = False, clean: bool | None = None, stop: bool = False,
             system_clock: bool = False, timeout: float = 60, **config: object) -> dict[str, Any]:
        """Load the log dir (or with ``partition=True`` the partition dir) ``path`` IN PLACE; ``clean``
        overrides the clean-shutdown marker; ``stop`` stops each log as a broker's clean shutdown does;
        ``system_clock`` gives the loader a broker's wall clock and producer expiry (else the clock is at
        0 and no producer expires); ``config`` are topic configs (index_interval_bytes=512)."""
        fields = [str(path)]
        if partition:
            fields.append("partition=true")
        if stop:
            fields.append("stop=true")
        if system_clock:
            fields.append("clock=system")
        if clean is not None:
            fields.append(f"clean={str(clean).lower()}")
        fields += [f"{key.replace('_', '.')}={value}" for key, value in config.items()]
        assert self.process.stdin is not None
        self.process.stdin.write("\t".join(fields) + "\n")
        self.process.stdin.flush()
        answer = self._answer(timeout)
        if "error" in answer:
            raise BrokerError(f"the loader oracle failed on {path}: {answer['error']}")
        return answer

    def load_copy(self, source: Path, work: Path, **kwargs: Any) -> tuple[Path, dict[str, Any]]:
        """Copy the log dir ``source`` to ``work`` and load the copy: (the loaded copy, the answer)."""
        shutil.copytree(source, work, symlinks=True)
        return work, self.load(work, **kwargs)

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            try:
                self.process.stdin.close()
                self.process.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(10)


def partition(answer: dict[str, Any], dir_name: str) -> dict[str, Any]:
    """The answer's entry for the partition dir named ``dir_name``."""
    found: dict[str, Any] = next(p for p in answer["partitions"] if p["dir"] == dir_name)
    return found


# The files of a partition dir a broker's restart and clean stop decide (segments, their indexes, the
# producer snapshots); leader-epoch-checkpoint and partition.metadata move on with leadership instead.
STOPPED_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot")


def stopped_differences(broker: Path, oracle: Path) -> list[str]:
    """The names of the files (STOPPED_SUFFIXES) that a broker's partition dir and the oracle's
    (loaded with ``stop=True``) do not hold with the same bytes: [] when the oracle did what the broker did."""
    def files(directory: Path) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in directory.iterdir() if p.suffix in STOPPED_SUFFIXES}

    ours, theirs = files(broker), files(oracle)
    return sorted(name for name in ours.keys() | theirs.keys() if ours.get(name) != theirs.get(name))


def checkpoint_lines(answer: dict[str, Any]) -> dict[str, str | None]:
    """The partition's lines in the recovery-point and log-start checkpoints a broker writes at its clean
    stop, from an answer of ``load(..., stop=True)`` (None: the broker writes no line for it)."""
    prefix = f"{answer['topic']} {answer['partition']} "
    log_start = answer["checkpoints"]["logStart"]
    return {"recovery-point-offset-checkpoint": prefix + str(answer["checkpoints"]["recoveryPoint"]),
            "log-start-offset-checkpoint": None if log_start is None else prefix + str(log_start)}
