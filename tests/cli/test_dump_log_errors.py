"""Every error path of `.log` dumps: exact lines, exit codes, no tracebacks, files never modified.

Exit codes (README "Exit codes"): 0 all files dumped (even with problems *reported*, as Kafka does),
1 some file could not be dumped completely, 2 usage error.
"""

from __future__ import annotations

import hashlib
import os
import struct

from kdump.format.encode import encode_batch_v2
from kdump.format.records import Record
from kdump_testing import run_kdump

T0 = 1_600_000_000_000


def batch(base: int, n: int = 2) -> bytes:
    return encode_batch_v2([Record(base + i, T0 + i, b"k%d" % i, b"v%d" % i) for i in range(n)], base_offset=base)


def write(tmp_path, data: bytes, name: str = "00000000000000000000.log"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def batch_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("baseOffset")]


def test_truncated_tail_reports_invalid_bytes(tmp_path):
    first, second = batch(0), batch(2)
    path = write(tmp_path, first + second[:50])
    result = run_kdump("--files", str(path))
    assert result.exit_code == 0
    assert len(batch_lines(result.stdout)) == 1
    assert result.stdout.splitlines()[-1] == f"Found 50 invalid bytes at the end of {path.name}"


def test_tail_of_17_bytes_or_fewer_is_invalid_bytes(tmp_path):
    path = write(tmp_path, batch(0) + b"\x01" * 17)
    result = run_kdump("--files", str(path))
    assert result.stdout.splitlines()[-1] == f"Found 17 invalid bytes at the end of {path.name}"


def test_huge_size_field_is_a_partial_tail(tmp_path):
    tail = struct.pack(">qi", 2, 2**31 - 1) + b"\x00" * 40
    path = write(tmp_path, batch(0) + tail)
    result = run_kdump("--files", str(path))
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == f"Found {len(tail)} invalid bytes at the end of {path.name}"


def test_bad_crc_shows_isvalid_false_and_continues(tmp_path):
    good = batch(0)
    bad = bytearray(batch(2))
    bad[-2] ^= 0x40  # last byte of the last record's value (the final byte is its header count): CRC now wrong
    path = write(tmp_path, good + bytes(bad) + batch(4))
    result = run_kdump("--files", str(path))
    assert result.exit_code == 0
    lines = batch_lines(result.stdout)
    assert [line.endswith("isvalid: true") for line in lines] == [True, False, True]
    deep = run_kdump("--files", str(path), "--print-data-log")
    assert deep.exit_code == 0 and "payload: vq" in deep.stdout


def test_record_size_below_14_names_file_and_position_and_goes_on(tmp_path):
    first = batch(0)
    broken = write(tmp_path, first + struct.pack(">qi", 2, 5) + b"\x00" * 20)
    other = write(tmp_path, batch(7), "00000000000000000007.log")
    result = run_kdump("--files", f"{broken},{other}")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"Error: {broken}: position {len(first)}: Found record size 5 smaller than minimum record overhead (14)"]
    assert f"Dumping {other}" in result.stdout and "baseOffset: 7" in result.stdout
    assert "Traceback" not in result.stderr


def test_zero_padded_tail_is_explained_not_an_error(tmp_path):
    data = batch(0)
    path = write(tmp_path, data + bytes(4096))
    result = run_kdump("--files", str(path))
    assert result.exit_code == 0
    assert len(batch_lines(result.stdout)) == 1
    assert result.stderr.splitlines() == [
        f"Note: {path}: position {len(data)}: the remaining 4096 bytes are zero padding (a preallocated or crashed "
        f"active segment); Kafka's tool stops here with \"Found record size 0 smaller than minimum record "
        f"overhead (14)\""]


def test_unknown_codec_is_an_error_with_position(tmp_path):
    bad = bytearray(batch(0))
    bad[22] = 5  # attributes low byte: codec id 5
    path = write(tmp_path, bytes(bad))
    result = run_kdump("--files", str(path))
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [f"Error: {path}: position 0: Unknown compression type id: 5"]


def test_record_level_parse_error_under_deep_iteration(tmp_path):
    # Declare 3 records but hold 2: Kafka aborts; kdump names the batch and goes on.
    records = [Record(i, T0, b"k", b"v") for i in range(2)]
    data = bytearray(encode_batch_v2(records, base_offset=0))
    struct.pack_into(">i", data, 57, 3)
    from kdump.format.crc import crc32c

    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    path = write(tmp_path, bytes(data))
    shallow = run_kdump("--files", str(path))
    assert shallow.exit_code == 0 and batch_lines(shallow.stdout)[0].endswith("isvalid: true")
    deep = run_kdump("--files", str(path), "--deep-iteration")
    assert deep.exit_code == 1
    assert len(batch_lines(deep.stdout)) == 1
    assert deep.stderr.startswith(f"Error: {path}: position 0: ")
    assert "Traceback" not in deep.stderr


def test_empty_file(tmp_path):
    path = write(tmp_path, b"")
    result = run_kdump("--files", str(path))
    assert (result.exit_code, result.stdout, result.stderr) == (0, f"Dumping {path}\nLog starting offset: 0\n", "")


def test_missing_file(tmp_path):
    path = tmp_path / "nosuchdir" / "00000000000000000000.log"
    result = run_kdump("--files", str(path))
    assert result.exit_code == 1
    assert result.stdout == f"Dumping {path}\nLog starting offset: 0\n"  # Kafka prints it before opening
    assert result.stderr == f"Error: {path}: No such file or directory (NoSuchFileException)\n"


def test_directory_with_log_suffix(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.mkdir()
    result = run_kdump("--files", str(path))
    assert result.exit_code == 1
    assert result.stderr == f"Error: {path}: Is a directory\n"


def test_no_permission(tmp_path, monkeypatch):
    path = write(tmp_path, batch(0))
    real_open = os.open

    def deny(p, flags, *args):
        if str(p) == str(path):
            raise PermissionError(13, "Permission denied", str(p))
        return real_open(p, flags, *args)

    # Tests run as root in CI, where chmod cannot deny a read; fail the open() the way the OS would.
    monkeypatch.setattr(os, "open", deny)
    result = run_kdump("--files", str(path))
    assert result.exit_code == 1
    assert result.stderr == f"Error: {path}: Permission denied (AccessDeniedException)\n"


def test_name_without_dot_and_non_numeric_base_offset(tmp_path):
    nodot = write(tmp_path, b"", "segmentfile")  # known dot-less names (checkpoints) are dumped as extensions
    word = write(tmp_path, batch(0), "abc.log")
    result = run_kdump("--files", f"{nodot},{word}", "--kafka-version", "4.2")  # 4.3 ignores such names
    assert result.exit_code == 1
    errors = result.stderr.splitlines()
    assert errors[0].startswith(f"Error: {nodot}: the file name has no '.'")
    assert errors[1] == f"Error: {word}: file name does not start with a base offset (For input string: \"abc\")"


def test_unknown_suffix_is_ignored_with_kafkas_message(tmp_path):
    path = write(tmp_path, b"x", "00000000000000000000.log.deleted.bak")
    result = run_kdump("--files", str(path))
    assert result.exit_code == 0
    assert result.stderr == f"Ignoring unknown file {path}\n"


def test_traceback_flag_shows_the_traceback(tmp_path):
    path = tmp_path / "gone" / "00000000000000000000.log"
    result = run_kdump("--files", str(path), "--traceback")
    assert "Traceback" in result.stderr and result.stderr.rstrip().endswith(
        f"Error: {path}: No such file or directory (NoSuchFileException)")


def test_missing_files_option_is_a_usage_error():
    result = run_kdump("--print-data-log")
    assert result.exit_code == 1  # kafka-dump-log's printUsageAndExit exits 1 (checked with the real tool)
    assert result.stderr.startswith('Missing required argument "[files]"\n')


def test_negative_max_bytes_is_a_usage_error(tmp_path):
    result = run_kdump("--files", str(write(tmp_path, batch(0))), "--max-bytes", "-1")
    assert result.exit_code == 1 and result.stderr == "Error: --max-bytes must not be negative: -1\n"


def test_stray_words_are_ignored_as_kafka_does(tmp_path):
    first = write(tmp_path, batch(0))
    result = run_kdump("--files", str(first), "second.log")
    assert result.exit_code == 0
    assert result.stdout.count("Dumping") == 1
    assert "Ignoring argument(s) that are not options: second.log" in result.stderr


def test_dumping_never_modifies_files(tmp_path):
    path = write(tmp_path, batch(0) + batch(2) + bytes(100))
    before = (hashlib.sha256(path.read_bytes()).hexdigest(), os.stat(path).st_mtime_ns, sorted(os.listdir(tmp_path)))
    run_kdump("--files", str(path), "--print-data-log")
    run_kdump("--files", str(path), "--json", "--deep-iteration")
    after = (hashlib.sha256(path.read_bytes()).hexdigest(), os.stat(path).st_mtime_ns, sorted(os.listdir(tmp_path)))
    assert before == after


def test_bad_top_level_options_exit_1_as_kafka_does():
    # kafka-dump-log dies with joptsimple's exception (exit 1) on these; kdump prints click's usage error.
    for args in (["--bogus"], ["--files"]):
        result = run_kdump(*args)
        assert result.exit_code == 1 and result.stdout == "" and result.stderr.count("Error: ") == 1
