"""``kdump gen`` through the CLI: output that ``kdump --files`` accepts, errors, --force, interrupts."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kdump.log.writer import PartitionLog
from kdump_testing import default_signals, run_kdump

FULL = ["--topics", "a,b,c,d,e,v0,v1,t", "--partitions", "2,v0=1,v1=1", "--records", "70",
        "--compression", "b=gzip,c=snappy,d=lz4,e=zstd,v0=gzip,v1=lz4,t=snappy",
        "--magic", "v0=0,v1=1", "--transactional", "t", "--idempotent", "e", "--abort-ratio", "0.5",
        "--headers", "2", "--tombstone-ratio", "0.1", "--null-key-ratio", "0.1", "--time-jitter", "800",
        "--segment-bytes", "3000", "--index-interval-bytes", "700", "--seed", "3"]


def partition_logs(root: Path) -> dict[Path, list[Path]]:
    return {d: sorted(d.glob("*.log")) for d in sorted(root.iterdir()) if d.is_dir()}


def test_every_generated_log_dumps_valid_with_consecutive_offsets(tmp_path: Path) -> None:
    out = tmp_path / "logs"
    result = run_kdump("gen", str(out), *FULL)
    assert result.exit_code == 0, result.stderr
    assert re.fullmatch(r"wrote 980 records in \d+ segments of 14 partitions to .*\n", result.stdout)
    for pdir, logs in partition_logs(out).items():
        assert len(logs) >= 2, pdir
        dump = run_kdump("--files", ",".join(map(str, logs)), "--deep-iteration")
        assert dump.exit_code == 0, dump.stderr
        batch_lines = [line for line in dump.stdout.splitlines() if re.match(r"(baseOffset|offset): ", line)]
        assert batch_lines and all("isvalid: true" in line for line in batch_lines)
        offsets = [int(m) for m in re.findall(r"^\| offset: (\d+)", dump.stdout, re.M)]
        assert offsets == list(range(len(offsets))), pdir
        # batch level too: each v2 batch starts right after the previous one ends
        firsts = [int(m) for m in re.findall(r"^baseOffset: (\d+) lastOffset: \d+", dump.stdout, re.M)]
        lasts = [int(m) for m in re.findall(r"^baseOffset: \d+ lastOffset: (\d+)", dump.stdout, re.M)]
        assert firsts[1:] == [x + 1 for x in lasts[:-1]]


def test_defaults_are_small_quick_and_rolled(tmp_path: Path) -> None:
    start = time.perf_counter()
    result = run_kdump("gen", str(tmp_path / "d"))
    assert time.perf_counter() - start < 1.0
    assert result.exit_code == 0
    logs = partition_logs(tmp_path / "d")
    assert len(logs) == 2 and all(len(v) >= 2 for v in logs.values())
    assert (tmp_path / "d" / "meta.properties").exists()


def test_existing_outdir_is_refused_without_force(tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert run_kdump("gen", str(out), "--records", "5").exit_code == 0
    before = tree(out)
    result = run_kdump("gen", str(out))
    assert result.exit_code == 2
    assert result.stderr == f"Error: {out} already exists (use --force to replace it)\n"
    assert tree(out) == before
    result = run_kdump("gen", str(out), "--force")     # an earlier gen output: replaced
    assert result.exit_code == 0
    assert tree(out) != before and (out / "demo-0").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]   # no staging leftovers


@pytest.mark.parametrize("args, message", [
    (["--magic", "0", "--compression", "zstd"], "Error: topic demo: zstd needs magic 2\n"),
    (["--compression", "nope=gzip"], "Error: --compression: 'nope' is not one of --topics (demo)\n"),
    (["--compression", "brotli"], "Error: --compression: bad value 'brotli'\n"),
    (["--magic", "1", "--transactional"], "Error: topic demo: transactional producers need magic 2\n"),
    (["--segment-bytes", "100", "--value-size", "500"], "Error: a batch of"),
    (["--key-size", "x"], "Error: --key-size: 'x' is not N or LOW-HIGH\n"),
])
def test_bad_arguments_give_one_error_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = run_kdump("gen", str(tmp_path / "o"), *args)
    assert result.exit_code == 2
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_interrupted_run_leaves_no_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}
    original = PartitionLog.append

    def interrupted(self: PartitionLog, data: bytes):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 40:
            raise KeyboardInterrupt
        return original(self, data)

    monkeypatch.setattr(PartitionLog, "append", interrupted)
    result = run_kdump("gen", str(tmp_path / "o"), *FULL)
    assert result.exit_code == 130
    assert result.stderr == "Error: interrupted; nothing was written\n"
    assert list(tmp_path.iterdir()) == []


def test_write_error_exit_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def disk_full(self: PartitionLog, data: bytes):  # type: ignore[no-untyped-def]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(PartitionLog, "append", disk_full)
    result = run_kdump("gen", str(tmp_path / "o"))
    assert result.exit_code == 1
    assert result.stderr == "Error: [Errno 28] No space left on device\n"
    assert list(tmp_path.iterdir()) == []


def test_preallocate_and_seed_via_cli(tmp_path: Path) -> None:
    args = ["--max-index-bytes", "240", "--preallocate", "--seed", "9"]
    assert run_kdump("gen", str(tmp_path / "x"), *args).exit_code == 0
    assert run_kdump("gen", str(tmp_path / "y"), *args).exit_code == 0
    for name in ("x", "y"):
        active = max((tmp_path / name / "demo-0").glob("*.timeindex"))
        assert active.stat().st_size == 240
    x = {p.relative_to(tmp_path / "x"): p.read_bytes() for p in (tmp_path / "x").rglob("*") if p.is_file()}
    y = {p.relative_to(tmp_path / "y"): p.read_bytes() for p in (tmp_path / "y").rglob("*") if p.is_file()}
    assert x == y


def test_help_lists_the_issue_options() -> None:
    result = run_kdump("gen", "--help")
    for option in ("--topics", "--partitions", "--records", "--key-size", "--value-pattern", "--records-per-batch",
                   "--batch-bytes", "--compression", "--magic", "--timestamp-type", "--start-time", "--time-step",
                   "--idempotent", "--transactional", "--abort-ratio", "--segment-bytes", "--segment-ms",
                   "--index-interval-bytes", "--preallocate", "--seed", "--force"):
        assert option in result.stdout


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` (symbolic links not followed) and the bytes of its files."""
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() and not p.is_symlink() else None
            for p in sorted(root.rglob("*"))}


# -- topic names: Kafka's rules (org.apache.kafka.common.internals.Topic.validate) -------------------
# The expected texts are InvalidTopicException messages printed by Kafka 4.3.0's kafka-clients jar
# (Topic.validate called on each name); the name becomes a directory name, so these keep gen in OUTDIR.
KAFKA_OTHER_CHARS = "contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"


@pytest.mark.parametrize("name, kafka_message", [
    ("../../victim", f"Topic name is invalid: '../../victim' {KAFKA_OTHER_CHARS}"),
    ("a/b", f"Topic name is invalid: 'a/b' {KAFKA_OTHER_CHARS}"),
    ("/abs", f"Topic name is invalid: '/abs' {KAFKA_OTHER_CHARS}"),
    (".", "Topic name is invalid: '.' is not allowed"),
    ("..", "Topic name is invalid: '..' is not allowed"),
    ("café", f"Topic name is invalid: 'café' {KAFKA_OTHER_CHARS}"),
    ("x" * 250, f"Topic name is invalid: the length of '{'x' * 250}' is longer than the max allowed length 249"),
])
def test_topic_names_kafka_rejects_are_refused(tmp_path: Path, name: str, kafka_message: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    result = run_kdump("gen", str(work / "out"), "--topics", f"ok,{name}")
    assert result.exit_code == 2
    assert result.stderr == f"Error: {kafka_message}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["work"] and list(work.iterdir()) == []


def test_topic_names_kafka_accepts_are_kept(tmp_path: Path) -> None:
    # "..." and 249 characters are legal for Kafka's Topic.validate (checked with kafka-clients 4.3.0)
    names = ["...", "A.b_c-9", "y" * 249]
    result = run_kdump("gen", str(tmp_path / "o"), "--topics", ",".join(names), "--partitions", "1",
                       "--records", "3")
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "o").iterdir() if p.is_dir()) == sorted(f"{n}-0" for n in names)


# -- --force replaces only gen's own output or an empty directory ----------------------------------
def test_force_refuses_a_directory_gen_did_not_make(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = run_kdump("gen", str(out), "--force")
    assert result.exit_code == 2
    assert result.stderr == (f"Error: {out} was not written by kdump and is not empty (notes.txt); "
                             f"--force replaces only an empty directory or kdump's own output\n")
    assert tree(out) == {"notes.txt": b"mine"}
    assert [p.name for p in tmp_path.iterdir()] == ["o"]


def test_force_refuses_a_real_broker_log_dir(tmp_path: Path) -> None:
    broker = tmp_path / "kafka-logs"
    (broker / "orders-0").mkdir(parents=True)
    (broker / "orders-0" / "00000000000000000000.log").write_bytes(b"")
    (broker / "meta.properties").write_text("node.id=1\nversion=1\n")
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint",
                 "log-start-offset-checkpoint", "cleaner-offset-checkpoint"):
        (broker / name).write_text("0\n0\n")
    before = tree(broker)
    result = run_kdump("gen", str(broker), "--force")
    assert result.exit_code == 2
    assert result.stderr == (f"Error: {broker} was not written by kdump and is not empty (cleaner-offset-checkpoint, "
                             f"log-start-offset-checkpoint, meta.properties, orders-0 and 2 more); "
                             f"--force replaces only an empty directory or kdump's own output\n")
    assert tree(broker) == before
    assert [p.name for p in tmp_path.iterdir()] == ["kafka-logs"]


def test_force_replaces_an_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "o").mkdir()
    result = run_kdump("gen", str(tmp_path / "o"), "--force", "--records", "5")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "o" / "demo-0").is_dir()
    assert [p.name for p in tmp_path.iterdir()] == ["o"]


def test_working_directory_is_never_replaced(tmp_path: Path) -> None:
    (tmp_path / "unrelated").write_text("keep")
    result = run_kdump("gen", ".", "--force", cwd=tmp_path)
    assert result.exit_code == 2
    assert result.stderr == f"Error: {tmp_path}: is or holds the working directory; give a new directory to write\n"
    assert tree(tmp_path) == {"unrelated": b"keep"}
    assert [p.name for p in tmp_path.parent.iterdir() if p.name.startswith(f".{tmp_path.name}")] == []
    (tmp_path / "up").symlink_to(tmp_path.parent)        # a link that holds the working directory
    result = run_kdump("gen", "up", "--force", cwd=tmp_path)
    assert (result.exit_code, result.stderr) == (2, f"Error: {tmp_path}/up is a symbolic link; it is not replaced\n")


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_special_targets_are_refused_with_one_line(tmp_path: Path, force: list[str]) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "data").write_text("keep")
    (tmp_path / "link").symlink_to(elsewhere)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "file").write_text("keep")
    os.mkfifo(tmp_path / "fifo")
    before = tree(tmp_path)
    for name, reason in (("link", "is a symbolic link; it is not replaced"),
                         ("dangling", "is a symbolic link; it is not replaced"),
                         ("file", "exists and is not a directory"),
                         ("fifo", "exists and is not a directory")):
        result = run_kdump("gen", str(tmp_path / name), *force)
        assert (result.exit_code, result.stderr) == (2, f"Error: {tmp_path / name} {reason}\n"), name
    assert tree(tmp_path) == before


# -- OUTDIR's parents: made as mkdir -p makes them, removed again when gen fails ------------------------
def test_missing_parents_are_made(tmp_path: Path) -> None:
    out = tmp_path / "new" / "deeper" / "logs"
    result = run_kdump("gen", str(out), "--records", "5")
    assert result.exit_code == 0, result.stderr
    assert (out / "demo-0").is_dir() and [p.name for p in (tmp_path / "new" / "deeper").iterdir()] == ["logs"]
    (tmp_path / "empty").mkdir()                     # an empty OUTDIR holds nobody's files: used, no --force
    assert run_kdump("gen", str(tmp_path / "empty"), "--records", "5").exit_code == 0
    assert (tmp_path / "empty" / "demo-0").is_dir()


def test_only_what_holds_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("keep")
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "notes").write_text("keep")
    before = tree(tmp_path)
    for out, message in ((tmp_path / "file" / "x" / "logs", f"{tmp_path / 'file'} exists and is not a directory"),
                         (tmp_path / "theirs", f"{tmp_path / 'theirs'} already exists (use --force to replace it)")):
        result = run_kdump("gen", str(out), "--records", "5")
        assert (result.exit_code, result.stderr) == (2, f"Error: {message}\n")
    assert tree(tmp_path) == before


def test_a_failure_removes_the_parents_gen_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "notes").write_text("keep")
    # a bad value found only while writing (the first batch does not fit a segment)
    late = run_kdump("gen", str(tmp_path / "kept" / "a" / "b" / "logs"), "--segment-bytes", "100",
                     "--value-size", "500")
    assert (late.exit_code, late.stderr) == (2, "Error: a batch of 5240 bytes does not fit segment.bytes=100\n")
    assert tree(tmp_path) == {"kept": None, "kept/notes": b"keep"}

    def disk_full(self: PartitionLog, data: bytes):  # type: ignore[no-untyped-def]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(PartitionLog, "append", disk_full)
    for extra in ([], ["--brokers", "2"]):
        failed = run_kdump("gen", str(tmp_path / "a" / "b" / "logs"), *extra)
        assert (failed.exit_code, failed.stderr) == (1, "Error: [Errno 28] No space left on device\n"), extra
        assert tree(tmp_path) == {"kept": None, "kept/notes": b"keep"}


def test_sigint_removes_the_parents_gen_made(tmp_path: Path) -> None:
    """A real process and a real SIGINT (its disposition reset: a suite started with SIGINT ignored passes)."""
    proc = start_gen(tmp_path / "a" / "b" / "logs")
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert (proc.returncode, stderr) == (130, "Error: interrupted by SIGINT; nothing was written\n")
    assert list(tmp_path.iterdir()) == []


# -- signals: a real process, real signals ----------------------------------------------------------
BIG = ["--records", "5000000", "--partitions", "1"]   # minutes of work: still running when signalled


def start_gen(out: Path) -> subprocess.Popen[str]:
    """``python -m kdump gen OUT`` on a big job, returned once its staging area exists beside OUT."""
    proc = subprocess.Popen([sys.executable, "-m", "kdump", "gen", str(out), *BIG], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)
    deadline = time.monotonic() + 60
    while not (out.parent.is_dir() and any(p.name.startswith(".") for p in out.parent.iterdir())):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "gen never started writing"
        time.sleep(0.05)
    time.sleep(0.5)     # well into the writing
    assert proc.poll() is None
    return proc


@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_cleans_up_and_exits_128_plus_signal(tmp_path: Path, signo: signal.Signals) -> None:
    proc = start_gen(tmp_path / "out")
    proc.send_signal(signo)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signo
    assert stderr == f"Error: interrupted by {signo.name}; nothing was written\n"
    assert list(tmp_path.iterdir()) == []


def test_signal_leaves_the_directory_force_would_replace(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_kdump("gen", str(out), "--records", "5").exit_code == 0
    before = tree(out)
    proc = subprocess.Popen([sys.executable, "-m", "kdump", "gen", str(out), "--force", *BIG],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)
    deadline = time.monotonic() + 60
    while not any(p.name.startswith(".") for p in tmp_path.iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert [p.name for p in tmp_path.iterdir()] == ["out"] and tree(out) == before


def test_the_next_run_removes_what_a_killed_run_left(tmp_path: Path) -> None:
    proc = start_gen(tmp_path / "out")
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".")]    # SIGKILL cannot be cleaned up
    result = run_kdump("gen", str(tmp_path / "other"), "--records", "5")
    assert result.exit_code == 0, result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["other"]
