"""A real Kafka 4.3.0 broker with tiered storage (KIP-405) and the scenario the tiered tests read.

The remote store is Kafka's reference ``LocalTieredStorage`` (kafka-storage 4.3.0 test jar, fetched as an
extra of tests/kafka/fetch.sh), the metadata manager the topic-based one. The scenario: round 0 (plain,
gzip, a committed and an aborted transaction), a restart (the leader epoch moves on), round 1, a bounded
wait until every closed segment is copied and deleted locally, copying stopped (remote.log.copy.disable),
round 2 (segments that stay local), then a consumer reads from offset 0 at both isolation levels, the
broker's own RemoteLogMetadataSerde decodes ``__remote_log_metadata`` (each remote segment's last state:
a copy the restart cut short stays COPY_SEGMENT_STARTED, and its offsets are copied again under a new id),
and the broker stops cleanly. `python3 tests/kafka/tiered_broker.py DIR` leaves such a run in DIR.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from broker import Broker, BrokerError, driver_classes, fetch_jars

HERE = Path(__file__).resolve().parent
TIERED_DRIVER = HERE / "producer" / "TieredDriver.java"
TIERED_RELEASE = "4.3.0"
STORAGE_TEST_JAR = f"org.apache.kafka:kafka-storage:{TIERED_RELEASE}:jar:test"
TOPIC = "tiered"
SEGMENT_BYTES = "8192"


def tiered_config(remote_root: Path) -> dict[str, str]:
    """Broker settings for tiered storage on one node (TopicBasedRemoteLogMetadataManagerConfig, 4.3.0)."""
    return {
        "remote.log.storage.system.enable": "true",
        "remote.log.storage.manager.class.name": "org.apache.kafka.server.log.remote.storage.LocalTieredStorage",
        "remote.log.metadata.manager.class.name":
            "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager",
        "remote.log.metadata.manager.listener.name": "PLAINTEXT",
        "rsm.config.dir": str(remote_root),
        "rsm.config.delete.on.close": "false",
        "rlmm.config.remote.log.metadata.topic.num.partitions": "1",
        "rlmm.config.remote.log.metadata.topic.replication.factor": "1",
        "remote.log.manager.task.interval.ms": "300",
        "log.retention.check.interval.ms": "300",
    }


@dataclass
class TieredRun:
    log_dir: Path
    remote_root: Path
    topic_id: str
    consumed: dict[str, list[tuple[int, bytes | None, bytes | None]]] = field(default_factory=dict)
    end_offset: int = 0
    # segment id -> (start offset, end offset, last state), as the broker's RemoteLogMetadataSerde decodes them
    remote_states: dict[str, tuple[int, int, str]] = field(default_factory=dict)

    @property
    def partition_dir(self) -> Path:
        return self.log_dir / f"{TOPIC}-0"

    @property
    def remote_partition_dir(self) -> Path:
        return next((self.remote_root / "kafka-tiered-storage").glob(f"{TOPIC}-0-*"))


def tiered_lib() -> Path:
    return fetch_jars(TIERED_RELEASE, extras=(STORAGE_TEST_JAR,))


def _driver(lib: Path, *args: str, timeout: float = 180) -> str:
    import subprocess

    from broker import _JVM_FLAGS, _die_with_parent, jvm_temp_flags

    cmd = ["java", *_JVM_FLAGS, *jvm_temp_flags(), "-cp", f"{driver_classes(lib, source=TIERED_DRIVER)}:{lib}/*", "TieredDriver", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False,
                          preexec_fn=_die_with_parent)
    if proc.returncode != 0:
        raise BrokerError(f"TieredDriver {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n"
                          f"{proc.stderr[-3000:]}")
    return proc.stdout


def _local_logs(partition_dir: Path) -> list[str]:
    return sorted(n for n in os.listdir(partition_dir) if n.endswith(".log"))


def _wait_tiered(run: TieredRun, broker: Broker, timeout: float = 120) -> None:
    """Until the local log holds only its active segment and the remote store holds the others."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        remote = list((run.remote_root / "kafka-tiered-storage").glob(f"{TOPIC}-0-*/*.log"))
        if remote and len(_local_logs(run.partition_dir)) == 1:
            return
        time.sleep(0.3)
    raise BrokerError(f"segments were not tiered within {timeout}s: local {_local_logs(run.partition_dir)}:\n"
                      f"{broker.output_tail()}")


def _parse_consumed(text: str) -> tuple[list[tuple[int, bytes | None, bytes | None]], int]:
    records, end = [], -1
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "record":
            key = None if parts[2] == "-" else bytes.fromhex(parts[2])
            value = None if parts[3] == "-" else bytes.fromhex(parts[3])
            records.append((int(parts[1]), key, value))
        elif parts and parts[0] == "end":
            end = int(parts[1])
    return records, end


def _parse_metadata(text: str) -> dict[str, tuple[int, int, str]]:
    states: dict[str, tuple[int, int, str]] = {}
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "segment":
            states[parts[1]] = (int(parts[2]), int(parts[3]), parts[4])
        elif parts and parts[0] == "update":
            start, end, _ = states[parts[1]]
            states[parts[1]] = (start, end, parts[2])
    return states


def run_scenario(lib: Path, base: Path) -> TieredRun:
    """Run the scenario on a fresh broker under `base`; the broker is stopped when this returns."""
    run = TieredRun(base / "logdir", base / "remote", "")
    run.remote_root.mkdir(parents=True)
    broker = Broker(lib, run.log_dir, base / "work", TIERED_RELEASE, tiered_config(run.remote_root))
    try:
        broker.start()
        out = _driver(lib, "create", broker.bootstrap, TOPIC, SEGMENT_BYTES)
        run.topic_id = out.split()[-1]
        _driver(lib, "produce", broker.bootstrap, TOPIC, "0")
        broker.stop()
        broker.start()  # the partition is leaderless in between: its leader epoch moves on
        _driver(lib, "produce", broker.bootstrap, TOPIC, "1")
        _wait_tiered(run, broker)
        _driver(lib, "stop-copy", broker.bootstrap, TOPIC)
        _driver(lib, "produce", broker.bootstrap, TOPIC, "2")
        for isolation in ("read_uncommitted", "read_committed"):
            records, run.end_offset = _parse_consumed(_driver(lib, "consume", broker.bootstrap, TOPIC, isolation))
            run.consumed[isolation] = records
        run.remote_states = _parse_metadata(_driver(lib, "metadata", broker.bootstrap))
    finally:
        try:
            broker.stop()
        except BrokerError:
            pass
    return run


if __name__ == "__main__":
    import sys

    result = run_scenario(tiered_lib(), Path(sys.argv[1]))
    print(result.log_dir, result.remote_root, result.topic_id, result.end_offset,
          {k: len(v) for k, v in result.consumed.items()})
