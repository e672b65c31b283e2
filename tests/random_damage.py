"""Random damage to a copy of a ``kdump gen`` log dir, the shapes a crash or a bad disk leaves: flipped bytes
above and below the recovery point, a torn segment that is not the last, a missing or corrupt index,
swapped batches, clean or unclean shutdown, the recovery point at 0 or at the log end. Transactions open
across the damage come from ``--transactional`` data cut by it. Batches are found with struct here, not
with kdump. Shared by tests/broker/test_loaded_state_differential.py and its check against Kafka's loader.
"""

from __future__ import annotations

import random
import shutil
import struct
from pathlib import Path

from kdump.format.checkpoint import OffsetCheckpointEntry, encode_offset_checkpoint
from kdump_testing import run_kdump

TOPIC = "d"
PARTITIONS = 15
GEN_ARGS = ("--topics", TOPIC, "--partitions", str(PARTITIONS), "--records", "150", "--transactional",
            "--segment-bytes", "2048", "--index-interval-bytes", "512")
"""``kdump gen`` arguments of the partitions damaged here (small segments, index entries for most batches)."""
INDEX_INTERVAL_BYTES = 512
KINDS = ("flip", "tear", "missing-index", "corrupt-index", "swap")


def generate(out: Path) -> Path:
    """The undamaged log dir (``kdump gen`` with GEN_ARGS, seed 3) at ``out``."""
    result = run_kdump("gen", str(out), *GEN_ARGS, "--seed", "3")
    assert result.exit_code == 0, result.stderr
    return out


def batches_of(log: Path) -> list[tuple[int, int]]:
    """(position, size) of each complete batch of a .log."""
    data, out, pos = log.read_bytes(), [], 0
    while pos + 12 <= len(data):
        size = 12 + struct.unpack_from(">i", data, pos + 8)[0]
        if size < 12 or pos + size > len(data):
            break
        out.append((pos, size))
        pos += size
    return out


def _damage_partition(partition: Path, rng: random.Random) -> list[str]:
    """One or two random damages to one partition dir; what was done, for assertion messages."""
    logs = sorted(partition.glob("*.log"))
    done = []
    for kind in rng.sample(KINDS, rng.choice((1, 2))):
        log = rng.choice(logs)
        batches = batches_of(log)
        if kind == "flip" and batches:
            position, size = rng.choice(batches)
            data = bytearray(log.read_bytes())
            data[rng.randrange(position + 61, position + size) if size > 61 else position + size - 1] ^= 0x5A
            log.write_bytes(bytes(data))
        elif kind == "tear" and len(logs) > 1:
            log = rng.choice(logs[:-1])
            data = log.read_bytes()
            log.write_bytes(data[:rng.randrange(1, max(2, len(data)))])
        elif kind == "missing-index":
            log.with_suffix(".index").unlink(missing_ok=True)
        elif kind == "corrupt-index" and log.with_suffix(".index").exists():
            index = log.with_suffix(".index")
            data = bytearray(index.read_bytes())
            if len(data) >= 8:
                data[0:8] = struct.pack(">ii", rng.randrange(0, 1 << 20), rng.randrange(0, 1 << 20))
                index.write_bytes(bytes(data))
        elif kind == "swap" and len(batches) >= 2:
            i = rng.randrange(len(batches) - 1)
            (pa, sa), (pb, sb) = batches[i:i + 2]
            data = log.read_bytes()
            log.write_bytes(data[:pa] + data[pb:pb + sb] + data[pa:pa + sa] + data[pb + sb:])
        else:
            continue
        done.append(f"{kind} {log.name}")
    return done


def damage_log_dir(source: Path, target: Path, seed: int) -> dict[str, list[str]]:
    """A damaged copy of ``source`` at ``target``: a random shutdown, recovery points and damage per
    partition; returns what was done to each partition dir."""
    rng = random.Random(seed)
    shutil.copytree(source, target)
    clean = rng.random() < 0.5
    marker = target / ".kafka_cleanshutdown"
    if clean:
        marker.touch()
    else:
        marker.unlink(missing_ok=True)
    done: dict[str, list[str]] = {}
    points = []
    for number in range(PARTITIONS):
        partition = target / f"{TOPIC}-{number}"
        end = max(int(p.name[:20]) for p in partition.glob("*.log"))
        points.append(OffsetCheckpointEntry(TOPIC, number, rng.choice((0, end))))
        done[partition.name] = [f"{'clean' if clean else 'unclean'} shutdown, recovery point {points[-1].offset}",
                                *_damage_partition(partition, rng)]
    (target / "recovery-point-offset-checkpoint").write_bytes(encode_offset_checkpoint(points))
    return done
