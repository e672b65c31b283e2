"""A real Spark standalone cluster on 127.0.0.1: one master and N one-core workers, from pyspark's own jars.

pyspark's pip package has no sbin/start-master.sh, so the daemons are started the way that script
does it underneath: ``bin/spark-class org.apache.spark.deploy.master.Master`` (and ``...worker.Worker``),
which execs the JVM. Each daemon gets port 0 (the OS picks a free one), its own temporary work
directory and its own process group, so stopping the group also ends the executors a worker forked.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

_MASTER_URL = re.compile(r"Starting Spark master at (spark://[\w.]+:\d+)")
_REGISTERED = re.compile(r"Successfully registered with master")


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


@dataclass
class Cluster:
    workdir: Path
    workers: int = 2
    url: str = ""
    processes: list[subprocess.Popen] = field(default_factory=list)

    def _daemon(self, name: str, args: list[str]) -> tuple[subprocess.Popen, Path]:
        log = self.workdir / f"{name}.log"
        env = dict(os.environ, SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP="127.0.0.1",
                   SPARK_LOG_DIR=str(self.workdir), SPARK_WORKER_DIR=str(self.workdir / f"{name}-work"),
                   PYSPARK_PYTHON=sys.executable,
                   SPARK_DAEMON_JAVA_OPTS="-XX:+UseSerialGC -XX:TieredStopAtLevel=1", SPARK_DAEMON_MEMORY="256m")
        with open(log, "wb") as out:
            proc = subprocess.Popen([str(spark_home() / "bin" / "spark-class"), *args], env=env, stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        self.processes.append(proc)
        return proc, log

    def start(self, timeout: float = 120) -> Cluster:
        master, log = self._daemon("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                              "--port", "0", "--webui-port", "0"])
        self.url = _wait_for(log, _MASTER_URL, master, timeout).group(1)
        for i in range(self.workers):
            worker, wlog = self._daemon(f"worker{i}", [
                "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", "0",
                "--webui-port", "0", "--cores", "1", "--memory", "1g",
                "--work-dir", str(self.workdir / f"worker{i}-work"), self.url])
            _wait_for(wlog, _REGISTERED, worker, timeout)
        return self

    def stop(self) -> None:
        """SIGTERM each daemon's process group (a worker's executors are in it), SIGKILL what stays."""
        for proc in reversed(self.processes):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for proc in reversed(self.processes):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
            _kill_group_leftovers(proc.pid)

    def alive_group_members(self) -> list[int]:
        """Pids still running in any of the daemons' process groups (empty after a clean stop)."""
        return [pid for proc in self.processes for pid in _group_members(proc.pid)]


def _wait_for(log: Path, pattern: re.Pattern[str], proc: subprocess.Popen, timeout: float) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = pattern.search(log.read_text(errors="replace"))
        if found:
            return found
        if proc.poll() is not None:
            raise RuntimeError(f"{log.name} exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.25)
    raise TimeoutError(f"{log.name}: no {pattern.pattern!r} within {timeout} s:\n"
                       f"{log.read_text(errors='replace')[-3000:]}")


def _group_members(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append(int(entry.name))
    return members


def _kill_group_leftovers(pgid: int) -> None:
    if _group_members(pgid):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
