"""``kdump recover`` and ``kdump replicas`` say the same thing of the log a broker's loader leaves (issue "One
log model", case 5): on partitions ``kdump gen`` wrote and tests/random_damage.py damaged at random, recover's
after-loading numbers (log end, log start, recovery point, high watermark) and replicas' loaded values are
equal, partition by partition, and a partition the loader refuses is offline in replicas. Each run takes a new
seed (printed in any failure); KDUMP_DAMAGE_SEED replays one. tests/kafka/test_loaded_state_oracle.py checks a
sample of such partitions against Kafka's own loader.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from random_damage import INDEX_INTERVAL_BYTES, damage_log_dir, generate

from kdump_testing import run_kdump


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("differential") / "logs")


def _lines(*args: str) -> list[dict[str, Any]]:
    result = run_kdump(*args)
    assert "Traceback" not in result.stderr, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("copy", range(2))
def test_recover_and_replicas_load_the_same_log(source: Path, tmp_path: Path, copy: int) -> None:
    seed = int(os.environ.get("KDUMP_DAMAGE_SEED", random.randrange(1 << 30))) + copy
    damaged = tmp_path / "damaged"
    done = damage_log_dir(source, damaged, seed)
    interval = ("--index-interval-bytes", str(INDEX_INTERVAL_BYTES))
    plans = {Path(o["path"]).name: o for o in _lines("recover", str(damaged), "--json", *interval)
             if o["type"] == "partition"}
    replicas = {p["topic"] + "-" + str(p["partition"]): p["replicas"][0]
                for p in _lines("replicas", str(damaged), "--json", *interval)}
    assert set(replicas) == set(done), (seed, sorted(replicas))
    for name, replica in sorted(replicas.items()):
        context = (f"seed {seed}", name, done[name])
        plan = plans.get(name)
        if plan is None or plan.get("refused"):
            assert replica["state"] == "offline", context
            continue
        assert replica["state"] != "offline", (*context, replica["offline"])
        assert replica["logEndOffset"] == plan["logEndOffset"], context
        assert replica["logStartOffset"] == plan["logStartOffset"], context
        assert replica["highWatermark"] == plan["highWatermark"], context
        assert (replica["loadTruncation"] is not None) == (plan["logEndOffset"] < replica["logEndOffsetOnDisk"]), \
            context
