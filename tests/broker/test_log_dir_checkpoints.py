"""One reader of a log dir's checkpoints (kdump.broker.log_dir_checkpoints) for every command, and one log
start offset for a tiered partition: Kafka 4.3.0's LogLoader.load keeps a remote-log-enabled partition's
log-start-offset-checkpoint (0 here, in remote storage) where a local log takes the first segment's base
offset, and UnifiedLog's constructor sets the local log start to max(log start, first segment's base
offset) and lifts the high watermark to it. Before, ``summary`` and ``recover`` said 30 (and ``summary``
warned the checkpoint was below the segments) while ``tiered`` and ``verify`` said 0."""

from __future__ import annotations

import json
from pathlib import Path

from tiered_testing import build_tiered

from kdump.broker.log_dir_checkpoints import (
    CLEANER_CHECKPOINT,
    HIGH_WATERMARK_CHECKPOINT,
    CheckpointCache,
    read_log_dir_checkpoints,
)
from kdump.format.checkpoint import OffsetCheckpointEntry, encode_offset_checkpoint
from kdump_testing import run_kdump


def _json(*args: str) -> list[dict]:
    return [json.loads(line) for line in run_kdump(*args, "--json").stdout.splitlines()]


def test_every_command_gives_a_tiered_partition_one_log_start(tmp_path: Path) -> None:
    t = build_tiered(tmp_path)   # remote segments 0-29, a local segment 30-39, log start checkpoint 0
    (t.log_dir / HIGH_WATERMARK_CHECKPOINT).write_bytes(encode_offset_checkpoint([OffsetCheckpointEntry("t", 0, 5)]))
    (t.log_dir / ".kafka_cleanshutdown").write_bytes(b"")
    (tiered,) = _json("tiered", str(t.log_dir), "--remote", str(t.remote_root))
    (summary,) = [p for p in _json("summary", str(t.log_dir)) if p["topic"] == "t"]
    (plan,) = [p for p in _json("recover", str(t.log_dir / "t-0")) if p["type"] == "partition"]
    assert (tiered["logStartOffset"], tiered["localLogStartOffset"]) == (0, 30)
    assert summary["logStartOffset"] == plan["logStartOffset"] == 0
    assert not [f for f in summary["findings"] if "below the first segment" in f["text"]]
    assert plan["highWatermark"] == 30     # lifted to the local log start, as for a local log
    verify = run_kdump("verify", str(t.log_dir))
    assert verify.exit_code == 0 and "the log start offset 0 is in remote storage" in verify.stdout


def test_one_read_per_log_dir_and_its_problems_told_once(tmp_path: Path) -> None:
    (tmp_path / CLEANER_CHECKPOINT).write_text("0\n2\nt 0 7\n")          # says 2 entries, holds 1
    (tmp_path / HIGH_WATERMARK_CHECKPOINT).write_text("0\n1\nt 0 9\n")
    read: list[str] = []

    def counting(path: str) -> bytes | None:
        read.append(Path(path).name)
        return Path(path).read_bytes() if Path(path).exists() else None

    cache = CheckpointCache(counting)
    first, told = cache.log_dir(str(tmp_path))
    again, told_again = cache.log_dir(str(tmp_path))
    assert again is first and (told, told_again) == (True, False) and len(read) == 4
    assert set(first.problems) == {CLEANER_CHECKPOINT}
    assert first.partition("t", 0).high_watermark == 9 and first.partition("t", 0).cleaner_offset is None
    assert read_log_dir_checkpoints(str(tmp_path)).partition("t", 1).high_watermark is None
