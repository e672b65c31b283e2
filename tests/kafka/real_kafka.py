"""Run the real Kafka DumpLogSegments (and Java's UTF-8 decoder) from the tests.

Jars come from tests/kafka/fetch.sh (a cache outside the repository). The small Java sources beside
this file are compiled into that cache at test time, never committed as classes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FETCH = HERE / "fetch.sh"

# One concrete release per output dialect kdump distinguishes (kdump/render/dialect.py), every one on
# Maven Central (4.2.2's kafka-tools jar is not, so 4.2.1); .ci/fetch-kafka-releases reads the same file.
# kdump is run with --kafka-version set to the same release.
RELEASES: tuple[str, ...] = tuple((HERE / "releases.txt").read_text().split())


def tool_class(release: str) -> str:
    major_minor = tuple(int(part) for part in release.split(".")[:2])
    return "org.apache.kafka.tools.DumpLogSegments" if major_minor >= (4, 3) else "kafka.tools.DumpLogSegments"


def cache_dir() -> Path:
    return Path(os.environ.get("KDUMP_KAFKA_CACHE", Path.home() / ".cache" / "kdump-kafka"))


def unavailable(reason: str) -> None:
    """Skip on a laptop without Java/Maven; in CI the real tool is required, so fail."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but the real Kafka tool cannot run: {reason}")
    pytest.skip(reason)


def require_java() -> None:
    for tool in ("java", "javac", "mvn"):
        if shutil.which(tool) is None:
            unavailable(f"{tool} not on PATH; the real DumpLogSegments cannot run")


_LIBS: dict[str, Path] = {}


def kafka_lib(release: str) -> Path:
    """The directory of the release's jars (fetched once, then cached)."""
    if release not in _LIBS:
        require_java()
        done = subprocess.run([str(FETCH), release], capture_output=True, text=True)
        if done.returncode != 0:
            unavailable(f"fetch.sh {release} failed: {done.stderr.strip()[-400:]}")
        _LIBS[release] = Path(done.stdout.strip().splitlines()[-1])
    return _LIBS[release]


def compiled(source: str, classpath: str = "") -> Path:
    """Compile tests/kafka/<source> into the cache (keyed by its text) and return the class dir."""
    text = (HERE / source).read_bytes()
    out = cache_dir() / "classes" / hashlib.sha1(text + classpath.encode()).hexdigest()[:12]
    if not (out / ".complete").exists():
        out.mkdir(parents=True, exist_ok=True)
        cmd = ["javac", "-nowarn", "-d", str(out)] + (["-cp", classpath] if classpath else []) + [str(HERE / source)]
        subprocess.run(cmd, check=True, capture_output=True)
        (out / ".complete").touch()
    return out


@dataclass(frozen=True)
class Outcome:
    stdout: str
    stderr: str
    exit_code: int


def run_dump_log_segments(release: str, runs: list[list[str]], warmup: list[str],
                          restore: tuple[Path, Path] | None = None) -> list[Outcome]:
    """Every run of ``runs`` through the release's DumpLogSegments in one JVM.

    ``restore`` = (pristine, work): the files of ``work`` are copied back from ``pristine`` before
    every run and after the last, since some releases rewrite what they dump.

    ``warmup`` is run first and dropped: it absorbs the logging framework's one-time start-up
    notices, which kafka-dump-log.sh's log4j configuration keeps off the console.
    """
    lib = kafka_lib(release)
    classes = compiled("DumpRunner.java", f"{lib}/*")
    with tempfile.TemporaryDirectory(prefix="kdump-real-") as tmp:
        requests = Path(tmp) / "requests"
        for run in [warmup, *runs]:
            assert not any("\t" in arg or "\n" in arg for arg in run), run
        requests.write_text("".join("\t".join(run) + "\n" for run in [warmup, *runs]), encoding="utf-8")
        out = Path(tmp) / "out"
        subprocess.run(["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", f"{lib}/*:{classes}",
                        "DumpRunner", tool_class(release), str(requests), str(out),
                        *([str(restore[0]), str(restore[1])] if restore else [])],
                       check=True, capture_output=True, timeout=600)
        return [Outcome((out / f"{i}.out").read_bytes().decode("utf-8"),
                        (out / f"{i}.err").read_bytes().decode("utf-8"),
                        int((out / f"{i}.rc").read_text()))
                for i in range(1, len(runs) + 1)]


class JavaUtf8:
    """``new String(bytes, StandardCharsets.UTF_8)`` computed by the JDK: one process, many questions."""

    def __init__(self) -> None:
        require_java()
        classes = compiled("JavaUtf8.java")
        self._process = subprocess.Popen(["java", "-cp", str(classes), "JavaUtf8"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, bufsize=1)

    def decode(self, data: bytes) -> str:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(data.hex() + "\n")
        self._process.stdin.flush()
        return bytes.fromhex(self._process.stdout.readline().strip()).decode("utf-8")

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(timeout=60)
