"""A small tiered partition built in a test's tmp dir: a log dir (local segments, checkpoints and a
``__remote_log_metadata-0`` whose records follow Kafka's RemoteLogMetadataSerde framing) and a remote store in
LocalTieredStorage's layout. The real broker's layout and records are checked in
tests/kafka/test_real_broker_tiered.py; this one lets unit tests damage one thing at a time, fast.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kdump.format.checkpoint import uuid_to_string
from kdump.format.encode import encode_batch_v2
from kdump.format.messages import tables
from kdump.format.messages.encode import metadata_record
from kdump.format.records import Record
from kdump.format.snapshot import encode_producer_snapshot

TOPIC_ID = bytes(range(1, 17))
SEGMENT_IDS = [bytes([0xF8] * 15 + [i]) for i in range(4)]   # base64url starting with "-" and holding "_"
RETRY = 3   # the index of a segment copied again (``build_tiered(retry=i)``): the copy of segment i after a cut
T0 = 1_767_225_600_000
COPY_STARTED, COPY_FINISHED, DELETE_STARTED, DELETE_FINISHED = range(4)


@dataclass
class Tiered:
    log_dir: Path
    remote_root: Path
    remote_dir: Path
    segment_ids: list[str]     # as the files name them

    def remote_log(self, i: int) -> Path:
        return self.remote_dir / f"{i * 10:020d}-{self.segment_ids[i]}.log"


def _batch(base: int, epoch: int) -> bytes:
    return encode_batch_v2([Record(base + i, T0 + base + i, f"k{base + i}".encode(), b"v" * 20) for i in range(10)],
                           base_offset=base, partition_leader_epoch=epoch)


def _segment_id(raw: bytes) -> dict:
    return {"TopicIdPartition": {"Name": "t", "Partition": 0, "Id": TOPIC_ID}, "Id": raw}


def metadata_values(states: dict[int, list[int]], sizes: dict[int, int],
                    ranges: dict[int, int] | None = None) -> list[bytes]:
    """The framed records: per remote segment i, a RemoteLogSegmentMetadataRecord (COPY_SEGMENT_STARTED) then
    one RemoteLogSegmentMetadataUpdateRecord per later state in ``states[i]``; segment i holds the offsets of
    slot ``ranges[i]`` (i by default), slot j being offsets 10j to 10j+9."""
    registry = tables.remote_log((4, 3))
    values = []
    for i, later in states.items():
        slot = (ranges or {}).get(i, i)
        epochs = [{"LeaderEpoch": 0 if slot < 2 else 1, "Offset": slot * 10}]
        values.append(metadata_record(registry[0], 0, {
            "RemoteLogSegmentId": _segment_id(SEGMENT_IDS[i]), "StartOffset": slot * 10, "EndOffset": slot * 10 + 9,
            "BrokerId": 1, "MaxTimestampMs": T0 + slot * 10 + 9, "EventTimestampMs": T0, "SegmentLeaderEpochs": epochs,
            "SegmentSizeInBytes": sizes[i], "CustomMetadata": None, "RemoteLogSegmentState": COPY_STARTED,
            "TxnIndexEmpty": True}))
        for state in later:
            values.append(metadata_record(registry[1], 0, {
                "RemoteLogSegmentId": _segment_id(SEGMENT_IDS[i]), "BrokerId": 1, "EventTimestampMs": T0,
                "CustomMetadata": None, "RemoteLogSegmentState": state}))
    return values


def build_tiered(root: Path, states: dict[int, list[int]] | None = None, retry: int | None = None) -> Tiered:
    """Three remote segments (offsets 0-9 and 10-19 in epoch 0, 20-29 in epoch 1), copied (unless ``states``
    says otherwise), and a local segment 30-39; log start offset 0. ``retry``: segment ``retry``'s offsets
    copied a second time, under id ``SEGMENT_IDS[RETRY]``, to COPY_SEGMENT_FINISHED (after a copy cut short)."""
    states = {0: [COPY_FINISHED], 1: [COPY_FINISHED], 2: [COPY_FINISHED]} if states is None else dict(states)
    slots = {i: i for i in range(3)}
    if retry is not None:
        states[RETRY], slots[RETRY] = [COPY_FINISHED], retry
    log_dir, remote_root = root / "logdir", root / "remote"
    remote_dir = remote_root / "kafka-tiered-storage" / f"t-0-{uuid_to_string(TOPIC_ID)}"
    remote_dir.mkdir(parents=True)
    ids = [uuid_to_string(raw) for raw in SEGMENT_IDS]
    sizes = {}
    for i, slot in slots.items():
        data = _batch(slot * 10, 0 if slot < 2 else 1)
        sizes[i] = len(data)
        stem = remote_dir / f"{slot * 10:020d}-{ids[i]}"
        stem.with_suffix(".log").write_bytes(data)
        for suffix in (".index", ".timeindex"):
            stem.with_suffix(suffix).write_bytes(b"")
        stem.with_suffix(".snapshot").write_bytes(encode_producer_snapshot([]))   # no producer ids in these batches
        stem.with_suffix(".leader_epoch_checkpoint").write_text("0\n1\n0 0\n" if slot < 2 else "0\n2\n0 0\n1 20\n")
    local = log_dir / "t-0"
    local.mkdir(parents=True)
    (local / f"{30:020d}.log").write_bytes(_batch(30, 1))
    (local / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n1 20\n")
    (local / "partition.metadata").write_text(f"version: 0\ntopic_id: {uuid_to_string(TOPIC_ID)}")
    (log_dir / "log-start-offset-checkpoint").write_text("0\n1\nt 0 0\n")
    (log_dir / "meta.properties").write_text("node.id=1\nversion=1\n")
    meta = log_dir / "__remote_log_metadata-0"
    meta.mkdir()
    log = b"".join(encode_batch_v2([Record(n, T0, None, value)], base_offset=n, partition_leader_epoch=0)
                   for n, value in enumerate(metadata_values(states, sizes, slots)))
    (meta / f"{0:020d}.log").write_bytes(log)
    return Tiered(log_dir, remote_root, remote_dir, ids)
