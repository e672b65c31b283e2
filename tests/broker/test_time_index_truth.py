"""Case 4: a corrupt time index entry. A broker's ListOffsets trusts the entry (TimeIndex.lookup then
LogSegment.findOffsetByTimestamp, Kafka 4.3.0): it starts at the entry's offset and skips the records
before it. ``find --timestamp`` says both answers and why; ``--from`` prints what the log holds, with a note.

The partition is built here: offsets 0..29, one record per batch, record o at time T0 + 1000*o, both
indexes with an entry per batch; slot 10 of the time index is corrupted to (T0 + 10000, offset 15)."""

from __future__ import annotations

import json
from pathlib import Path

from kdump.format.encode import encode_batch_v2
from kdump.format.index import encode_offset_entry, encode_time_entry
from kdump.format.records import Record
from kdump_testing import run_kdump

T0 = 1_700_000_000_000
TARGET = T0 + 10_500     # between slot 10's timestamp and slot 11's: the first record at or after it is 11


def _partition(root: Path) -> Path:
    part = root / "t-0"
    part.mkdir(parents=True)
    log, index, time_index = b"", b"", b""
    for o in range(30):
        if o:   # LogSegment.append indexes a batch once bytes were appended since the last entry
            index += encode_offset_entry(0, o, len(log))
        time_index += encode_time_entry(0, T0 + 1000 * o, 15 if o == 10 else o)
        log += encode_batch_v2([Record(o, T0 + 1000 * o, b"k", b"v")], base_offset=o)
    (part / "00000000000000000000.log").write_bytes(log)
    (part / "00000000000000000000.index").write_bytes(index)
    (part / "00000000000000000000.timeindex").write_bytes(time_index)
    return part


def test_find_says_what_the_broker_answers_and_what_the_log_holds(tmp_path: Path) -> None:
    part = _partition(tmp_path)
    result = run_kdump("find", str(part), "--timestamp", str(TARGET), "--json")
    assert result.exit_code == 0, result.stdout + result.stderr
    obj = json.loads(result.stdout)
    assert obj["batch"]["records"][0]["offset"] == 15                 # the broker's answer
    assert obj["logHolds"]["offset"] == 11 and obj["logHolds"]["timestamp"] == T0 + 11_000
    assert "00000000000000000000.timeindex: slot 10 (position 120) holds timestamp" in obj["logHolds"]["note"]
    text = run_kdump("find", str(part), "--timestamp", str(TARGET))
    assert "offset: 15 " in text.stdout and "Note: the broker answers offset 15" in text.stdout, text.stdout


def test_from_prints_what_the_log_holds_with_a_note(tmp_path: Path) -> None:
    part = _partition(tmp_path)
    result = run_kdump("--files", str(part / "00000000000000000000.log"), "--from", str(TARGET))
    assert result.exit_code == 0, result.stderr
    offsets = [int(line.split()[2]) for line in result.stdout.splitlines() if line.startswith("| offset: ")]
    assert offsets == list(range(11, 30))
    assert "slot 10 (position 120)" in result.stderr and "skips offset 11" in result.stderr, result.stderr
