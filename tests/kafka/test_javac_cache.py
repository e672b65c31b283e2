"""The compiled-Java cache entries of the real-Kafka tests on a cold cache: xdist workers (and parallel runs)
compile the same source at once, and each must find the entry complete and untouched by the others. A
fresh machine's README test run once failed there (javac exited 2 while other workers compiled into the
same directory); compiling in place, a process could even be handed an empty class file."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# Each process says it is ready, waits for the word to start (all four at once), compiles, then lists the
# entry it got: (name, size, mtime).
_COMPILE = """
import json, sys
import real_kafka
print("ready", flush=True)
sys.stdin.readline()
out = real_kafka.compiled("JavaUtf8.java")
seen = {p.name: [p.stat().st_size, p.stat().st_mtime_ns] for p in sorted(out.iterdir())}
print(json.dumps([str(out), seen]))
"""


def _listing(out: Path) -> dict[str, list[int]]:
    return {p.name: [p.stat().st_size, p.stat().st_mtime_ns] for p in sorted(out.iterdir())}


@pytest.mark.skipif(shutil.which("javac") is None, reason="javac not on PATH: nothing to compile with")
def test_four_processes_compile_into_a_cold_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {**os.environ, "KDUMP_KAFKA_CACHE": str(cache), "PYTHONPATH": str(HERE)}
    procs = [subprocess.Popen([sys.executable, "-c", _COMPILE], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    for proc in procs:       # every process imported and waiting (a bounded wait)
        assert proc.stdout is not None and select.select([proc.stdout], [], [], 60)[0], "no ready line in 60 s"
        assert proc.stdout.readline() == "ready\n"
    results = []
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
        results.append(json.loads(out))
    entries = {entry for entry, _ in results}
    assert len(entries) == 1
    entry = Path(entries.pop())
    assert sorted(_listing(entry)) == [".complete", "JavaUtf8.class"]
    # every process got the entry as it is now: none was written into after another had returned it
    assert [seen for _, seen in results] == [_listing(entry)] * 4
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]    # no private directory left behind
