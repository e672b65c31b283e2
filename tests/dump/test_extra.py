"""kdump's extensions to --files: checkpoint files, temporary segment names, directory expansion."""

from __future__ import annotations

import io
import json

from kdump.dump.extra import dump_extra
from kdump.dump.paths import expand_paths
from kdump.dump.run import DumpOptions, DumpRun
from kdump.format.checkpoint import encode_partition_metadata
from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump.format.txnindex import encode_aborted_txn
from kdump.render.dialect import parse_kafka_version


def make_run(json_output: bool = False) -> DumpRun:
    return DumpRun(options=DumpOptions(json=json_output, dialect=parse_kafka_version("4.3")),
                   out=io.StringIO(), err=io.StringIO())


def dump(path, json_output: bool = False) -> DumpRun:
    run = make_run(json_output)
    assert dump_extra(run, str(path)) is True
    return run


def test_offset_checkpoints(tmp_path) -> None:
    for name, field in [("recovery-point-offset-checkpoint", "recoveryPoint"),
                        ("replication-offset-checkpoint", "highWatermark"),
                        ("log-start-offset-checkpoint", "logStartOffset"),
                        ("cleaner-offset-checkpoint", "firstDirtyOffset")]:
        path = tmp_path / name
        path.write_text("0\n2\norders 0 42\norders 1 7\n")
        assert dump(path).out.getvalue() == (f"Offset checkpoint ({field}) version: 0 entries: 2\n"
                                             f"topic: orders partition: 0 {field}: 42\n"
                                             f"topic: orders partition: 1 {field}: 7\n")
    obj = json.loads(dump(tmp_path / "replication-offset-checkpoint", True).out.getvalue())
    assert obj["entries"] == [{"topic": "orders", "partition": 0, "highWatermark": 42},
                              {"topic": "orders", "partition": 1, "highWatermark": 7}]


def test_leader_epoch_and_partition_metadata(tmp_path) -> None:
    (tmp_path / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n5 100\n")
    assert dump(tmp_path / "leader-epoch-checkpoint").out.getvalue() == \
        "Leader epoch checkpoint version: 0 entries: 2\nepoch: 0 startOffset: 0\nepoch: 5 startOffset: 100\n"
    (tmp_path / "partition.metadata").write_bytes(encode_partition_metadata(bytes(range(1, 17))))
    assert dump(tmp_path / "partition.metadata").out.getvalue() == "version: 0 topicId: AQIDBAUGBwgJCgsMDQ4PEA\n"


def test_meta_properties_quorum_state_clean_shutdown(tmp_path) -> None:
    (tmp_path / "meta.properties").write_text("#\nversion=1\ncluster.id=abc\nnode.id=3\n")
    assert dump(tmp_path / "meta.properties").out.getvalue() == "version: 1\ncluster.id: abc\nnode.id: 3\n"
    (tmp_path / "quorum-state").write_text('{"leaderId":1,"leaderEpoch":4,"currentVoters":[{"voterId":1}]}')
    assert dump(tmp_path / "quorum-state").out.getvalue() == \
        'leaderId: 1\nleaderEpoch: 4\ncurrentVoters: [{"voterId":1}]\n'
    (tmp_path / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":17}')
    assert dump(tmp_path / ".kafka_cleanshutdown").out.getvalue() == \
        "Clean shutdown marker version: 0 brokerEpoch: 17\n"


def test_malformed_line_is_one_error_line_naming_file_and_line(tmp_path) -> None:
    path = tmp_path / "recovery-point-offset-checkpoint"
    path.write_text("0\n2\norders 0 42\norders one 7\n")
    run = dump(path)
    assert run.out.getvalue() == ""
    assert run.err.getvalue() == f"Error: Malformed line in checkpoint file [{path}]: orders one 7 (line 4)\n"
    assert run.failed
    path.write_text("1\n0\n")
    assert dump(path).err.getvalue() == \
        f"Error: Unrecognised version:1, expected version: 0 in checkpoint file at: {path} (line 1)\n"


def test_temporary_suffixes_dump_the_underlying_type(tmp_path) -> None:
    path = tmp_path / "00000000000000000000.txnindex.deleted"
    path.write_bytes(encode_aborted_txn(1, 2, 3, 4))
    lines = dump(path).out.getvalue().splitlines()
    assert lines[0].startswith("kdump: 00000000000000000000.txnindex.deleted is a .txnindex file scheduled for "
                               "asynchronous deletion")
    assert lines[1] == "version: 0 producerId: 1 firstOffset: 2 lastOffset: 3 lastStableOffset: 4"
    log = tmp_path / "00000000000000000000.log.swap"
    log.write_bytes(encode_batch_v2([Record(0, 1000, b"k", b"v")], base_offset=0))
    out = dump(log).out.getvalue().splitlines()
    assert "(.swap)" in out[0] and out[1] == "Log starting offset: 0" and out[2].startswith("baseOffset: 0 ")


def test_unhandled_names_are_left_to_kafka_dispatch(tmp_path) -> None:
    run = make_run()
    for name in ("00000000000000000000.log", "foo.bar", "00000000000000000000.lock.deleted"):
        assert dump_extra(run, str(tmp_path / name)) is False
    assert run.out.getvalue() == ""


def test_expand_paths_order(tmp_path) -> None:
    root = tmp_path / "logs"
    part = root / "orders-0"
    part.mkdir(parents=True)
    (root / "orders-10").mkdir()
    (root / "orders-2").mkdir()
    for name in ("00000000000000000005.log", "00000000000000000005.index", "00000000000000000000.timeindex",
                 "00000000000000000000.log", "00000000000000000000.index", "00000000000000000005.snapshot",
                 "00000000000000000000.txnindex", "leader-epoch-checkpoint", "partition.metadata",
                 "00000000000000000003.log.deleted"):
        (part / name).write_bytes(b"")
    (root / "orders-2" / "00000000000000000000.log").write_bytes(b"")
    (root / "orders-10" / "00000000000000000000.log").write_bytes(b"")
    (root / "meta.properties").write_text("version=1\n")
    (root / "recovery-point-offset-checkpoint").write_text("0\n0\n")
    p = str(root)
    assert expand_paths([p, "x.log"]) == [
        f"{p}/meta.properties", f"{p}/recovery-point-offset-checkpoint",
        f"{p}/orders-0/00000000000000000000.log", f"{p}/orders-0/00000000000000000000.index",
        f"{p}/orders-0/00000000000000000000.timeindex", f"{p}/orders-0/00000000000000000000.txnindex",
        f"{p}/orders-0/00000000000000000005.log", f"{p}/orders-0/00000000000000000005.index",
        f"{p}/orders-0/00000000000000000005.snapshot",
        f"{p}/orders-0/00000000000000000003.log.deleted", f"{p}/orders-0/leader-epoch-checkpoint",
        f"{p}/orders-0/partition.metadata",
        f"{p}/orders-2/00000000000000000000.log", f"{p}/orders-10/00000000000000000000.log",
        "x.log",
    ]
    assert expand_paths([str(part)])[0] == f"{part}/00000000000000000000.log"
