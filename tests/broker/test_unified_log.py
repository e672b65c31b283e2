"""One log start offset for every command (kdump.broker.unified_log): LogLoader.load of Kafka 4.3.0 takes
max(log-start-offset-checkpoint, first segment's base offset), and UnifiedLog.read answers an offset
below it with OFFSET_OUT_OF_RANGE."""

from __future__ import annotations

import json
from pathlib import Path

from kdump.broker.unified_log import (
    LogOffsetsSnapshot,
    high_watermark,
    last_stable_offset,
    local_log_start_offset,
    log_start_offset,
)
from kdump.format.checkpoint import OffsetCheckpointEntry, encode_offset_checkpoint
from kdump_testing import run_kdump


def test_the_rules() -> None:
    assert log_start_offset(None, 0) == 0 and log_start_offset(45, 0) == 45 and log_start_offset(5, 100) == 100
    assert high_watermark(None, 0, 10) is None and high_watermark(300, 0, 295) == 295 and high_watermark(3, 5, 9) == 5
    assert last_stable_offset(7, 10, 12) == 7 and last_stable_offset(11, 10, 12) == 10
    assert last_stable_offset(None, None, 12) == 12
    offsets = LogOffsetsSnapshot.of(log_start_checkpoint=45, first_segment_base=0, log_end=200,
                                    high_watermark_checkpoint=300, recovery_point=100)
    assert (offsets.log_start_offset, offsets.high_watermark, offsets.last_stable_offset) == (45, 200, 200)


def test_the_rules_of_a_tiered_partition() -> None:
    # LogLoader.load (4.3.0): newLogStartOffset = isRemoteLogEnabled ? checkpoint : max(checkpoint, first base);
    # UnifiedLog's constructor: updateLocalLogStartOffset(max(logStartOffset, first base)), which lifts the
    # high watermark to it.
    assert log_start_offset(0, 30, remote_log_enabled=True) == 0 and log_start_offset(None, 30, True) == 0
    assert local_log_start_offset(0, 30) == 30 and local_log_start_offset(45, 30) == 45
    tiered = LogOffsetsSnapshot.of(log_start_checkpoint=0, first_segment_base=30, log_end=40,
                                   high_watermark_checkpoint=5, remote_log_enabled=True)
    local = LogOffsetsSnapshot.of(log_start_checkpoint=0, first_segment_base=30, log_end=40,
                                  high_watermark_checkpoint=5)
    assert (tiered.log_start_offset, tiered.local_log_start_offset, tiered.high_watermark) == (0, 30, 30)
    assert (local.log_start_offset, local.local_log_start_offset, local.high_watermark) == (30, 30, 30)


def test_find_summary_and_recover_agree_on_the_checkpointed_log_start(tmp_path: Path) -> None:
    """Case 5: DeleteRecords moved the log start to 45 inside the first segment."""
    logs = tmp_path / "logs"
    assert run_kdump("gen", str(logs), "--topics", "a", "--partitions", "1", "--records", "200",
                     "--seed", "3").exit_code == 0
    (logs / "log-start-offset-checkpoint").write_bytes(encode_offset_checkpoint([OffsetCheckpointEntry("a", 0, 45)]))
    found = run_kdump("find", str(logs / "a-0"), "--offset", "44")
    assert found.exit_code == 1 and "below the log start offset 45" in found.stdout, found.stdout
    assert run_kdump("find", str(logs / "a-0"), "--offset", "45").exit_code == 0
    summary = json.loads(run_kdump("summary", str(logs), "--json").stdout.splitlines()[0])
    recover = [json.loads(line) for line in run_kdump("recover", str(logs), "--json").stdout.splitlines()]
    assert summary["logStartOffset"] == 45
    assert [p["logStartOffset"] for p in recover if p["type"] == "partition"] == [45]
