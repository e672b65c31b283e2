"""``kdump summary``: per-partition totals and what the checkpoints say versus the log end offset."""

from __future__ import annotations

import json

from click.testing import CliRunner

from kdump.cli.summary import summary
from kdump.cli.verify import verify as verify_command
from kdump.format.checkpoint import (
    EpochEntry,
    OffsetCheckpointEntry,
    encode_leader_epoch_checkpoint,
    encode_offset_checkpoint,
    encode_partition_metadata,
)
from kdump.format.codecs import Codec
from kdump.format.encode import encode_batch_v2, encode_legacy_message
from kdump.format.records import Record

T0 = 1_700_000_000_000


def build(root) -> None:
    part = root / "orders-0"
    part.mkdir(parents=True)
    seg0 = (encode_legacy_message(0, b"k", b"v", magic=1, timestamp=T0)
            + encode_batch_v2([Record(1, T0 + 1, b"k", b"a"), Record(2, T0 + 2, b"k", b"b")], base_offset=1,
                              producer_id=77, producer_epoch=0, base_sequence=0))
    seg3 = encode_batch_v2([Record(3, T0 + 5, None, b"c"), Record(4, T0 + 9, None, b"d")], base_offset=3,
                           codec=Codec.GZIP)
    (part / "00000000000000000000.log").write_bytes(seg0)
    (part / "00000000000000000000.index").write_bytes(b"")
    (part / "00000000000000000003.log").write_bytes(seg3 + b"\x00" * 5)
    (part / "leader-epoch-checkpoint").write_bytes(encode_leader_epoch_checkpoint([EpochEntry(0, 0), EpochEntry(2, 3)]))
    (part / "partition.metadata").write_bytes(encode_partition_metadata(bytes(range(1, 17))))
    (root / "replication-offset-checkpoint").write_bytes(
        encode_offset_checkpoint([OffsetCheckpointEntry("orders", 0, 4), OffsetCheckpointEntry("other", 0, 9)]))
    (root / "recovery-point-offset-checkpoint").write_bytes(
        encode_offset_checkpoint([OffsetCheckpointEntry("orders", 0, 7)]))
    (root / "log-start-offset-checkpoint").write_bytes(encode_offset_checkpoint([OffsetCheckpointEntry("orders", 0, 0)]))


def test_summary_json(tmp_path) -> None:
    build(tmp_path)
    result = CliRunner().invoke(summary, [str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    obj = json.loads(result.output)
    assert (obj["topic"], obj["partition"]) == ("orders", 0)
    assert (obj["logStartOffset"], obj["logEndOffset"]) == (0, 5)
    assert (obj["batches"], obj["records"]) == (3, 5)
    assert obj["codecs"] == ["gzip", "none"] and obj["magics"] == [1, 2]
    assert (obj["minTimestamp"], obj["maxTimestamp"]) == (T0, T0 + 9)
    assert obj["producers"] == [77]
    assert obj["checkpoints"] == {"highWatermark": 4, "recoveryPoint": 7, "logStartOffset": 0}
    assert obj["topicId"] == "AQIDBAUGBwgJCgsMDQ4PEA"
    assert [s["invalidBytes"] for s in obj["segments"]] == [0, 5]
    texts = [f["text"] for f in obj["findings"]]
    assert "1 offset(s) above the high watermark 4 (not yet committed when it was checkpointed)" in texts
    assert "recovery point 7 is above the log end offset 5" in texts
    assert "5 invalid byte(s) at the end of the segment" in texts


def test_summary_plain_text(tmp_path) -> None:
    build(tmp_path)
    result = CliRunner().invoke(summary, [str(tmp_path / "orders-0")])
    lines = result.output.splitlines()
    assert lines[0] == f"Partition orders-0 ({tmp_path}/orders-0)"
    assert lines[1].startswith("  segments: 2 logStartOffset: 0 logEndOffset: 5 bytes: ")
    assert lines[2] == f"  batches: 3 records: 5 codecs: gzip,none magics: 1,2 timestamps: {T0}..{T0 + 9}"
    assert lines[4] == "  checkpoints: recoveryPoint: 7 highWatermark: 4 logStartOffset: 0"
    assert lines[5] == "  leaderEpochs: 0@0 2@3"


def test_malformed_checkpoint_is_a_finding_not_a_crash(tmp_path) -> None:
    build(tmp_path)
    (tmp_path / "replication-offset-checkpoint").write_text("0\n1\norders zero 4\n")
    result = CliRunner().invoke(summary, [str(tmp_path), "--json"])
    assert result.exit_code == 1  # the summary is printed; the error finding makes the exit status 1
    texts = [f["text"] for f in json.loads(result.output)["findings"]]
    assert any("Malformed line in checkpoint file" in t and "(line 3)" in t for t in texts)


def test_rich_renderable(tmp_path) -> None:
    import io

    from rich.console import Console

    from kdump.log.logdir import read_partition_dir
    from kdump.render.summary_text import summary_renderable
    from kdump.verify.partition_summary import read_partition_checkpoints, summarize_segments

    build(tmp_path)
    console = Console(file=io.StringIO(), width=150, color_system=None)
    partition = read_partition_dir(str(tmp_path / "orders-0"))
    console.print(summary_renderable(summarize_segments(partition, read_partition_checkpoints(partition, {}))))
    text = console.file.getvalue()
    assert "Partition orders-0" in text and "base offset" in text and "gzip" in text


def test_checkpoints_are_read_as_verify_reads_them(tmp_path) -> None:
    """A checkpoint too large to be one is refused unread (as ``kdump verify`` refuses it), not read whole."""
    from kdump.log.state_files import MAX_SNAPSHOT_BYTES

    build(tmp_path)
    with open(tmp_path / "replication-offset-checkpoint", "r+b") as handle:
        handle.truncate(MAX_SNAPSHOT_BYTES + 1)   # sparse: no disk used
    result = CliRunner().invoke(summary, [str(tmp_path), "--json"])
    assert result.exit_code == 1
    texts = [f["text"] for f in json.loads(result.output)["findings"]]
    assert f"{MAX_SNAPSHOT_BYTES + 1} bytes is more than the {MAX_SNAPSHOT_BYTES} bytes such a file can reasonably " \
           f"hold; not read" in texts
    verify = CliRunner().invoke(verify_command, [str(tmp_path), "--json", "--jobs", "1"])
    assert any(f"{MAX_SNAPSHOT_BYTES + 1} bytes is more than" in line for line in verify.output.splitlines())
