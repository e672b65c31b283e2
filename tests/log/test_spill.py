"""PairList: the same pairs, in every order asked for, whether they stayed in memory or spilled."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump.log.spill import PairList

pairs_strategy = st.lists(st.tuples(st.integers(-2**63, 2**63 - 1), st.integers(-2**63, 2**63 - 1)), max_size=300)


@settings(max_examples=100, deadline=None)
@given(pairs=pairs_strategy, limit=st.integers(1, 40))
def test_orders_match_a_plain_list(pairs: list[tuple[int, int]], limit: int) -> None:
    spilled = PairList(limit=limit)
    spilled.extend(pairs)
    try:
        assert len(spilled) == len(pairs) and bool(spilled) == bool(pairs)
        assert list(spilled) == pairs
        assert list(spilled.reversed()) == list(reversed(pairs))
        assert list(spilled.sorted()) == sorted(pairs)
    finally:
        spilled.close()


def test_a_million_offset_gaps_keep_memory_flat(tmp_path: Path) -> None:
    """One uncompressed batch whose 1,000,000 records all sit at offset delta 0: Kafka's tool prints a
    million 'is followed by' lines; kdump must not hold them all (it kept ~100 MB of tuples before)."""
    records = [Record(5, 1_700_000_000_000, None, b"") for _ in range(1_000_000)]
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(encode_batch_v2(records, base_offset=5, last_offset_delta=0))
    code = ("import resource, sys; from kdump.cli.main import main; sys.argv=['kdump','--files',%r,"
            "'--deep-iteration']\ntry:\n main()\nexcept SystemExit: pass\n"
            "print(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1], file=sys.stderr)"
            % str(log))
    done = subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, check=True)
    lines = done.stderr.splitlines()
    # Kafka 4.3 starts from -1 and lists the pairs in ascending order.
    assert lines[0].startswith("Non-consecutive offsets in")
    assert lines[1:3] == ["  -1 is followed by 5", "  5 is followed by 5"]
    assert len(lines) == 1 + 1_000_000 + 1
    peak_mib = int(lines[-1]) / 1024
    assert peak_mib < 80, peak_mib
