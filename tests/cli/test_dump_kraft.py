"""KRaft `.checkpoint` snapshots and __cluster_metadata logs (Kafka's DumpLogSegmentsTest rows 7-9)."""

from __future__ import annotations

from types import SimpleNamespace

from kdump.format.control import ControlType, encode_control_key, encode_end_txn_marker
from kdump.format.encode import encode_batch_v2
from kdump.format.messages import tables
from kdump.format.messages.encode import control_value, metadata_record
from kdump.format.records import Record
from kdump_testing import run_kdump

# Kafka 4.3's metadata and control record definitions, by their generated type names.
md = SimpleNamespace(**{s.type_name: s for s in tables.metadata((4, 3)).values()})
ctl = SimpleNamespace(**{s.type_name: s for s in tables.control((4, 3)).values()})

T0 = 1_700_000_000_000
TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"


def metadata_records() -> list[bytes]:
    return [
        metadata_record(md.REGISTER_BROKER_RECORD, 0, {"brokerId": 0, "incarnationId": TOPIC_ID, "brokerEpoch": 0}),
        metadata_record(md.REGISTER_BROKER_RECORD, 0, {"brokerId": 1, "incarnationId": TOPIC_ID, "brokerEpoch": 0}),
        metadata_record(md.TOPIC_RECORD, 0, {"name": "test-topic", "topicId": TOPIC_ID}),
        metadata_record(md.PARTITION_CHANGE_RECORD, 0, {"partitionId": 0, "topicId": TOPIC_ID, "isr": [0, 1]}),
    ]


def data_batch(base: int, values: list[bytes]) -> bytes:
    return encode_batch_v2([Record(base + i, T0, None, v) for i, v in enumerate(values)], base_offset=base)


def control_batch(base: int, pairs: list[tuple[int, bytes]]) -> bytes:
    return encode_batch_v2([Record(base + i, T0, encode_control_key(t), v) for i, (t, v) in enumerate(pairs)],
                           base_offset=base, is_control=True)


def test_metadata_log_with_a_bogus_record(tmp_path):
    bogus = b"\x90\x4e\x90\x4e"  # uvarints 10000, 10000: no such frame version / record type
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data_batch(0, metadata_records()) + data_batch(4, [bogus, *metadata_records()]))
    for extra in ([], ["--skip-record-metadata"]):
        result = run_kdump("--files", str(path), "--cluster-metadata-decoder", *extra)
        assert result.exit_code == 0, result.stderr
        assert "Log starting offset: 0" in result.stdout
        assert "TOPIC_RECORD" in result.stdout and "BROKER_RECORD" in result.stdout
        assert "skipping" in result.stdout


def snapshot_bytes() -> bytes:
    voters = {"voters": [{"voterId": i, "voterDirectoryId": TOPIC_ID,
                          "endpoints": [{"name": "CONTROLLER", "host": "localhost", "port": 9093 + i}],
                          "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1}}
                         for i in range(3)]}
    header = control_batch(0, [
        (ControlType.SNAPSHOT_HEADER, control_value(ctl.SNAPSHOT_HEADER_RECORD, {"lastContainedLogTimestamp": 10000})),
        (ControlType.KRAFT_VERSION, control_value(ctl.KRAFT_VERSION_RECORD, {"kRaftVersion": 1})),
        (ControlType.KRAFT_VOTERS, control_value(ctl.VOTERS_RECORD, voters)),
    ])
    footer = control_batch(7, [(ControlType.SNAPSHOT_FOOTER, control_value(ctl.SNAPSHOT_FOOTER_RECORD, {}))])
    return header + data_batch(3, metadata_records()) + footer


def test_kraft_snapshot(tmp_path):
    path = tmp_path / "00000000000000000000-0000000000.checkpoint"
    path.write_bytes(snapshot_bytes())
    result = run_kdump("--files", str(path), "--cluster-metadata-decoder")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "Snapshot end offset: 0, epoch: 0" in out
    for text in ("TOPIC_RECORD", "BROKER_RECORD", "SnapshotHeader", "SnapshotFooter", "KRaftVersion", "KRaftVoters",
                 '"lastContainedLogTimestamp":10000'):
        assert text in out, text
    skipped = run_kdump("--files", str(path), "--cluster-metadata-decoder", "--skip-record-metadata").stdout
    assert "Snapshot end offset: 0, epoch: 0" in skipped and "TOPIC_RECORD" in skipped and "BROKER_RECORD" in skipped
    for text in ("SnapshotHeader", "SnapshotFooter", "KRaftVersion", "KRaftVoters"):
        assert text not in skipped, text


def test_bootstrap_checkpoint_header(tmp_path):
    path = tmp_path / "bootstrap.checkpoint"
    path.write_bytes(data_batch(0, metadata_records()))
    result = run_kdump("--files", str(path))
    assert result.stdout.splitlines()[1] == "KRaft bootstrap snapshot"


def test_control_records_in_every_form(tmp_path):
    """Kafka's testDumpControlRecord, and how older dialects named the same control types."""
    leader_change = control_value(ctl.LEADER_CHANGE_MESSAGE, {"leaderId": 1, "voters": [{"voterId": 1}],
                                                               "grantingVoters": [{"voterId": 1}]})
    pieces = [
        control_batch(0, [(ControlType.COMMIT, encode_end_txn_marker(7))]),
        control_batch(1, [(ControlType.LEADER_CHANGE, leader_change)]),
        control_batch(2, [(ControlType.SNAPSHOT_HEADER, control_value(ctl.SNAPSHOT_HEADER_RECORD,
                                                                      {"lastContainedLogTimestamp": 5}))]),
        control_batch(3, [(ControlType.SNAPSHOT_FOOTER, control_value(ctl.SNAPSHOT_FOOTER_RECORD, {}))]),
        control_batch(4, [(ControlType.KRAFT_VERSION, control_value(ctl.KRAFT_VERSION_RECORD, {"kRaftVersion": 1}))]),
        control_batch(5, [(ControlType.KRAFT_VOTERS, control_value(ctl.VOTERS_RECORD, {"voters": []}))]),
        control_batch(6, [(9, b"")]),
    ]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(pieces))
    out = run_kdump("--files", str(path), "--cluster-metadata-decoder").stdout
    for text in ("endTxnMarker: COMMIT coordinatorEpoch: 7", 'LeaderChange: {"version":0,"leaderId":1,',
                 ' SnapshotHeader {"version":0,"lastContainedLogTimestamp":5}', ' SnapshotFooter {"version":0}',
                 ' KRaftVersion {"version":0,"kRaftVersion":1}', ' KRaftVoters {"version":0,"voters":[]}',
                 " controlType: UNKNOWN(9)"):
        assert text in out, text
    # Scala 3.3-3.7: LEADER_CHANGE and the KRaft types had no JSON form yet.
    old = run_kdump("--files", str(path), "--deep-iteration", "--kafka-version", "3.5").stdout
    assert " controlType: LEADER_CHANGE(2)" in old and " controlType: UNKNOWN(5)" in old
    assert " SnapshotHeader {" in old
    # 3.0-3.2 named snapshot records without JSON; 2.7/2.8 used the pre-KIP-595 numbering.
    assert " controlType: SNAPSHOT_HEADER(3)" in run_kdump("--files", str(path), "--deep-iteration",
                                                            "--kafka-version", "3.1").stdout
    v28 = run_kdump("--files", str(path), "--deep-iteration", "--kafka-version", "2.8.1").stdout
    assert " controlType: QUORUM_REASSIGNMENT(2)" in v28 and " controlType: LEADER_CHANGE(3)" in v28


def test_deleted_and_partial_kraft_snapshots_keep_their_header(tmp_path):
    for suffix in (".deleted", ".part"):
        path = tmp_path / f"00000000000000000008-0000000003.checkpoint{suffix}"
        path.write_bytes(snapshot_bytes())
        result = run_kdump("--files", str(path))
        assert result.exit_code == 0, result.stderr
        lines = result.stdout.splitlines()
        assert lines[1].startswith(f"kdump: {path.name} is a .checkpoint file") and f"({suffix})" in lines[1]
        assert lines[2] == "Snapshot end offset: 8, epoch: 3"
