"""One segment on every core: with ``--jobs``, a segment of more than the split size is dumped (and its records
decoded by ``verify --deep``) in byte ranges by worker processes, and what comes out is the bytes of
``--jobs 1``: the file's lines, the offset gaps found across range boundaries, errors and padding notes where
one walk meets them, the JSON objects and the exit code. ``KDUMP_SPLIT_BYTES`` cuts these small segments into
many ranges (1: a range per batch)."""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kdump.dump import tape
from kdump.dump.files import LogRange, _work
from kdump.dump.log import DumpedRange, dump_batches, join_ranges
from kdump.dump.run import DumpOptions, DumpRun
from kdump.errors import CorruptRecordError
from kdump.format.codecs import Codec
from kdump.format.crc import crc32c
from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump.log.batches import LogBatches
from kdump.log.logdir import SegmentFiles
from kdump.log.ranges import _index_cuts, batch_ranges
from kdump.log.segment import ReadOnlyFile
from kdump.log.writer import LogConfig, PartitionLog
from kdump.render.summaries import DumpSummaries
from kdump.verify.segment_check import Decoded, DecodedRanges, RangeRecords
from kdump_testing import run_kdump

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
T0 = 1_700_000_000_000
_CRC = struct.Struct(">I")
_COUNT_AT = 57          # recordsCount in a v2 batch header
_CRC_AT, _CRC_FROM = 17, 21


def _batches() -> list[bytearray]:
    """30 batches; every fifth gzip-compressed; an offset gap after every other one (so across range
    boundaries too)."""
    out, offset = [], 0
    for i in range(30):
        records = [Record(offset + j, T0 + offset + j, b"key-%d" % (offset + j), b"value %d" % i * 3)
                   for j in range(3)]
        out.append(bytearray(encode_batch_v2(records, base_offset=offset, partition_leader_epoch=i // 10,
                                             codec=Codec.GZIP if i % 5 == 0 else Codec.NONE)))
        offset += 3 + i % 2
    return out


def _fix_crc(batch: bytearray) -> None:
    batch[_CRC_AT:_CRC_FROM] = _CRC.pack(crc32c(bytes(batch[_CRC_FROM:])))


def _write(directory: Path, batches: list[bytearray], tail: bytes = b"") -> Path:
    directory.mkdir(parents=True)
    path = directory / "00000000000000000000.log"
    path.write_bytes(b"".join(batches) + tail)
    return path


@pytest.fixture(scope="module")
def segments(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A segment each: healthy then zero padding; a CRC-corrupt batch and a partial entry at the end; records
    that cannot be decoded under a valid CRC; framing broken (a size below Kafka's minimum) in the middle;
    healthy with an offset index entry at every batch (cut at index entries)."""
    root = tmp_path_factory.mktemp("split")
    padded = _write(root / "padded-0", _batches(), bytes(3000))
    crc = _batches()
    crc[14][-3] ^= 0xFF
    corrupt = _write(root / "crc-0", crc, bytes(_batches()[3][:40]))
    undecodable = _batches()
    undecodable[17][_COUNT_AT:_COUNT_AT + 4] = struct.pack(">i", 5)
    _fix_crc(undecodable[17])
    records = _write(root / "records-0", undecodable)
    framing = _batches()
    framing[12][8:12] = struct.pack(">i", 5)
    broken = _write(root / "framing-0", framing)
    with PartitionLog(str(root / "indexed-0"), LogConfig(index_interval_bytes=100)) as log:
        for batch in _batches():
            log.append(bytes(batch))
    return [padded, corrupt, records, broken, root / "indexed-0" / "00000000000000000000.log"]


MODES = [["--print-data-log"], ["--deep-iteration"], [], ["--print-data-log", "--json"],
         ["--print-data-log", "--kafka-version", "2.8"]]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: " ".join(m) or "shallow")
def test_a_segment_dumped_in_ranges_is_the_dump_of_one_walk(segments: list[Path], mode: list[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["--files", ",".join(map(str, segments)), *mode]
    one = run_kdump(*args, "--jobs", "1")
    assert one.exit_code == 1 and "Error:" in one.stdout + one.stderr
    assert "zero padding" in one.stderr and ("invalid bytes" in one.stdout or "--json" in mode)
    if "--print-data-log" in mode and "--json" not in mode:
        assert "is followed by" in one.stderr
    for split in ("1", "700"):   # a range a batch; about three batches a range
        monkeypatch.setenv("KDUMP_SPLIT_BYTES", split)
        assert run_kdump(*args, "--jobs", "2") == one, split


@pytest.mark.parametrize("mode", [["--print-data-log"], ["--print-data-log", "--json"]], ids=" ".join)
def test_legacy_and_compressed_segments_dumped_in_ranges(mode: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["--files", str(FIXTURES / "logdirs"), *mode]   # v0, v1 snappy, gzip, lz4, zstd, transactions
    one = run_kdump(*args, "--jobs", "1")
    monkeypatch.setenv("KDUMP_SPLIT_BYTES", "300")
    assert run_kdump(*args, "--jobs", "2") == one


@pytest.mark.parametrize("command", [["verify", "--deep"], ["verify", "--deep", "--json"],
                                     ["verify-index", "--deep", "--strict"]], ids=" ".join)
def test_verify_deep_in_ranges_finds_what_one_walk_finds(segments: list[Path], command: list[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    logs = str(segments[0].parents[1])
    one = run_kdump(*command, logs, str(FIXTURES / "logdirs"), "--jobs", "1")
    assert one.exit_code == 1
    monkeypatch.setattr("kdump.cli.parallel.INLINE_BYTES", 0)   # every range in a worker, however small
    for split in ("1", "700"):
        monkeypatch.setenv("KDUMP_SPLIT_BYTES", split)
        assert run_kdump(*command, logs, str(FIXTURES / "logdirs"), "--jobs", "2") == one, split


def test_ranges_start_where_one_walk_reaches_and_cover_the_file(segments: list[Path]) -> None:
    for path in segments:
        with ReadOnlyFile(str(path)) as log:
            reached = set()     # where the walk from 0 goes on from
            with contextlib.suppress(CorruptRecordError):   # framing-0 breaks
                reached.update(b.position + b.size for b in LogBatches(log, check_crc=False))
            ranges = list(batch_ranges(SegmentFiles(0, str(path)), log, 700))
            assert ranges[0][0] == 0 and ranges[-1][1] == log.size and len(ranges) >= 3
            assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
            assert {start for start, _ in ranges[1:]} <= reached
            assert list(batch_ranges(SegmentFiles(0, str(path)), log, log.size)) == [(0, log.size)]
    indexed = segments[-1]
    with ReadOnlyFile(str(indexed)) as log:
        seg = SegmentFiles(0, str(indexed), str(indexed.with_suffix(".index")))
        cuts = list(batch_ranges(seg, log, 700))
        assert cuts == list(batch_ranges(SegmentFiles(0, str(indexed)), log, 700))   # an entry at every batch
        assert list(_index_cuts(seg, log, 700, log.size)) == [start for start, _ in cuts[1:]]


def test_a_file_of_up_to_the_split_size_is_dumped_whole(segments: list[Path]) -> None:
    path = str(segments[0])
    size = segments[0].stat().st_size
    assert list(_work([(path, False)], DumpOptions(), size)) == [[(path, False)]]
    ranges = list(_work([(path, False)], DumpOptions(), size // 2))
    assert all(isinstance(r, LogRange) for r in ranges)
    assert [(r.start, r.end) for r in ranges] == [(0, ranges[0].end), (ranges[0].end, size)]


def test_a_range_that_does_not_end_where_the_next_begins_is_dumped_on_from_where_it_ended(
        segments: list[Path]) -> None:
    # An index entry may confirm a batch the walk from 0 does not reach: the range before it then ends
    # elsewhere, and the parent dumps the rest itself from there, as one walk goes on.
    path = str(segments[0])
    out, alone = io.StringIO(), io.StringIO()
    run = DumpRun(DumpOptions(deep=True), out=out)
    with ReadOnlyFile(path) as segment:
        played = [(DumpedRange(0, 1000, 764, None, None, 0, 30), DumpSummaries()),
                  (DumpedRange(1000, 2000, 2000, None, None, 40, 70), DumpSummaries())]
        end = join_ranges(run, path, iter(played), segment, segment.size)
        assert end.valid_end == 4770 and end.padding_error is not None
        dump_batches(DumpRun(DumpOptions(deep=True), out=alone), path, segment, 764, segment.size)
    assert out.getvalue() == alone.getvalue() and out.getvalue().startswith("baseOffset: 17 ")
    assert next(iter(run.summaries.non_consecutive[os.path.abspath(path)])) == (30, 17)   # the first range's last


def test_batches_after_a_broken_range_are_decoded_by_the_walk() -> None:
    held = Decoded(7)
    ranges = [RangeRecords(0, 100, 100, False, {50: held}), RangeRecords(100, 200, 150, True, {120: held}),
              RangeRecords(200, 300, 300, False, {250: held})]
    decoded = DecodedRanges(iter(ranges))
    assert decoded._covering(50) is ranges[0] and decoded._covering(120) is ranges[1]
    assert decoded._covering(160) is None     # past where its walk stopped
    assert decoded._covering(250) is None     # the walk may not reach 200 at a batch


@pytest.mark.parametrize("errors", ["surrogateescape", "strict"])
def test_a_tape_plays_back_the_bytes_its_streams_would_have_written(tmp_path: Path, errors: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Pieces without surrogates go out as bytes (sendfile to a file), others as text; a long piece is read a
    # little at a time, its multi-byte characters cut between reads.
    monkeypatch.setattr(tape, "_READ_BYTES", 7)
    monkeypatch.setattr(tape, "_PIECE_BYTES", 40)
    writes = [(0, "Dumping é\n"), (0, "ok ünïcödé " * 9), (1, "Note: x\n"), (0, "bad \udcff byte ünï\n"), (0, "end\n")]
    if errors == "strict":
        writes = [w for w in writes if "\udcff" not in w[1]]
    recorded = tape.Tape(str(tmp_path))
    for stream, text in writes:
        (recorded.out, recorded.err)[stream].write(text)
    recorded.close()
    played, expected = (tmp_path / "out-played"), (tmp_path / "out-expected")
    with open(played, "w", errors=errors) as out, open(played.with_suffix(".err"), "w") as err:
        tape.play(recorded.name, out, err)
    with open(expected, "w", errors=errors) as out, open(expected.with_suffix(".err"), "w") as err:
        for stream, text in writes:
            (out, err)[stream].write(text)
    assert played.read_bytes() == expected.read_bytes()
    assert played.with_suffix(".err").read_bytes() == expected.with_suffix(".err").read_bytes() == b"Note: x\n"
    assert not os.path.exists(recorded.name)


def test_ranges_played_into_one_pipe_for_stdout_and_stderr(segments: list[Path]) -> None:
    # A real process: its stdout a pipe (the ranges' recordings go there by sendfile), stderr the same pipe.
    args = ["--files", ",".join(map(str, segments)), "--print-data-log"]
    code = "import sys; from kdump.cli.main import main; sys.argv = ['kdump'] + sys.argv[1:]; main()"
    runs = {jobs: subprocess.run([sys.executable, "-c", code, *args, "--jobs", str(jobs)], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, check=False, env={**os.environ, "KDUMP_SPLIT_BYTES": "700"})
            for jobs in (1, 2)}
    assert runs[1].returncode == runs[2].returncode == 1
    assert runs[2].stdout == runs[1].stdout and b"is followed by" in runs[1].stdout
