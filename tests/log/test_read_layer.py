"""The read layer: LogBatches over a bounded window gives what scan_batches gives over the whole file.

The reference is kdump.format.batch.scan_batches over the file's bytes read in one piece (the
format layer, tested against kafka-python elsewhere); the window size and the oversized-entry
limit are varied so every refill and carry-over path runs.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kdump.log.batches as batches_module
from kdump.errors import CorruptRecordError, InputError
from kdump.format.batch import scan_batches
from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record, decode_records
from kdump.log.batches import LogBatches, batch_at
from kdump.log.indexes import OffsetIndex, open_offset_index
from kdump.log.segment import FileChangedError, ReadOnlyFile


def _batch(base: int, count: int, value_size: int) -> bytes:
    records = [Record(base + i, 1_700_000_000_000 + i, f"k{i}".encode(), b"v" * value_size)
               for i in range(count)]
    return encode_batch_v2(records, base_offset=base)


def _log(tmp_path: Path, sizes: list[tuple[int, int]], tail: bytes = b"") -> Path:
    data = bytearray()
    offset = 0
    for count, value_size in sizes:
        data += _batch(offset, count, value_size)
        offset += count
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(data) + tail)
    return path


def _reference(path: Path) -> list[tuple[int, int, int, bool | None]]:
    data = path.read_bytes()
    return [(b.position, b.base_offset, b.size, b.is_valid) for b in scan_batches(data)]


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.tuples(st.integers(1, 20), st.integers(0, 3000)), min_size=0, max_size=12),
       window=st.integers(64, 8192), held=st.integers(100, 20000), tail=st.binary(max_size=40))
def test_windowed_scan_equals_whole_file_scan(tmp_path_factory: pytest.TempPathFactory,
                                              sizes: list[tuple[int, int]], window: int, held: int,
                                              tail: bytes) -> None:
    path = _log(tmp_path_factory.mktemp("w"), sizes, tail)
    old = batches_module.MAX_HELD_ENTRY_BYTES
    batches_module.MAX_HELD_ENTRY_BYTES = held
    try:
        try:
            expected = _reference(path)
            expected_error = None
        except CorruptRecordError as err:
            expected, expected_error = None, err.position
        with ReadOnlyFile(str(path)) as f:
            scan = LogBatches(f, window_bytes=window)
            got = []
            records = []
            try:
                for b in scan:
                    got.append((b.position, b.base_offset, b.size, b.is_valid))
                    records.append([r.offset for r in scan.records(b)])
            except CorruptRecordError as err:
                assert expected is None and err.position == expected_error
                return
    finally:
        batches_module.MAX_HELD_ENTRY_BYTES = old
    if expected is None:
        # The whole-file scan failed where the windowed one found zero padding: only all-zero tails.
        assert not any(tail)
        return
    assert got == expected
    data = path.read_bytes()
    assert records == [[r.offset for r in decode_records(data, b)] for b in scan_batches(data)]


def test_oversized_entry_crc_is_checked_in_pieces(tmp_path: Path) -> None:
    path = _log(tmp_path, [(3, 50_000), (2, 10)])
    data = bytearray(path.read_bytes())
    old = batches_module.MAX_HELD_ENTRY_BYTES
    batches_module.MAX_HELD_ENTRY_BYTES = 4096
    try:
        with ReadOnlyFile(str(path)) as f:
            assert [b.is_valid for b in LogBatches(f, window_bytes=1024)] == [True, True]
        data[5000] ^= 1  # a payload byte of the first (oversized) batch
        path.write_bytes(bytes(data))
        with ReadOnlyFile(str(path)) as f:
            scan = LogBatches(f, window_bytes=1024)
            first = next(iter(scan))
            assert first.is_valid is False
    finally:
        batches_module.MAX_HELD_ENTRY_BYTES = old


def test_zero_padding_ends_the_scan_without_an_error(tmp_path: Path) -> None:
    path = _log(tmp_path, [(5, 10)], tail=bytes(100_000))
    with ReadOnlyFile(str(path)) as f:
        scan = LogBatches(f, window_bytes=4096)
        assert len(list(scan)) == 1
        assert scan.zero_padding_from == scan.valid_end
    with pytest.raises(CorruptRecordError):  # the format layer alone still calls it what Kafka calls it
        list(scan_batches(path.read_bytes()))


def test_a_file_that_shrinks_while_read_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _log(tmp_path, [(10, 2000)] * 20)
    real = ReadOnlyFile.read_into
    calls = []

    def truncate_after_first(self: ReadOnlyFile, view: memoryview, position: int) -> int:
        if calls:
            os.truncate(path, 4096)  # a broker trimming the file between two reads
        calls.append(position)
        return real(self, view, position)

    monkeypatch.setattr(ReadOnlyFile, "read_into", truncate_after_first)
    with ReadOnlyFile(str(path)) as f, pytest.raises(FileChangedError) as caught:
        list(LogBatches(f, window_bytes=8192))
    assert caught.value.path == str(path)
    assert caught.value.position is not None and caught.value.position >= 4096
    assert "changed while kdump read it" in str(caught.value)


def test_growth_is_not_read_but_measured(tmp_path: Path) -> None:
    path = _log(tmp_path, [(3, 10)])
    with ReadOnlyFile(str(path)) as f:
        with open(path, "ab") as appender:
            appender.write(_batch(3, 2, 10))
        assert len(list(LogBatches(f))) == 1
        assert f.grown_by() == len(_batch(3, 2, 10))


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "00000000000000000000.log"
    os.mkfifo(fifo)
    done = threading.Event()
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            ReadOnlyFile(str(fifo))
        except InputError as err:
            errors.append(err)
        done.set()

    threading.Thread(target=open_it, daemon=True).start()
    assert done.wait(5), "opening a FIFO blocked"
    assert errors and "FIFO" in str(errors[0])


def test_batch_at_reads_one_entry(tmp_path: Path) -> None:
    path = _log(tmp_path, [(3, 10), (4, 10)])
    first_size = len(_batch(0, 3, 10))
    with ReadOnlyFile(str(path)) as f:
        batch = batch_at(f, first_size)
        assert batch is not None and (batch.position, batch.base_offset) == (first_size, 3)
        assert batch_at(f, f.size) is None


def test_index_reads_a_window_not_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 64 MiB preallocated index: counting entries and checking the padding never reads it whole."""
    path = tmp_path / "00000000000000000000.index"
    with open(path, "wb") as f:
        f.write((10).to_bytes(4, "big") + (0).to_bytes(4, "big"))
        f.truncate(64 << 20)
    largest = []
    real = ReadOnlyFile.read

    def spy(self: ReadOnlyFile, position: int, length: int) -> bytes:
        largest.append(length)
        return real(self, position, length)

    monkeypatch.setattr(ReadOnlyFile, "read", spy)
    with open_offset_index(str(path), 0) as index:
        assert isinstance(index, OffsetIndex)
        assert (index.entries, index.slots) == (1, 8 << 20)
        assert index.padding_is_zero()
        assert index.lookup(50).offset == 10
    assert max(largest) <= 1 << 20


# kdump, paused by the process that reads ``KDUMP_TEST_WATCHED`` (the parent or a forked --jobs worker)
# right after it took the file's size: it writes its pid to the READY pipe and waits for a byte on GO.
_PAUSING_KDUMP = """
import os, sys
real_fstat = os.fstat
watched, ready, go = os.environ["KDUMP_TEST_WATCHED"], int(os.environ["KDUMP_TEST_READY"]), int(os.environ["KDUMP_TEST_GO"])
def pausing_fstat(fd, *args, **kwargs):
    info = real_fstat(fd, *args, **kwargs)
    if isinstance(fd, int) and os.readlink(f"/proc/self/fd/{fd}") == watched:
        os.fstat = real_fstat
        os.write(ready, str(os.getpid()).encode())
        os.read(go, 1)
    return info
os.fstat = pausing_fstat
from kdump.cli.main import main
sys.argv[0] = "kdump"
main()
"""


def _start_and_truncate(args: list[str], watched: Path, truncate: list[tuple[Path, int]]) -> tuple[int, str, str, bool]:
    """Run kdump in a subprocess; once the process reading ``watched`` has taken its size, truncate
    files as a broker would and let it read on. Returns the exit code, stdout, stderr and whether a
    worker process (not kdump's main process) read ``watched``."""
    import select
    import subprocess
    import sys

    from kdump_testing import default_signals

    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    env = {**os.environ, "KDUMP_TEST_WATCHED": str(watched), "KDUMP_TEST_READY": str(ready_w),
           "KDUMP_TEST_GO": str(go_r)}
    proc = subprocess.Popen([sys.executable, "-c", _PAUSING_KDUMP, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, pass_fds=(ready_w, go_r),
                            preexec_fn=default_signals)
    os.close(ready_w)
    os.close(go_r)
    try:
        readable, _, _ = select.select([ready_r], [], [], 60)
        assert readable, "kdump never opened the watched file"
        reader = int(os.read(ready_r, 32) or b"0")
        assert reader, proc.communicate(timeout=60)
        for path, size in truncate:
            os.truncate(path, size)
        os.write(go_w, b"g")
        out, err = proc.communicate(timeout=120)
    finally:
        os.close(ready_r)
        os.close(go_w)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err, reader != proc.pid


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to see when kdump opened the file")
def test_real_truncation_during_a_dump_never_kills_kdump(tmp_path: Path) -> None:
    """A 2 GiB preallocated (sparse) log with one batch, truncated while `kdump --files` reads its padding.

    With a memory-mapped reader this is SIGBUS (exit -7, no message); now it is one line on stderr
    naming the file and the position, or a clean finish if the truncation lands after the read."""
    path = _log(tmp_path, [(5, 100)])
    with open(path, "r+b") as f:
        f.truncate((2 << 30) - 4096)   # just under Kafka's segment limit, so no note comes first
    code, out, err, _ = _start_and_truncate(["--files", str(path)], path, [(path, 4096)])
    assert code == 1, (code, err)
    assert out.startswith(f"Dumping {path}\n")
    assert err.startswith(f"Error: {path}: position ") and "changed while kdump read it" in err
    assert err.count("\n") == 1


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to see when kdump opened the file")
def test_real_truncation_of_an_index_during_verify_index(tmp_path: Path) -> None:
    """A 1 GiB zero-padded (sparse) .index trimmed to its entries while a --jobs worker reads it: the
    segment is read again (engine.check_segment) and the trimmed index is checked, no error."""
    partition = tmp_path / "t-0"
    partition.mkdir()
    log = _log(partition, [(5, 100)])
    index = partition / "00000000000000000000.index"
    with open(index, "wb") as f:
        f.truncate(1 << 30)
    code, out, err, by_worker = _start_and_truncate(["verify-index", "--jobs", "2", str(partition)], index,
                                                    [(index, 0)])
    assert by_worker
    assert (code, err) == (0, "")
    assert "preallocated" not in out           # the padding note of the untrimmed index: read again
    assert out.endswith("verify-index OK: 2 files in 1 segment of 1 partition checked: 0 errors, 1 note\n"), out
    assert log.exists()
