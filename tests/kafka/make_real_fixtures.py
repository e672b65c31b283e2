"""Regenerate fixtures/real-broker/<release>/: log dirs written by a real Kafka broker.

    .venv/bin/python tests/kafka/make_real_fixtures.py            # every release in broker.RELEASES
    .venv/bin/python tests/kafka/make_real_fixtures.py 4.3.0      # one release

For each release: start a single-node KRaft broker on an empty dir, create the scenario's topics, run the
Java driver's scenario (every codec, idempotent and plain producers, transactions with aborts, a compacted
topic, consumer groups committing offsets) and kdump gen's record sequence, count what a read_committed
consumer sees, stop the broker cleanly (so indexes are trimmed and the clean-shutdown marker written),
and copy its log dir to fixtures/real-broker/<release>/logs. driver-output.txt keeps what the driver
printed: the records it sent, aborted and counted, and the compacted topic's final key/value state; the
tests compare kdump's reading of the logs against it.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from broker import RELEASES, Broker, fetch_jars, run_driver

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "real-broker"
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


def make(release: str) -> Path:
    lib = fetch_jars(release)
    with tempfile.TemporaryDirectory(prefix=f"kdump-real-{release}-") as tmp:
        broker = Broker(lib, Path(tmp) / "logs", Path(tmp) / "work", release)
        broker.start()
        try:
            output = setup_topics(broker) + run_scenario(broker)
        finally:
            broker.stop()
        dest = FIXTURES / release
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        broker.copy_log_dir(dest / "logs")
        (dest / "driver-output.txt").write_text(output)
    return dest


def main(argv: list[str]) -> None:
    for release in argv or RELEASES:
        print(make(release))


if __name__ == "__main__":
    main(sys.argv[1:])
