"""A real KRaft cluster for tests: one dedicated controller and three brokers on 127.0.0.1.

The controller keeps the quorum while brokers are stopped, killed and restarted one at a time (with
three combined nodes, stopping two loses it). Every node is a tests/kafka/broker.py Broker (one way to
start a Kafka JVM, one jar cache); the brokers log at INFO so a test can await and read the replica
fetcher's own lines (`Truncating partition ... with TruncationState(offset=N, ...)`). One admin and
producer client, tests/kafka/producer/ClusterDriver.java, runs for the cluster's lifetime and answers
one command per line, so waiting on metadata costs no JVM start. Every wait is bounded.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from broker import (
    _JVM_FLAGS,
    _SERVER_DEFAULTS,
    HERE,
    Broker,
    BrokerError,
    _die_with_parent,
    driver_classes,
    free_port,
    jvm_temp_flags,
)

CLUSTER_DRIVER = HERE / "producer" / "ClusterDriver.java"
# The newest release and the last 3.x line.
CLUSTER_RELEASES = ("4.4.0", "3.9.2")
CONTROLLER_ID = 9
BROKER_IDS = (1, 2, 3)
# Settings that keep each step deterministic: no leader moves but the ones a test asks for, the high
# watermark checkpointed often (a SIGKILLed leader's replication-offset-checkpoint is then current), and
# retention checked every second.
_CLUSTER_SETTINGS = {
    "auto.leader.rebalance.enable": "false",
    "replica.high.watermark.checkpoint.interval.ms": "500",
    "log.retention.check.interval.ms": "1000",
    "default.replication.factor": "3",
    "min.insync.replicas": "1",
}


@dataclass
class Node(Broker):
    """A cluster node: the controller (`controller is None`) or a broker of `controller`'s quorum."""

    node_id: int = 0
    controller: Node | None = None
    # A second log dir (JBOD) from a restart on (Cluster.add_log_dir). Every broker's spare dir is formatted
    # with its first dir (one StorageTool run), but a broker given two dirs from the start spreads its
    # partitions over both (LogManager.nextLogDirs picks the dir holding the fewest), and every per-dir
    # checkpoint a case reads would move with them: log.dirs names the spare only once it is added.
    second_dir: Path | None = None
    log_level = "INFO"
    _formatting: bool = False

    @property
    def spare_dir(self) -> Path:
        return self.log_dir.with_name(self.log_dir.name + "-dir2")

    def _format_storage(self, timeout: float) -> None:
        self._formatting = self.controller is not None
        self._write_properties()
        try:
            super()._format_storage(timeout)
        finally:
            self._formatting = False
            self._write_properties()

    @property
    def voters(self) -> str:
        controller = self.controller or self
        return f"{CONTROLLER_ID}@127.0.0.1:{controller.controller_port}"

    def _pick_ports(self) -> None:
        if self.controller is None:  # the quorum's address never changes
            self.controller_port = self.controller_port or free_port()
            self.port = self.controller_port
        else:
            self.port, self.controller_port = free_port(), self.controller.controller_port

    def _write_properties(self) -> None:
        config = {**_SERVER_DEFAULTS, **_CLUSTER_SETTINGS}
        config.update({"node.id": str(self.node_id), "controller.quorum.voters": self.voters,
                       "log.dirs": ",".join(str(d) for d in (self.log_dir, self.second_dir) if d is not None)})
        if self._formatting:
            config["log.dirs"] = f"{self.log_dir},{self.spare_dir}"
        if self.controller is None:
            del config["inter.broker.listener.name"]
            config.update({"process.roles": "controller", "listeners": f"CONTROLLER://127.0.0.1:{self.port}"})
        else:
            config.update({"process.roles": "broker", "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
                           "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}"})
        config.update(self.extra_config)
        self.properties_path.write_text("".join(f"{key}={value}\n" for key, value in config.items()))

    def output(self) -> str:
        return self.output_path.read_text(errors="replace") if self.output_path.exists() else ""


@dataclass
class Partition:
    """One partition as the admin client describes it."""

    leader: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]


def _ids(text: str) -> tuple[int, ...]:
    return () if text == "-" else tuple(int(x) for x in text.split(","))


@dataclass
class Cluster:
    lib: Path
    release: str
    root: Path
    controller: Node = field(init=False)
    brokers: dict[int, Node] = field(init=False)
    _driver: subprocess.Popen[bytes] | None = None
    _pending: bytes = b""
    _marks: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.controller = Node(self.lib, self.root / "controller", self.root / "work-controller", self.release,
                               node_id=CONTROLLER_ID)
        self.brokers = {
            n: Node(self.lib, self.root / f"broker-{n}", self.root / f"work-{n}", self.release, node_id=n,
                    controller=self.controller)
            for n in BROKER_IDS
        }

    # ----- processes -----
    def start(self) -> Cluster:
        self.controller.start()
        for n in BROKER_IDS:
            self.brokers[n].start()
        self.wait_brokers(BROKER_IDS)
        return self

    def running(self) -> list[int]:
        return [n for n, b in self.brokers.items() if b.process is not None]

    def start_broker(self, n: int) -> None:
        self.brokers[n].start()
        self.wait_brokers(tuple(sorted(self.running())))

    def stop_broker(self, n: int) -> None:
        """Clean shutdown: the broker leaves the ISRs, moves its leaderships and flushes."""
        self.brokers[n].stop(timeout=60)

    def kill_broker(self, n: int) -> None:
        self.brokers[n].kill()

    def stop_all(self) -> None:
        for n in self.running():
            self.stop_broker(n)

    def close(self) -> None:
        """Everything stopped (teardown): driver, brokers, controller."""
        self._stop_driver()
        for node in (*self.brokers.values(), self.controller):
            try:
                node.stop(timeout=30)
            except BrokerError:
                pass  # stop() already killed it

    def copy_log_dirs(self, dest: Path) -> Path:
        """dest/broker-N (and dest/broker-N-dir2 for a second log dir): every broker's log dirs, copied
        while every broker is stopped."""
        if self.running():
            raise BrokerError(f"brokers {self.running()} still running; copies are taken with all stopped")
        for n, broker in self.brokers.items():
            broker.copy_log_dir(dest / f"broker-{n}")
            if broker.second_dir is not None:
                shutil.copytree(broker.second_dir, dest / f"broker-{n}-dir2", symlinks=True)
        return dest

    def add_log_dir(self, n: int, **config: str) -> Path:
        """Give stopped broker n a second, empty log dir (and static settings) from its next start on."""
        broker = self.brokers[n]
        if broker.process is not None:
            raise BrokerError(f"broker {n} is running")
        if not (broker.spare_dir / "meta.properties").exists():
            raise BrokerError(f"broker {n}'s spare log dir {broker.spare_dir} was not formatted")
        broker.second_dir = broker.spare_dir
        broker.extra_config.update(config)
        return broker.second_dir

    # ----- the admin and producer client -----
    @property
    def bootstrap(self) -> str:
        return ",".join(self.brokers[n].bootstrap for n in self.running())

    def call(self, *args: object, timeout: float = 60) -> list[str]:
        """One ClusterDriver command against the running brokers; its result lines (raises on error)."""
        if self._driver is None or self._driver.poll() is not None:
            classes = driver_classes(self.lib, source=CLUSTER_DRIVER)
            with open(self.root / "driver.err", "ab") as err:
                self._driver = subprocess.Popen(
                    ["java", *_JVM_FLAGS, *jvm_temp_flags(), "-cp", f"{classes}:{self.lib}/*", "ClusterDriver"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                    preexec_fn=_die_with_parent,
                )
        assert self._driver.stdin is not None and self._driver.stdout is not None
        self._driver.stdin.write((" ".join(str(a) for a in (self.bootstrap, *args)) + "\n").encode())
        self._driver.stdin.flush()
        lines: list[str] = []
        fd = self._driver.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            # Whole lines from the pipe's raw bytes (a buffered reader would hide lines from select).
            while b"\n" in self._pending:
                raw, self._pending = self._pending.split(b"\n", 1)
                line = raw.decode()
                if line == "ok":
                    return lines
                if line.startswith("error "):
                    raise BrokerError(f"ClusterDriver {args}: {line}")
                lines.append(line)
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self._stop_driver()
                raise BrokerError(f"ClusterDriver {args} gave no answer within {timeout}s")
            chunk = os.read(fd, 65536)
            if not chunk:
                self._stop_driver()
                raise BrokerError(f"ClusterDriver {args}: exited")
            self._pending += chunk

    def _stop_driver(self) -> None:
        if self._driver is not None:
            self._driver.kill()
            self._driver.wait(10)
            for pipe in (self._driver.stdin, self._driver.stdout):
                if pipe is not None:
                    pipe.close()
            self._driver, self._pending = None, b""

    def wait_for(self, what: str, condition: Callable[[], object], timeout: float = 60) -> object:
        """Poll `condition` (a metadata query) until it returns something truthy, at most `timeout` s."""
        deadline = time.monotonic() + timeout
        error: BrokerError | None = None
        while True:
            try:
                result = condition()
            except BrokerError as exc:
                result, error = None, exc  # e.g. metadata not yet propagated after a restart
            if result:
                return result
            if time.monotonic() > deadline:
                raise BrokerError(f"timed out after {timeout}s waiting for {what} (last error: {error})")
            time.sleep(0.25)

    def wait_brokers(self, ids: tuple[int, ...], timeout: float = 60) -> None:
        def registered() -> bool:
            line = self.call("brokers")[0]
            return set(_ids(line.split()[1])) == set(ids)

        self.wait_for(f"brokers {ids} registered and unfenced", registered, timeout)

    def create_topic(self, topic: str, assignment: list[tuple[int, ...]], **configs: str) -> None:
        spec = "/".join(",".join(map(str, replicas)) for replicas in assignment)
        conf = ";".join(f"{k.replace('_', '.')}={v}" for k, v in configs.items()) or "-"
        self.call("create", topic, spec, conf)
        self.wait_for(f"{topic} has leaders", lambda: all(p.leader >= 0 for p in self.describe(topic).values()))

    def segment_config(self, size: int) -> dict[str, str]:
        """A small segment size: Kafka 4 refuses segment.bytes below 1 MiB, its test-only
        internal.segment.bytes takes any."""
        key = "internal_segment_bytes" if int(self.release.split(".")[0]) >= 4 else "segment_bytes"
        return {key: str(size)}

    def describe(self, topic: str) -> dict[int, Partition]:
        out = {}
        for line in self.call("describe", topic):
            w = line.split()  # partition P leader L isr A,B replicas A,B,C
            out[int(w[1])] = Partition(int(w[3]), _ids(w[5]), _ids(w[7]))
        return out

    def wait_partition(self, topic: str, partition: int, what: str, check: Callable[[Partition], bool],
                       timeout: float = 60) -> Partition:
        result = self.wait_for(f"{topic}-{partition}: {what}",
                               lambda: p if check(p := self.describe(topic)[partition]) else None, timeout)
        assert isinstance(result, Partition)
        return result

    def produce(self, topic: str, partition: int, count: int, acks: str, tag: str) -> tuple[int, int]:
        """`count` records acknowledged with `acks`; the first and last offset the broker gave them."""
        w = self.call("produce", topic, partition, count, acks, tag, timeout=90)[-1].split()
        return int(w[1]), int(w[2])

    def elect(self, kind: str, topic: str, partition: int) -> None:
        self.call("elect", kind, topic, partition)

    def offsets(self, topic: str, partition: int) -> tuple[int, int]:
        w = self.call("offsets", topic, partition)[0].split()
        return int(w[1]), int(w[2])

    # ----- what a broker did -----
    def mark_logs(self) -> None:
        """From now on log_lines() reads only what the brokers log after this point."""
        self._marks = {n: len(b.output()) for n, b in self.brokers.items()}

    def log_lines(self, n: int, pattern: str) -> list[re.Match[str]]:
        return list(re.finditer(pattern, self.brokers[n].output()[self._marks.get(n, 0):]))

    def wait_log(self, n: int, pattern: str, timeout: float = 60) -> re.Match[str]:
        found = self.wait_for(f"broker {n} logs /{pattern}/", lambda: self.log_lines(n, pattern), timeout)
        assert isinstance(found, list)
        return found[-1]


def partition_dir(log_dir: Path, topic: str, partition: int) -> Path:
    return log_dir / f"{topic}-{partition}"


def read_checkpoint(path: Path) -> list[list[str]]:
    """A Kafka text checkpoint file (version, count, entries) as its entry lines split on spaces; []
    for a missing or empty file (a broker killed soon after start leaves 0-byte ones)."""
    if not path.exists() or path.stat().st_size == 0:
        return []
    lines = path.read_text().splitlines()
    return [line.split() for line in lines[2 : 2 + int(lines[1])]]


def leader_epochs(log_dir: Path, topic: str, partition: int) -> list[tuple[int, int]]:
    """The replica's leader-epoch-checkpoint as (epoch, start offset) pairs."""
    rows = read_checkpoint(partition_dir(log_dir, topic, partition) / "leader-epoch-checkpoint")
    return [(int(e), int(o)) for e, o in rows]


def high_watermark(log_dir: Path, topic: str, partition: int) -> int | None:
    for row in read_checkpoint(log_dir / "replication-offset-checkpoint"):
        if row[0] == topic and int(row[1]) == partition:
            return int(row[2])
    return None

