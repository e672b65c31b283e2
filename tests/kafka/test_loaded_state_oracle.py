"""``kdump replicas``' loaded values against Kafka 4.3.0's own loader (issue 31, "One log model": the sample of
tests/broker/test_loaded_state_differential.py checked against the real thing).

A log dir ``kdump gen`` wrote is damaged at random twice the same way (tests/random_damage.py: flipped bytes
above and below the recovery point, torn segments, missing or corrupt indexes, swapped batches, a clean or
unclean shutdown, recovery points at 0 or at the last segment). The loader oracle (`UnifiedLog.create`,
tests/kafka/loader_oracle.py) loads one copy, every partition of the log dir in one request; ``kdump replicas
--json`` reads the other. For every partition the replica's loaded log end, log start, high watermark, last
stable offset and leader epochs must be the loader's, and a partition the loader fails on must be offline.
Each run takes a new seed (printed in any failure); KDUMP_DAMAGE_SEED replays one.
Needs java and mvn (skipped with the reason otherwise; failed under CI=true).
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from loader_oracle import LoaderOracle
from random_damage import INDEX_INTERVAL_BYTES, TOPIC, batches_of, damage_log_dir, generate

from kdump_testing import run_kdump


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("oracle-damage") / "logs")


def _kafka_loaded(loaded: dict[str, Any]) -> dict[str, Any]:
    """The loader's answer for one partition as the values compared (state "offline" when it failed)."""
    if "error" in loaded:
        return {"state": "offline", "error": loaded["error"]}
    values = {"state": "loaded", **{key: loaded[key] for key in ("logEndOffset", "logStartOffset", "leaderEpochs")}}
    if "highWatermark" in loaded:  # Partition.createLog's updateHighWatermark of the checkpoint
        # UnifiedLog.lastStableOffset: the producer state's first unstable offset (not below the log start:
        # maybeIncrementFirstUnstableOffset) when it is below the high watermark, else the high watermark
        high_watermark, first_unstable = loaded["highWatermark"], loaded["firstUnstableOffset"]
        values |= {"highWatermark": high_watermark, "lastStableOffset": high_watermark if first_unstable is None
                   else min(max(first_unstable, loaded["logStartOffset"]), high_watermark)}
    return values


def _kdump_loaded(replica: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """``kdump replicas``' loaded values of one replica, those of ``keys`` (state "offline" when it is)."""
    if replica["state"] == "offline":
        return {"state": "offline", "error": replica["offline"]}
    values = {**replica, "state": "loaded",
              "leaderEpochs": [{"epoch": e, "startOffset": o} for e, o in replica["leaderEpochs"]]}
    return {key: values[key] for key in keys}


def _agree(ours: dict[str, Any], kafka: dict[str, Any]) -> bool:
    """Both offline (whatever each says of why), or both loaded with the same values."""
    return ours["state"] == kafka["state"] and (kafka["state"] == "offline" or ours == kafka)


def test_replicas_loads_what_kafkas_loader_loads(loader_oracle: LoaderOracle, source: Path, tmp_path: Path) -> None:
    seed = int(os.environ.get("KDUMP_DAMAGE_SEED", random.randrange(1 << 30)))
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    done = damage_log_dir(source, ours, seed)
    assert damage_log_dir(source, theirs, seed) == done
    answer = loader_oracle.load(theirs, index_interval_bytes=INDEX_INTERVAL_BYTES)
    loaded = {p["dir"]: _kafka_loaded(p) for p in answer["partitions"]}
    result = run_kdump("replicas", str(ours), "--json", "--index-interval-bytes", str(INDEX_INTERVAL_BYTES))
    assert "Traceback" not in result.stderr, (f"KDUMP_DAMAGE_SEED={seed}", result.stderr)
    replicas = {f"{p['topic']}-{p['partition']}": p["replicas"][0] for p in map(json.loads, result.stdout.splitlines())}
    assert set(loaded) == set(replicas) == set(done), (f"KDUMP_DAMAGE_SEED={seed}", sorted(loaded), sorted(replicas))
    # every partition (one loader request loads them all): its damage, then kdump's values and Kafka's
    disagreements = []
    for name, kafka in sorted(loaded.items()):
        ours_values = _kdump_loaded(replicas[name], [key for key in kafka if key != "error"])
        if not _agree(ours_values, kafka):
            disagreements.append(f"{name} {done[name]}: kdump {ours_values} kafka {kafka}")
    assert not disagreements, f"KDUMP_DAMAGE_SEED={seed}:\n" + "\n".join(disagreements)


def test_a_missing_index_after_a_clean_shutdown_recovers_its_segment(loader_oracle: LoaderOracle, source: Path,
                                                                     tmp_path: Path) -> None:
    """Issue 31, case 3: the broker shut down cleanly, but the last segment's offset index is gone and one of its
    batches is corrupt. LogLoader.loadSegmentFiles recovers a segment whose index is missing (sanityCheck's
    NoSuchFileException) even after a clean shutdown, and recovery stops at the corrupt batch: ``replicas`` and
    ``recover`` must both say what Kafka's loader loads."""
    partition = f"{TOPIC}-0"
    copies = {}
    for side in ("ours", "theirs"):
        copies[side] = target = tmp_path / side
        shutil.copytree(source, target)
        (target / ".kafka_cleanshutdown").touch()
        last = sorted((target / partition).glob("*.log"))[-1]
        last.with_suffix(".index").unlink()
        position, size = batches_of(last)[1]
        data = bytearray(last.read_bytes())
        data[position + size - 1] ^= 0x5A        # the last byte of the segment's second batch: its CRC fails
        last.write_bytes(bytes(data))
    answer = loader_oracle.load(copies["theirs"], index_interval_bytes=INDEX_INTERVAL_BYTES)
    kafka = {p["dir"]: _kafka_loaded(p) for p in answer["partitions"]}[partition]
    result = run_kdump("replicas", str(copies["ours"]), "--topic", TOPIC, "--partition", "0", "--json",
                       "--index-interval-bytes", str(INDEX_INTERVAL_BYTES))
    [replica] = json.loads(result.stdout.splitlines()[0])["replicas"]
    assert _kdump_loaded(replica, [key for key in kafka if key != "error"]) == kafka
    assert replica["logEndOffset"] < replica["logEndOffsetOnDisk"], replica   # the load truncates
    assert replica["loadTruncation"]["to"] == kafka["logEndOffset"]
    recovered = run_kdump("recover", str(copies["ours"] / partition), "--json",
                          "--index-interval-bytes", str(INDEX_INTERVAL_BYTES))
    assert recovered.exit_code in (0, 1, 3), recovered.stderr
    [plan] = [o for o in map(json.loads, recovered.stdout.splitlines()) if o["type"] == "partition"]
    assert (plan["logEndOffsetBefore"], plan["logEndOffset"]) == (replica["logEndOffsetOnDisk"], kafka["logEndOffset"])
