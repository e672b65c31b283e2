"""A real single-node KRaft Kafka broker for tests, started from a release's jars (tests/kafka/fetch.sh).

The broker listens on 127.0.0.1 only, on free ports picked at start, and keeps its data in a log dir the
caller owns, so a test can stop it (SIGTERM, or kill -9 to leave a crashed dir), copy the dir, and start
another broker on the copy. Every wait is bounded, and the JVM dies with the Python process that started
it (PR_SET_PDEATHSIG), so a broker never outlives the test session.

Also runs the Java producer/consumer driver (tests/kafka/producer/KafkaDriver.java) on the same
classpath, compiled once per source and release into the jar cache (never into the repository).
"""

from __future__ import annotations

import base64
import ctypes
import hashlib
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from javac_cache import JavacError, compiled_classes
from jvm_archive import ClasspathArchive, run_writing_archive

HERE = Path(__file__).resolve().parent
FETCH = HERE / "fetch.sh"
DRIVER = HERE / "producer" / "KafkaDriver.java"
# Releases the broker tests run against: the newest, and the last 3.x line (KRaft, Scala tools, reload4j).
RELEASES = ("4.4.0", "3.9.2")
# `kdump recover` is also checked against an older 3.x broker (LogLoader.scala of 3.3); its jars are
# those tests/kafka/releases.txt already fetches for DumpLogSegments.
RECOVER_RELEASES = (*RELEASES, "3.3.2")
# Kafka 4.x logs through log4j2 but ships without an slf4j binding in its Maven dependencies.
_LOGGING_EXTRAS = {"4": ("org.apache.logging.log4j:log4j-slf4j-impl:2.25.4",)}
# A fixed cluster id (any 16 bytes, base64url without padding) so regenerated fixtures differ less.
CLUSTER_ID = base64.urlsafe_b64encode(b"kdump-real-brokr").decode().rstrip("=")
NODE_ID = 1
_JVM_FLAGS = ("-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")


def jvm_temp_flags() -> list[str]:
    """Java's temp dir where Python's is (tests/conftest.py puts it under the session's basetemp): a JVM
    extracts native libraries there (snappy-java, zstd-jni) and a killed JVM never deletes them. No
    /tmp/hsperfdata_<user>/<pid> file either (a killed JVM leaves that one too)."""
    return [f"-Djava.io.tmpdir={tempfile.gettempdir()}", "-XX:-UsePerfData"]


class BrokerError(RuntimeError):
    """The broker or a tool did not do what was asked within its time bound."""


def fetch_jars(release: str, timeout: float = 900, extras: tuple[str, ...] = ()) -> Path:
    """The lib dir (classpath DIR/*) holding `release`'s broker, tools and client jars (and `extras`)."""
    extras = (*_LOGGING_EXTRAS.get(release.split(".")[0], ()), *extras)
    proc = subprocess.run(
        ["bash", str(FETCH), release, *extras], capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        raise BrokerError(f"fetch.sh {release} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return Path(proc.stdout.strip().splitlines()[-1])


_LISTEN_PORTS = (20000, 32767)
"""Below Linux's ephemeral range (32768-60999, net.ipv4.ip_local_port_range): a port the kernel hands out for
bind(0) is also the source port of every outgoing connection, so one picked there can be taken by a client's
socket before the JVM binds it (a CI run lost a tiered broker's start to that: "Address already in use")."""


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now, outside the ephemeral range where one can be found."""
    rng = random.Random()
    for _ in range(200):
        port = rng.randint(*_LISTEN_PORTS)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: default signal dispositions and an empty signal mask (a
    # signal the test runner ignores or blocks would stay so across exec), and SIGKILL the JVM when the
    # Python process exits.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


# Small segments and a dense, small index so a few hundred KiB of records roll several segments and the
# preallocated index files of active segments stay small. No flush.messages: the broker flushes as
# it would in production (on roll and on clean shutdown).
_SERVER_DEFAULTS = {
    "process.roles": "broker,controller",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    "num.partitions": "1",
    "default.replication.factor": "1",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "1",
    "offsets.topic.segment.bytes": "1048576",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "1",
    "transaction.state.log.segment.bytes": "1048576",
    "log.segment.bytes": "1048576",
    "log.index.size.max.bytes": "4096",
    "log.index.interval.bytes": "512",
    "group.initial.rebalance.delay.ms": "0",
    # A restart after kill -9 waits for the old incarnation's session to expire (9 s by default).
    "broker.session.timeout.ms": "2000",
    "broker.heartbeat.interval.ms": "500",
    # The controller writes a metadata snapshot (.checkpoint) after this many bytes of metadata records.
    "metadata.log.max.record.bytes.between.snapshots": "4096",
    "auto.create.topics.enable": "false",
    "num.network.threads": "2",
    "num.io.threads": "2",
    "num.recovery.threads.per.data.dir": "1",
    "log.cleaner.threads": "1",
    "log.cleaner.backoff.ms": "200",
    "log.cleaner.min.compaction.lag.ms": "0",
    "log.flush.offset.checkpoint.interval.ms": "1000",
    "log.flush.start.offset.checkpoint.interval.ms": "1000",
    "log.flush.recovery.point.checkpoint.interval.ms": "1000",
}


@dataclass
class Broker:
    """One broker process on `log_dir`; `start()` formats the dir first when it is empty."""

    lib: Path
    log_dir: Path
    work_dir: Path
    release: str
    extra_config: dict[str, str] = field(default_factory=dict)
    port: int = 0
    controller_port: int = 0
    process: subprocess.Popen[bytes] | None = None
    # The root log level of broker.out; the cluster tests read the INFO lines of the replica fetcher.
    log_level = "WARN"

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def properties_path(self) -> Path:
        return self.work_dir / "server.properties"

    @property
    def output_path(self) -> Path:
        return self.work_dir / "broker.out"

    def _write_properties(self) -> None:
        config = dict(_SERVER_DEFAULTS)
        config.update(
            {
                "node.id": str(NODE_ID),
                "controller.quorum.voters": f"{NODE_ID}@127.0.0.1:{self.controller_port}",
                "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
                "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
                "log.dirs": str(self.log_dir),
            }
        )
        config.update(self.extra_config)
        self.properties_path.write_text("".join(f"{key}={value}\n" for key, value in config.items()))

    def _logging_flags(self) -> list[str]:
        # Warnings and errors to broker.out (read on failures); Kafka 4 logs via log4j2, 3.x via reload4j.
        if int(self.release.split(".")[0]) >= 4:
            config = self.work_dir / "log4j2.properties"
            config.write_text(
                "appender.out.type=Console\nappender.out.name=OUT\nappender.out.layout.type=PatternLayout\n"
                f"appender.out.layout.pattern=[%d] %p %m (%c)%n\nrootLogger.level={self.log_level}\n"
                "rootLogger.appenderRef.out.ref=OUT\n"
            )
            return [f"-Dlog4j2.configurationFile={config}"]
        config = self.work_dir / "log4j.properties"
        config.write_text(
            f"log4j.rootLogger={self.log_level}, out\nlog4j.appender.out=org.apache.log4j.ConsoleAppender\n"
            "log4j.appender.out.layout=org.apache.log4j.PatternLayout\n"
            "log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n\n"
        )
        return [f"-Dlog4j.configuration=file:{config}"]

    def _java(self, main: str, *args: str, cds: list[str] | None = None) -> list[str]:
        """The command for ``main``: with the classpath's archive if it has one, or ``cds`` flags."""
        classpath = f"{self.lib}/*"
        cds = ClasspathArchive(classpath).flags() if cds is None else cds
        return ["java", *_JVM_FLAGS, *jvm_temp_flags(), *cds, *self._logging_flags(), "-cp", classpath, main, *args]

    def _format_storage(self, timeout: float) -> None:
        # StorageTool exits by itself: its first run writes the class-data archive the broker then uses.
        proc = run_writing_archive(
            f"{self.lib}/*",
            lambda cds: self._java("kafka.tools.StorageTool", "format", "-t", CLUSTER_ID, "-c",
                                   str(self.properties_path), cds=cds),
            capture_output=True, text=True, timeout=timeout, check=False)
        if proc.returncode != 0:
            raise BrokerError(f"StorageTool format failed ({proc.returncode}): {proc.stdout}{proc.stderr}")

    def start(self, timeout: float = 90) -> Broker:
        """Format the log dir if it has no meta.properties, start the broker, wait until it serves."""
        if self.process is not None:
            raise BrokerError("broker already running")
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for attempt in range(3):
            self._pick_ports()
            self._write_properties()
            if not (self.log_dir / "meta.properties").exists():
                self._format_storage(timeout)
            start = self.output_path.stat().st_size if self.output_path.exists() else 0
            with open(self.output_path, "ab") as out:
                self.process = subprocess.Popen(
                    self._java("kafka.Kafka", str(self.properties_path)),
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    preexec_fn=_die_with_parent,
                )
            try:
                self._wait_serving(timeout)
                return self
            except BrokerError:
                # Another process took a port between the pick and the JVM's bind: new ports, once more.
                lost_port = "Address already in use" in self.output_path.read_text(errors="replace")[start:]
                if not lost_port or attempt == 2 or (self.process is not None and self.process.poll() is None):
                    raise
                self.process = None
        raise AssertionError("unreachable")

    def _pick_ports(self) -> None:
        # New ports on every start: a restarted broker must not wait for the old one's sockets.
        self.port, self.controller_port = free_port(), free_port()

    def _wait_serving(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                raise BrokerError(f"broker exited during start:\n{self.output_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        self.kill()
        raise BrokerError(f"broker did not listen on {self.bootstrap} within {timeout}s:\n{self.output_tail()}")

    def stop(self, timeout: float = 60) -> int:
        """Clean shutdown (SIGTERM): the broker flushes, trims indexes and writes its checkpoints."""
        if self.process is None:
            return 0
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
            self.process = None
            raise BrokerError(f"broker did not stop within {timeout}s; killed:\n{self.output_tail()}") from None
        self.process = None
        return code

    def kill(self) -> None:
        """kill -9: no flush, no index trim, no clean-shutdown marker; what a crash leaves."""
        if self.process is None:
            return
        self.process.kill()
        self.process.wait(30)
        self.process = None

    def output_tail(self, chars: int = 4000) -> str:
        try:
            return self.output_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def copy_log_dir(self, dest: Path) -> Path:
        """A copy of the log dir (call it while the broker is stopped or killed)."""
        shutil.copytree(self.log_dir, dest, symlinks=True)
        return dest

    def on(self, log_dir: Path, work_dir: Path) -> Broker:
        """A new, not yet started broker of the same release on another (e.g. copied) log dir."""
        return Broker(self.lib, log_dir, work_dir, self.release, dict(self.extra_config))


def driver_classes(lib: Path, timeout: float = 120, source: Path | tuple[Path, ...] = DRIVER) -> Path:
    """KafkaDriver.java (or `source`, one file or several compiled together) compiled against `lib`, cached
    beside the jars under a hash of the sources."""
    sources = (source,) if isinstance(source, Path) else source
    # NUL is in no Java source, so the joined texts tell the files apart (one file hashes as it always did).
    digest = hashlib.sha1(b"\0".join(path.read_bytes() for path in sources) + str(lib).encode()).hexdigest()[:12]
    try:
        return compiled_classes(lib.parent / f"driver-{digest}", sources, f"{lib}/*", timeout)
    except JavacError as err:
        raise BrokerError(str(err)) from None


def driver_jar(lib: Path) -> Path:
    """KafkaDriver's classes (``driver_classes``) in a jar: a class-data archive (jvm_archive.py) cannot
    be made of a classpath with a non-empty directory in it."""
    classes = driver_classes(lib)
    jar = classes.with_suffix(".jar")
    if not jar.exists():
        tmp = jar.with_name(f"{jar.name}.tmp{os.getpid()}")
        with zipfile.ZipFile(tmp, "w") as out:
            for path in sorted(classes.rglob("*.class")):
                out.write(path, path.relative_to(classes).as_posix())
        os.replace(tmp, jar)
    return jar


def _driver_command(lib: Path, args: tuple[str, ...], cds: list[str] | None = None) -> list[str]:
    classpath = f"{driver_jar(lib)}:{lib}/*"
    cds = ClasspathArchive(classpath).flags() if cds is None else cds
    return ["java", *_JVM_FLAGS, *jvm_temp_flags(), *cds, "-cp", classpath, "KafkaDriver", *args]


def run_driver(lib: Path, *args: str, timeout: float = 240) -> str:
    """Run the driver (tests/kafka/producer/KafkaDriver.java) with `args`; return its stdout (raises on failure)."""
    proc = run_writing_archive(f"{driver_jar(lib)}:{lib}/*", lambda cds: _driver_command(lib, args, cds),
                               capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise BrokerError(f"driver {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout


def run_driver_source(lib: Path, sources: tuple[Path, ...], *args: str, timeout: float = 300) -> str:
    """Run the driver class of ``sources[0]`` (a file under tests/kafka/producer, its class named after the
    file; the other sources compiled with it) on ``lib``'s classpath with ``args``; return its stdout (raises
    on failure)."""
    main = sources[0].stem
    classpath = f"{driver_classes(lib, source=sources)}:{lib}/*"
    proc = subprocess.run(["java", *_JVM_FLAGS, *jvm_temp_flags(), "-cp", classpath, main, *args],
                          capture_output=True, text=True, timeout=timeout, check=False, preexec_fn=_die_with_parent)
    if proc.returncode != 0:
        raise BrokerError(f"{main} {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n"
                          f"{proc.stderr[-3000:]}")
    return proc.stdout


def start_driver(lib: Path, *args: str) -> subprocess.Popen[str]:
    """Start the driver in the background (e.g. a producer running while a test reads the log dir)."""
    cmd = _driver_command(lib, args)
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_die_with_parent
    )


if __name__ == "__main__":
    # `python3 tests/kafka/broker.py fetch`: fetch every tested release's jars ahead of the tests (CI).
    import sys

    if sys.argv[1:] != ["fetch"]:
        sys.exit("usage: broker.py fetch")
    for name in RELEASES:
        print(fetch_jars(name))
