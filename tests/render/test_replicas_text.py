"""``kdump replicas``' terminal table, rendered through a fixed-width Rich console."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

from rich.console import Console

from kdump.broker.replica_report import ReplicasOptions, analyze
from kdump.gen.cluster_generator import ClusterGenSpec, generate_cluster
from kdump.render.replicas_text import partition_renderable


def test_table_shows_leader_isr_offsets_status_and_verdict(tmp_path: Path) -> None:
    generate_cluster(str(tmp_path / "c"), ClusterGenSpec("t", 3, 1, "unclean", 40, value_bytes=8))
    (report,) = analyze([str(tmp_path / "c")], ReplicasOptions())
    out = StringIO()
    Console(file=out, width=160, color_system=None).print(partition_renderable(report))
    text = out.getvalue()
    assert "t-0  leader 2 at epoch 2 (metadata), ISR [2, 3]" in text
    assert "truncate to 40, lose 10 (10 committed)" in text          # R=40, R/4 acks=1 records on broker 1
    assert "broker 1 truncates to 40 in 1 round(s)" in text
    assert text.rstrip().endswith("t-0: DATA LOSS: followers would drop 10 record(s) the leader does not hold, "
                                  "10 of them committed")
