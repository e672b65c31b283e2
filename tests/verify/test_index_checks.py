"""verify-index rules: every healthy broker layout passes, every damaged copy fails with its rule."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kdump.findings import Finding
from kdump.log.logdir import read_partition_dir
from kdump.verify.segment_check import SegmentCheck as verify_segment
from kdump_testing import index_fixtures

fx = index_fixtures()

EXPECTED_ERRORS = {
    "bad-position-not-batch": {"position-not-batch"},
    "bad-position-past-log": {"position-past-log"},
    "bad-offset-not-increasing": {"offset-not-increasing", "offset-behind-position"},
    "bad-index-size": {"index-size"},
    "bad-time-not-max": {"timestamp-not-max"},
    "bad-time-past-log": {"offset-past-log"},
    "bad-time-not-increasing": {"timestamp-not-increasing", "timestamp-not-max"},
    "bad-timeindex-size": {"index-size"},
}
EXPECTED_NOTES = {
    "healthy-leader": set(),
    "healthy-follower-pre41": {"offset-not-batch-last"},
    "healthy-cleaned": {"offset-not-batch-last"},
    "healthy-padded": {"padding"},
    "healthy-empty-active": {"padding"},
    "healthy-time-inside-batch": {"offset-inside-batch"},
    "note-orphan-index": {"log-missing"},
}


def findings_for(name: str, root: Path) -> list[Finding]:
    part = read_partition_dir(fx.make_case(name, str(root)))
    out: list[Finding] = []
    for i, seg in enumerate(part.segments):
        out.extend(verify_segment(seg, active=i == len(part.segments) - 1))
    return out


def test_every_case_is_covered() -> None:
    assert set(fx.CASES) == set(EXPECTED_ERRORS) | set(EXPECTED_NOTES)


@pytest.mark.parametrize("name", sorted(EXPECTED_NOTES))
def test_healthy_layouts_pass(name: str, tmp_path: Path) -> None:
    found = findings_for(name, tmp_path)
    assert [f for f in found if f.is_error] == []
    assert {f.check for f in found} == EXPECTED_NOTES[name]


@pytest.mark.parametrize("name", sorted(EXPECTED_ERRORS))
def test_damaged_copies_fail(name: str, tmp_path: Path) -> None:
    found = findings_for(name, tmp_path)
    assert {f.check for f in found if f.is_error} == EXPECTED_ERRORS[name]


def test_position_finding_names_entry_and_the_batch_it_falls_in(tmp_path: Path) -> None:
    (finding,) = findings_for("bad-position-not-batch", tmp_path)
    log = fx.leader_log()
    entries = fx.leader_indexes(log).offset_entries
    offset, position = entries[2]
    assert (finding.entry, finding.offset, finding.position) == (2, offset, position + 5)
    batch = next(b for b in fx.batches_of(log) if b.position == position)
    assert finding.log_says == f"batch at position {position} holds offsets {batch.base_offset}..{batch.last_offset}"


def test_follower_note_quotes_kafkas_dump_mismatch(tmp_path: Path) -> None:
    notes = findings_for("healthy-follower-pre41", tmp_path)
    log = fx.leader_log()
    by_pos = {b.position: b for b in fx.batches_of(log)}
    offset, position = fx.chunked_indexes(log).offset_entries[0]
    assert f'"Index offset: {offset}, log offset: {by_pos[position].last_offset}"' in notes[0].text


def test_time_entry_reached_earlier_is_an_error(tmp_path: Path) -> None:
    # An entry whose timestamp the log already reached in an earlier batch: a lookup would skip records.
    log = fx.leader_log()
    b = fx.leader_indexes(log)
    batches = fx.batches_of(log)
    # batch 3 dips below batch 2's max, so the running max at batch 3 was first reached in batch 2
    assert batches[3].max_timestamp < batches[2].max_timestamp
    tindex = struct.pack(">qi", batches[2].max_timestamp, batches[3].last_offset - fx.BASE)
    d = fx.write_segment(str(tmp_path / "t-0"), log, b.offset_index_bytes(), tindex)
    found = list(verify_segment(read_partition_dir(d).segments[0]))
    assert {f.check for f in found if f.is_error} == {"timestamp-reached-earlier"}


def test_deep_density_note(tmp_path: Path) -> None:
    part = read_partition_dir(fx.make_case("healthy-leader", str(tmp_path)))
    assert not [f for f in verify_segment(part.segments[0], deep=True, interval=fx.INTERVAL)]
    notes = list(verify_segment(part.segments[0], deep=True, interval=64 * fx.INTERVAL))
    assert [f.check for f in notes] == ["density"]  # a broker writes no entry in this little log at that interval
    notes = list(verify_segment(part.segments[0], deep=True, interval=2000))  # denser than configured
    assert [f.check for f in notes] == ["density"]
