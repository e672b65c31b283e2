"""Kafka 4.3.0's own log loader as a test oracle: `UnifiedLog.create` run on a copy of a log dir.

tests/kafka/LoaderOracle.java is compiled once into the jar cache; one JVM serves every request of a
test session (`loader_oracle` fixture in conftest.py), each answered in well under a second. A request
names a directory the oracle may change (a copy: the loader truncates, deletes and rebuilds as a
broker does, then the log is closed as at a clean stop) and returns what the loader recovered:
log start offset, log end offset, recovery point, segments (base offset, size, `.txnindex` entries),
producer state (epochs, last sequences, ongoing transactions) and the leader-epoch cache.
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

from broker import HERE, BrokerError, driver_classes

SOURCE = HERE / "LoaderOracle.java"
RELEASE = "4.3.0"
_JVM_FLAGS = ("-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")


def _child_setup() -> None:
    # Runs between fork and exec: default signal dispositions, and SIGKILL when the test process exits.
    import signal

    from broker import _die_with_parent

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    _die_with_parent()


class LoaderOracle:
    """One JVM running LoaderOracle.java; `load(path, ...)` sends a request and waits for its answer."""

    def __init__(self, lib: Path, timeout: float = 60) -> None:
        classes = driver_classes(lib, source=SOURCE)
        self.process = subprocess.Popen(
            ["java", *_JVM_FLAGS, "-Dlog4j2.level=ERROR", "-cp", f"{classes}:{lib}/*", "LoaderOracle"],
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

    def load(self, path: Path, *, partition: bool = False, clean: bool | None = None, timeout: float = 60,
             **config: object) -> dict[str, Any]:
        """Load the log dir (or with ``partition=True`` the partition dir) ``path`` IN PLACE; ``clean``
        overrides the clean-shutdown marker; ``config`` are topic configs (index_interval_bytes=512)."""
        fields = [str(path)]
        if partition:
            fields.append("partition=true")
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
