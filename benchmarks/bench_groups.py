"""``kdump groups``' replay of a large ``__consumer_offsets`` partition: peak memory against its size.

Generates ``__consumer_offsets-0`` with ``kdump gen`` (OffsetCommit records cycling over --keys live keys,
100,000 by default, on one data topic) at each size, then replays it in a fresh process
(kdump.broker.group_coordinator_shard over kdump.broker.coordinator_loader, the leader after restart as
kdump.broker.restart predicts it) and reports the process's peak RSS (ru_maxrss). Memory is flat when the
peak does not grow with the partition's size, only with its live keys.

    python benchmarks/bench_groups.py                      # small: 200,000 and 800,000 commits
    python benchmarks/bench_groups.py --records 2000000 8000000   # about 150 MiB and 600 MiB
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from kdump.gen.generator import GenSpec, TopicSpec, generate
from kdump.log.writer import LogConfig


def make(root: str, records: int, keys: int) -> int:
    spec = GenSpec(topics=(TopicSpec("data", 1), TopicSpec("__consumer_offsets", 1)), records=records,
                   records_per_batch=200, group_keys=keys, log=LogConfig(segment_bytes=256 << 20))
    generate(root, spec, force=True)
    part = os.path.join(root, "__consumer_offsets-0")
    return sum(os.path.getsize(os.path.join(part, f)) for f in os.listdir(part) if f.endswith(".log"))


def replay(root: str) -> None:
    """In this (fresh) process: the replay, then one JSON line with the live keys, seconds and peak RSS."""
    from kdump.broker.coordinator_loader import load_records
    from kdump.broker.group_coordinator_shard import GroupCoordinatorShard
    from kdump.broker.replica_report import ReplicasOptions, analyze
    from kdump.broker.restart import after_restart

    start = time.perf_counter()
    [report] = list(analyze([root], ReplicasOptions(topic="__consumer_offsets")))
    after = after_restart(report)
    assert after is not None
    shard = GroupCoordinatorShard((4, 4))
    shard.replay_all(load_records(after.leader), "bench")
    seconds = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"liveKeys": len(shard.offsets.offsets), "seconds": round(seconds, 2), "peakKiB": peak_kib}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, nargs="+", default=[200_000, 800_000],
                        help="commits in __consumer_offsets-0, one size per run")
    parser.add_argument("--keys", type=int, default=100_000, help="live (group, topic, partition) keys")
    parser.add_argument("--replay", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.replay:
        replay(args.replay)
        return
    print(f"{'commits':>10} {'log MiB':>8} {'live keys':>10} {'replay s':>9} {'peak RSS MiB':>13}")
    for records in args.records:
        root = tempfile.mkdtemp(prefix="bench-groups-")
        try:
            size = make(os.path.join(root, "logs"), records, args.keys)
            out = subprocess.run([sys.executable, __file__, "--replay", os.path.join(root, "logs")],
                                 capture_output=True, text=True, check=True)
            got = json.loads(out.stdout.splitlines()[-1])
            print(f"{records:>10} {size / (1 << 20):>8.1f} {got['liveKeys']:>10} {got['seconds']:>9} "
                  f"{got['peakKiB'] / 1024:>13.1f}")
        finally:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
