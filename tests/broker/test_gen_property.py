"""For any log ``kdump gen`` writes, the model agrees with itself: ``verify`` is clean, ``recover`` after
an unclean shutdown loses nothing, and the ``recover --out`` copy verifies clean with the very
``.txnindex`` entries the writer made (LogSegment.recover replays producer state as the appends did:
Kafka 4.3.0 LogLoader.recoverSegment and ProducerStateManager).

Scenarios: every codec, transactions committed, aborted and empty (a marker alone), producer epoch
bumps, rolls in the middle of a transaction, compacted batches (offset gaps), idempotent and plain
topics beside them. (Shrinking is off: a failing scenario is printed as found, CI stays fast.)
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kdump.format.batch import Codec
from kdump.gen.generator import GenSpec, TopicSpec, generate
from kdump.log.writer import LogConfig
from kdump_testing import run_kdump

RATIOS = st.sampled_from([0.0, 0.5, 1.0])

scenarios = st.fixed_dictionaries({
    "codec": st.sampled_from(list(Codec)),
    "records": st.integers(1, 60),
    "records_per_batch": st.integers(1, 6),
    "txn_batches": st.integers(1, 4),
    "abort_ratio": RATIOS,
    "empty_txn_ratio": RATIOS,
    "epoch_bump_ratio": RATIOS,
    "compacted_ratio": st.sampled_from([0.0, 0.5]),
    "segment_bytes": st.integers(700, 3000),
    "index_interval_bytes": st.sampled_from([0, 100, 4096]),
    "seed": st.integers(0, 1000),
})


def _txn_indexes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.txnindex"))}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(scenario=scenarios)
def test_what_gen_writes_verifies_and_recovers_whole(tmp_path_factory, scenario: dict) -> None:  # type: ignore[no-untyped-def]
    work = tmp_path_factory.mktemp("gen")
    codec = scenario.pop("codec")
    log = LogConfig(segment_bytes=scenario.pop("segment_bytes"), index_interval_bytes=scenario.pop("index_interval_bytes"))
    topics = (TopicSpec("txn", 1, codec, producer="transactional"), TopicSpec("idem", 1, codec, producer="idempotent"),
              TopicSpec("plain", 1, codec, magic=2 if codec is Codec.ZSTD else 1))
    logs = work / "logs"
    generate(str(logs), GenSpec(topics=topics, log=log, value_size=(0, 40), **scenario))

    verify = run_kdump("verify", str(logs))
    assert verify.exit_code == 0, verify.stdout
    txn = run_kdump("txn", str(logs / "txn-0"))
    assert txn.exit_code == 0, txn.stdout

    # An unclean shutdown with nothing flushed (gen writes no clean-shutdown marker): every segment is recovered.
    os.remove(logs / "recovery-point-offset-checkpoint")
    plan = run_kdump("recover", str(logs), "--json")
    assert plan.exit_code == 0, plan.stdout
    partitions = [json.loads(line) for line in plan.stdout.splitlines()]
    assert all(not p.get("deletedSegments") for p in partitions if p["type"] == "partition"), plan.stdout

    out = work / "copy"
    assert run_kdump("recover", str(logs), "--out", str(out)).exit_code == 0
    copy = run_kdump("verify", str(out))
    assert copy.exit_code == 0, copy.stdout
    assert _txn_indexes(out) == _txn_indexes(logs)
    shutil.rmtree(work)
