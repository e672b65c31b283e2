"""Regenerate fixtures/real-broker/<release>/ and fixtures/real-groups/<release>/: log dirs written by a real
Kafka broker.

    .venv/bin/python tests/kafka/make_real_fixtures.py            # every release in broker.RELEASES
    .venv/bin/python tests/kafka/make_real_fixtures.py 4.3.0      # one release
    .venv/bin/python tests/kafka/make_real_fixtures.py --groups   # real-groups/, every release in GROUPS_RELEASES
    .venv/bin/python tests/kafka/make_real_fixtures.py --groups 4.4.0

For each release: start a single-node KRaft broker on an empty dir, create the scenario's topics, run the
Java driver's scenario (every codec, idempotent and plain producers, transactions with aborts, a compacted
topic, consumer groups committing offsets) and kdump gen's record sequence, count what a read_committed
consumer sees, stop the broker cleanly (so indexes are trimmed and the clean-shutdown marker written),
and copy its log dir to fixtures/real-broker/<release>/logs. driver-output.txt keeps what the driver
printed: the records it sent, aborted and counted, and the compacted topic's final key/value state; the
tests compare kdump's reading of the logs against it.

real-groups/<release>/: the same kind of broker (with the share coordinator's state topic on one partition and
one replica, like the offsets topic), driven by tests/kafka/producer/GroupsDriver.java through every kind of
group a 4.x broker has (classic, KIP-848 consumer with a regex subscription and a classic member, KIP-932
share, KIP-1071 streams, transactional offset commits committed and aborted, a deleted group), stopped
cleanly, its log dir copied whole but for the KRaft metadata partition; driver-output.txt keeps what the
driver printed and what the admin API listed (groups, committed offsets, share-group start offsets) before
the broker stopped.
tests/kafka/corpus.py compares kdump's decoding of its __consumer_offsets and __share_group_state with the
real DumpLogSegments of every release.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from broker import DRIVER, HERE, RELEASES, Broker, fetch_jars, run_driver, run_driver_source

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "real-broker"
GROUPS_FIXTURES = ROOT / "fixtures" / "real-groups"
# 4.3.0 and 4.4.0: every group type is on by default on a fresh cluster there (Feature.latestProduction of
# kafka-server-common: share.version 1 from 4.1, streams.version 1 from 4.2; 4.0 had share groups only as
# early access and no streams groups, 4.1 streams groups only as early access).
GROUPS_RELEASES = ("4.3.0", "4.4.0")
GROUPS_DRIVER = HERE / "producer" / "GroupsDriver.java"
# The share coordinator's state topic (ShareCoordinatorConfig: 50 partitions, 3 replicas, min ISR 2 by
# default) on one partition and one replica, as broker.py does for the offsets and transaction topics.
GROUPS_CONFIG = {
    "share.coordinator.state.topic.num.partitions": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
}
SEED = 12
# The topics of the scenario plus `sequence`; `stream` is only used by live tests and stays empty.
COUNTED_TOPICS = ("codec-none", "codec-gzip", "codec-snappy", "codec-lz4", "codec-zstd", "plain", "txn", "txn-b",
                  "compacted", "sequence")
# kdump gen's seq/seq records, 10 per batch, from this time on, one second apart: tests/kafka/
# test_real_broker_gen.py runs `kdump gen` with the same numbers and compares the files.
SEQUENCE = {"records": 1200, "per_batch": 10, "start_ms": 1700000000000, "step_ms": 1000}
SEGMENT_BYTES = 16384


def segment_config(release: str) -> str:
    # Kafka 4 refuses segment.bytes below 1 MiB; its test-only internal.segment.bytes has no such floor.
    return "internal.segment.bytes" if int(release.split(".")[0]) >= 4 else "segment.bytes"


def setup_topics(broker: Broker) -> str:
    return run_driver(broker.lib, "setup", broker.bootstrap, segment_config(broker.release), str(SEGMENT_BYTES))


def run_scenario(broker: Broker) -> str:
    """Produce everything into the topics setup_topics made; returns the driver's output lines."""
    lib, bootstrap = broker.lib, broker.bootstrap
    out = run_driver(lib, "produce", bootstrap, str(SEED))
    out += run_driver(lib, "sequence", bootstrap, "sequence", *(str(v) for v in SEQUENCE.values()))
    out += run_driver(lib, "count", bootstrap, *COUNTED_TOPICS)
    return out


def capture(lib: Path, release: str, dest: Path, scenario: Callable[[Broker, Path], str],
            config: dict[str, str] | None = None, leave_out: tuple[str, ...] = ()) -> Path:
    """Run ``scenario(broker, scratch dir)`` on a fresh broker, stop it cleanly, and make ``dest`` hold its log
    dir (``logs/``, but for the entries named in ``leave_out``) and what the scenario printed."""
    with tempfile.TemporaryDirectory(prefix=f"kdump-real-{release}-") as tmp:
        broker = Broker(lib, Path(tmp) / "logs", Path(tmp) / "work", release, dict(config or {}))
        broker.start()
        try:
            output = scenario(broker, Path(tmp))
        finally:
            broker.stop()
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        shutil.copytree(broker.log_dir, dest / "logs", symlinks=True, ignore=shutil.ignore_patterns(*leave_out))
        (dest / "driver-output.txt").write_text(output)
    return dest


def make(release: str) -> Path:
    return capture(fetch_jars(release), release, FIXTURES / release,
                   lambda broker, _: setup_topics(broker) + run_scenario(broker))


def make_groups(release: str) -> Path:
    """fixtures/real-groups/<release>: GroupsDriver's run, on a broker with the kafka-streams jar beside."""
    lib = fetch_jars(release, extras=(f"org.apache.kafka:kafka-streams:{release}",))
    # Not __cluster_metadata-0: 4.4 leaves its active segment's index files preallocated (10 MiB each).
    return capture(lib, release, GROUPS_FIXTURES / release,
                   lambda broker, tmp: run_driver_source(lib, (GROUPS_DRIVER, DRIVER), broker.bootstrap,
                                                         str(tmp / "streams-state")),
                   GROUPS_CONFIG, leave_out=("__cluster_metadata-0",))


def main(argv: list[str]) -> None:
    if argv[:1] == ["--groups"]:
        for release in argv[1:] or GROUPS_RELEASES:
            print(make_groups(release))
        return
    for release in argv or RELEASES:
        print(make(release))


if __name__ == "__main__":
    main(sys.argv[1:])
