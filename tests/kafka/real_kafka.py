"""Run the real Kafka DumpLogSegments (and Java's UTF-8 decoder) from the tests.

Jars come from tests/kafka/fetch.sh (a cache outside the repository). The small Java sources beside
this file are compiled into that cache at test time, never committed as classes.
"""

from __future__ import annotations

import atexit
import fcntl
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import overload

from broker import jvm_temp_flags
from javac_cache import compiled_classes

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


def cached_releases() -> set[str]:
    """The releases whose jars fetch.sh has finished fetching into the cache (with any extras)."""
    return {path.parent.parent.name.rsplit("-", 1)[0] for path in cache_dir().glob("*/lib/.complete")}


def unavailable(reason: str) -> None:
    """Skip on a laptop without Java/Maven; in CI the real tool is required, so fail."""
    import pytest  # here: a process that only compiles or reads the cache does without pytest's imports

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
    """Compile tests/kafka/<source> into the cache (keyed by its text and the classpath) and return the class
    dir. Under javac/, not classes/ where entries were compiled in place (a concurrent or killed run could
    leave one incomplete)."""
    text = (HERE / source).read_bytes()
    out = cache_dir() / "javac" / hashlib.sha1(text + classpath.encode()).hexdigest()[:12]
    return compiled_classes(out, [HERE / source], classpath)


@dataclass(frozen=True)
class Outcome:
    stdout: str
    stderr: str
    exit_code: int


def run_dump_log_segments(release: str, runs: list[list[str]], warmup: list[str],
                          restore: tuple[Path, Path] | None = None, root: Path | None = None) -> Sequence[Outcome]:
    """Every run of ``runs`` through the release's DumpLogSegments in one JVM.

    ``restore`` = (pristine, work): the files of ``work`` are copied back from ``pristine`` before
    every run and after the last, since some releases rewrite what they dump.

    ``warmup`` is run first and dropped: it absorbs the logging framework's one-time start-up
    notices, which kafka-dump-log.sh's log4j configuration keeps off the console.

    ``root``: the directory every input lies under (``work`` when restoring; best a ``corpus_dir``).
    Then the outcomes are kept in the jar cache, keyed by the release's jars, the JDK, DumpRunner.java,
    the command lines and every byte under ``root``, so a later session with the same inputs reads them
    instead of starting the JVM (see ``_cached``).
    """
    lib = kafka_lib(release)
    classes = compiled("DumpRunner.java", f"{lib}/*")
    for run in [warmup, *runs]:
        assert not any("\t" in arg or "\n" in arg for arg in run), run
    if root is None:
        return _run_dump_runner(release, lib, classes, [warmup, *runs], restore)
    return _cached(release, lib, [warmup, *runs], (restore or (root, root))[0],
                   lambda: _run_dump_runner(release, lib, classes, [warmup, *runs], restore))


def _run_dump_runner(release: str, lib: Path, classes: Path, runs: list[list[str]],
                     restore: tuple[Path, Path] | None) -> list[Outcome]:
    """The outcomes of ``runs[1:]`` (``runs[0]`` is the warm-up) from one DumpRunner JVM."""
    with tempfile.TemporaryDirectory(prefix="kdump-real-") as tmp:
        requests = Path(tmp) / "requests"
        requests.write_text("".join("\t".join(run) + "\n" for run in runs), encoding="utf-8")
        out = Path(tmp) / "out"
        subprocess.run(["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx384m",
                        *jvm_temp_flags(), "-cp", f"{lib}/*:{classes}",
                        "DumpRunner", tool_class(release), str(requests), str(out),
                        *([str(restore[0]), str(restore[1])] if restore else [])],
                       check=True, capture_output=True, timeout=600)
        return [Outcome((out / f"{i}.out").read_bytes().decode("utf-8"),
                        (out / f"{i}.err").read_bytes().decode("utf-8"),
                        int((out / f"{i}.rc").read_text()))
                for i in range(1, len(runs))]


def _cached(release: str, lib: Path, runs: list[list[str]], content: Path,
            compute: Callable[[], list[Outcome]]) -> Sequence[Outcome]:
    """``compute()``, or what it returned in an earlier session for the same key: the jars (their
    directory's name holds the release and fetch.sh's key), the JDK's path, DumpRunner.java, the runs
    and every file under ``content`` (relative path and bytes). The paths stay in the key: the tool walks
    its summaries in hash-map order of the paths, so ``root`` should be the same in every session
    (``corpus_dir``)."""
    digest = hashlib.sha256()
    java = shutil.which("java") or "java"
    for part in (lib.parent.name, os.path.realpath(java), (HERE / "DumpRunner.java").read_text(encoding="utf-8"),
                 json.dumps(runs)):
        digest.update(part.encode() + b"\x00")
    for path in sorted(p for p in content.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(content)).encode() + b"\x00" + path.read_bytes() + b"\x00")
    entry = cache_dir() / "dump-results" / release / f"{digest.hexdigest()[:32]}.gz"
    if entry.exists():
        # One JSON line of [stdout bytes, stderr bytes, exit code] per run, then those bytes.
        header, _, data = gzip.decompress(entry.read_bytes()).partition(b"\n")
        return CachedOutcomes(json.loads(header), data)
    outcomes = compute()
    parts = [(o.stdout.encode("utf-8"), o.stderr.encode("utf-8"), o.exit_code) for o in outcomes]
    entry.parent.mkdir(parents=True, exist_ok=True)
    partial = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
    partial.write_bytes(gzip.compress(json.dumps([(len(out), len(err), code) for out, err, code in parts]).encode()
                                      + b"\n" + b"".join(out + err for out, err, _ in parts), compresslevel=5))
    partial.replace(entry)
    return outcomes


class CachedOutcomes(Sequence[Outcome]):
    """The outcomes of a cached run, each decoded when asked for. A release's outputs are ~100 MiB of
    UTF-8 that take 2-4 times that as ``str``: held as one ``bytes``, the test process stays small, and
    every ``fork`` it makes (kdump's ``--jobs`` workers, one pair per dump of a directory) copies fewer
    page tables (those copies were most of the real-dump tests' system time)."""

    def __init__(self, lengths: list[tuple[int, int, int]], data: bytes) -> None:
        self._data = data
        self._spans: list[tuple[int, int, int, int]] = []
        at = 0
        for out_len, err_len, code in lengths:
            self._spans.append((at, out_len, err_len, code))
            at += out_len + err_len

    def __len__(self) -> int:
        return len(self._spans)

    @overload
    def __getitem__(self, index: int) -> Outcome: ...

    @overload
    def __getitem__(self, index: slice) -> list[Outcome]: ...

    def __getitem__(self, index: int | slice) -> Outcome | list[Outcome]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        at, out_len, err_len, code = self._spans[index]
        data = self._data
        return Outcome(data[at:at + out_len].decode("utf-8"), data[at + out_len:at + out_len + err_len].decode("utf-8"),
                       code)


_LOCKS: list[object] = []


def corpus_dir(name: str) -> Path:
    """An empty directory for inputs of the real tool, outside the repository and the temp dir, at the
    same path in every session (``<cache>/corpus/<name>``, so ``_cached`` can find earlier outcomes),
    held with a lock for this process and removed when it exits. A session running beside another
    gets ``<name>-<pid>`` (and no cached outcomes). Each pytest-xdist worker has its own,
    ``<name>-gw<N>``, as stable across sessions as the worker's number."""
    base = cache_dir() / "corpus"
    base.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    for candidate in (f"{name}-{worker}" if worker else name, f"{name}-{os.getpid()}"):
        lock = (base / f"{candidate}.lock").open("w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        _LOCKS.append(lock)
        path = base / candidate
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir()
        atexit.register(shutil.rmtree, path, ignore_errors=True)
        if candidate != name:
            atexit.register(os.unlink, lock.name)
        return path
    raise AssertionError("unreachable: the pid-named lock is this process's own")


class JavaUtf8:
    """``new String(bytes, StandardCharsets.UTF_8)`` computed by the JDK: one process, many questions."""

    def __init__(self) -> None:
        require_java()
        classes = compiled("JavaUtf8.java")
        self._process = subprocess.Popen(["java", *jvm_temp_flags(), "-cp", str(classes), "JavaUtf8"], stdin=subprocess.PIPE,
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
