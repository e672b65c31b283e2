"""``kdump --files ... --jobs N``: groups of files dumped in worker processes, their recorded output
played back in the files' order, so stdout, stderr, their interleaving, the end-of-run summaries and
the exit code are the bytes of ``--jobs 1``."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import kdump.dump.files
from kdump.log.spill import PairList
from kdump_testing import run_kdump

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

CORPORA = [
    [str(FIXTURES / "logdirs")],
    [str(FIXTURES / "corrupt-index")],                       # index mismatches: end-of-run summaries
    [str(FIXTURES / "real-broker")],
    [str(FIXTURES / "logdirs" / "txn-1"), "/no/such/file.log", str(FIXTURES / "corrupt-index")],
]
MODES = [["--deep-iteration"], ["--print-data-log"], ["--print-data-log", "--json"], ["--verify-index-only"],
         ["--decode-internal"]]


@pytest.fixture(autouse=True)
def one_file_per_group(monkeypatch: pytest.MonkeyPatch) -> None:
    # Small fixtures would otherwise make one group; one file each exercises the ordering fully.
    monkeypatch.setattr(kdump.dump.files, "GROUP_BYTES", 1)


@pytest.mark.parametrize("paths", CORPORA, ids=["logdirs", "corrupt-index", "real-broker", "mixed"])
@pytest.mark.parametrize("mode", MODES, ids=lambda m: " ".join(m))
def test_files_output_is_the_same_for_any_jobs(paths: list[str], mode: list[str]) -> None:
    results = {jobs: run_kdump("--files", ",".join(paths), *mode, "--jobs", str(jobs)) for jobs in (1, 2, 3)}
    assert results[1].stdout.count("Dumping") + results[1].stdout.count('"file"') > 1 or "--json" in mode
    for jobs in (2, 3):
        assert results[jobs] == results[1], jobs


def test_interleaved_stdout_and_stderr_are_the_same_for_any_jobs() -> None:
    # One stream for both (2>&1): each file's Error: line sits after its Dumping line, as with one process.
    args = ["--files", f"{FIXTURES / 'logdirs'},/no/such.log,{FIXTURES / 'corrupt-index'}", "--deep-iteration"]
    code = ("import sys, kdump.dump.files as f; f.GROUP_BYTES = 1; from kdump.cli.main import main; "
            "sys.argv = ['kdump'] + sys.argv[1:]; main()")
    runs = {jobs: subprocess.run([sys.executable, "-c", code, *args, "--jobs", str(jobs)], capture_output=False,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
            for jobs in (1, 2)}
    assert runs[1].returncode == runs[2].returncode == 1
    assert b"Error: " in runs[1].stdout
    assert runs[2].stdout == runs[1].stdout


def test_limit_counts_across_files_so_it_runs_in_one_process() -> None:
    args = ["--files", str(FIXTURES / "logdirs"), "--offsets", "0..", "--limit", "7"]
    assert run_kdump(*args, "--jobs", "2") == run_kdump(*args, "--jobs", "1")
    assert run_kdump(*args, "--jobs", "2").stdout.count("| offset:") == 7   # a filter prints records


def test_offset_gaps_spilled_to_disk_travel_between_processes() -> None:
    gaps = PairList(limit=4)
    for n in range(11):
        gaps.append(n, n + 2)
    copy = pickle.loads(pickle.dumps(gaps))
    assert list(copy) == list(gaps) and list(copy.sorted()) == list(gaps.sorted())
    assert list(copy.reversed()) == list(gaps.reversed())
