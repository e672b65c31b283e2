"""``--jobs N``: the same bytes, exit codes and error lines as ``--jobs 1``, in the same order; Ctrl-C
still exits 130 with one line and leaves no worker behind."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kdump.cli.parallel import WorkerPool, available_cpus
from kdump.errors import FormatError, KdumpError
from kdump.format.checkpoint import CheckpointError
from kdump_testing import default_signals, run_kdump

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _square(n: int) -> int:
    time.sleep(0.001 * (n % 3))   # finish out of order
    return n * n


def _fail_on_three(n: int) -> int:
    if n == 3:
        raise FormatError("bad bytes", path=f"/x/{n}.log", position=42)
    return n


def test_ordered_map_keeps_order_and_bounds_work_in_flight() -> None:
    consumed = []

    def items() -> Iterator[int]:
        for n in range(40):
            consumed.append(n)
            yield n

    with WorkerPool(3, in_flight=4) as pool:
        seen = []
        for item, result in pool.ordered_map(_square, items()):
            # never more than in_flight items taken from the input ahead of what was yielded
            assert len(consumed) - len(seen) <= 4
            seen.append((item, result))
    assert seen == [(n, n * n) for n in range(40)]


def test_markers_are_not_sent_to_workers() -> None:
    with WorkerPool(2) as pool:
        out = list(pool.ordered_map(_square, [1, "end", 2], is_work=lambda i: isinstance(i, int)))
    assert out == [(1, 1), ("end", None), (2, 4)]


def _pid(_: int) -> int:
    return os.getpid()


def test_small_work_stays_in_this_process_and_the_rest_goes_to_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    # Items that add up to at most INLINE_BYTES run here; from the first that does not fit on, workers.
    monkeypatch.setattr("kdump.cli.parallel.INLINE_BYTES", 100)
    weights = {0: 50, 1: 50, 2: 1, 3: 1}
    with WorkerPool(2) as pool:
        pids = list(pool.ordered_map(_pid, range(4), weight=weights.__getitem__))
    assert [item for item, _ in pids] == [0, 1, 2, 3]
    assert [pid == os.getpid() for _, pid in pids] == [True, True, False, False]
    with WorkerPool(2) as pool:   # all small: no worker starts
        assert [pid for _, pid in pool.ordered_map(_pid, range(3), weight=lambda _: 1)] == [os.getpid()] * 3
        assert pool._executor is None


@pytest.fixture(autouse=True)
def _workers_for_any_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """The inputs here are small; --jobs above 1 sends all of their work to workers, as a large input's."""
    monkeypatch.setattr("kdump.cli.parallel.INLINE_BYTES", 0)


@pytest.mark.parametrize("jobs", [1, 2])
def test_worker_errors_keep_file_and_position(jobs: int) -> None:
    with WorkerPool(jobs) as pool, pytest.raises(FormatError) as raised:
        list(pool.ordered_map(_fail_on_three, range(6)))
    assert str(raised.value) == "/x/3.log: position 42: bad bytes"


def test_kdump_errors_survive_pickling() -> None:
    for error in (FormatError("r", path="p", position=7), CheckpointError("c", line_number=3)):
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and copy.__dict__ == error.__dict__ and str(copy) == str(error)
        assert isinstance(copy, KdumpError)


def test_available_cpus_is_the_affinity_mask() -> None:
    assert available_cpus() == len(os.sched_getaffinity(0))


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log dir with many partitions, transactions (some hanging) and rolled segments."""
    out = tmp_path_factory.mktemp("jobs") / "logs"
    result = run_kdump("gen", str(out), "--topics", "a,b,t", "--partitions", "4", "--records", "120",
                       "--transactional", "t", "--compression", "b=gzip", "--segment-bytes", "3000", "--seed", "5")
    assert result.exit_code == 0, result.stderr
    return out


def corpora(many: Path) -> list[list[str]]:
    real = sorted(str(p) for p in (FIXTURES / "real-broker").glob("*/logs"))
    return [[str(many)], [str(FIXTURES / "logdirs")], [str(FIXTURES / "corrupt-index")], real,
            # several paths, one missing in the middle: its error line comes in its place
            [str(FIXTURES / "logdirs" / "txn-0"), "/no/such/dir", str(many / "a-1"),
             str(FIXTURES / "corrupt-index" / "bad-position-not-batch-0" / "00000000000000000000.index")]]


def _same_for_all_jobs(*args: str) -> None:
    results = {jobs: run_kdump(*args, "--jobs", str(jobs)) for jobs in (1, 2, 4)}
    first = results[1]
    assert first.stdout or "--hanging-only" in args, args
    for jobs, result in results.items():
        assert (result.exit_code, result.stdout, result.stderr) == (first.exit_code, first.stdout, first.stderr), \
            (args, jobs)


@pytest.mark.parametrize("command", [["verify"], ["verify", "--json"], ["verify", "--deep", "--strict"],
                                     ["verify-index"], ["verify-index", "--json", "--errors-only"]])
def test_verify_output_is_the_same_for_any_jobs(many: Path, command: list[str]) -> None:
    for paths in corpora(many):
        _same_for_all_jobs(*command, *paths)


@pytest.mark.parametrize("command", [["summary"], ["summary", "--json"], ["txn"], ["txn", "--json"],
                                     ["txn", "--hanging-only"]])
def test_summary_and_txn_output_is_the_same_for_any_jobs(many: Path, command: list[str]) -> None:
    for paths in corpora(many):
        for path in paths:
            if os.path.isdir(path):
                _same_for_all_jobs(*command, path)


@pytest.mark.parametrize("task_bytes", [1, 5000, 1 << 40])
def test_verify_output_does_not_depend_on_how_segments_are_grouped_into_tasks(
        many: Path, task_bytes: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("kdump.verify.driver.TASK_BYTES", task_bytes)   # one segment a task .. a partition
    for paths in corpora(many)[:3]:
        _same_for_all_jobs("verify", *paths)


def test_exit_codes_differ_by_input_not_by_jobs(many: Path) -> None:
    assert run_kdump("verify", "--jobs", "3", str(many)).exit_code == 0
    assert run_kdump("verify", "--jobs", "3", str(FIXTURES / "corrupt-index")).exit_code == 1
    assert run_kdump("verify", "--jobs", "3", str(many), "/no/such/dir").exit_code == 2
    bad = run_kdump("verify", "--jobs", "0", str(many))
    assert bad.exit_code == 2 and "Invalid value for '--jobs'" in bad.stderr


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def long_run(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Arguments of a ``verify --jobs 2`` that runs for seconds: the same log dir many times over."""
    logs = tmp_path_factory.mktemp("long") / "big"
    made = run_kdump("gen", str(logs), "--topics", "a,b,c,d", "--partitions", "6", "--records", "2000",
                     "--segment-bytes", "60000", "--compression", "gzip", "--seed", "2")
    assert made.exit_code == 0, made.stderr
    return [sys.executable, "-m", "kdump", "verify", "--deep", "--jobs", "2", *[str(logs)] * 40]


def _start_with_workers(args: list[str]) -> tuple[subprocess.Popen[bytes], list[int]]:
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=default_signals)
    workers: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(workers) < 2 and proc.poll() is None:
        time.sleep(0.05)
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
        workers = children.read_text().split() if children.exists() else []
    assert proc.poll() is None and len(workers) >= 2, "the run ended before its workers were seen"
    time.sleep(0.2)
    return proc, [int(w) for w in workers]


def _gone(pids: list[int], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(Path(f"/proc/{pid}").exists() and "zombie" not in _state(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:", 1)[1].split("\n", 1)[0].lower()
    except (OSError, IndexError):
        return "zombie"


def test_ctrl_c_exits_130_with_one_line_and_no_workers_left(long_run: list[str]) -> None:
    proc, workers = _start_with_workers(long_run)
    os.killpg(proc.pid, signal.SIGINT)   # as a terminal's Ctrl-C: the whole foreground group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.decode() == "Error: interrupted\n"
    assert _gone(workers), "worker processes outlived the run"
    deadline = time.monotonic() + 10
    while _group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _group_alive(proc.pid)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_workers_die_with_a_killed_parent(long_run: list[str]) -> None:
    proc, workers = _start_with_workers(long_run)
    proc.kill()   # SIGKILL: the parent cannot clean up
    proc.communicate(timeout=60)
    assert _gone(workers), "workers outlived a killed parent"
