"""kdump on a running real broker's log dir, and after a clean stop, a kill -9 and a restart on a copy.

Needs java and mvn (skipped with the reason otherwise; failed under CI=true). About 30 s per release.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import broker_checks as checks
import pytest
from broker import RELEASES, Broker, run_driver, start_driver
from make_real_fixtures import run_scenario, setup_topics

from kdump_testing import run_kdump

STREAM_RECORDS = 300


def _all_logs(logs: Path) -> list[str]:
    return sorted(str(p) for p in logs.glob("*-0/*.log"))


def check_readable(logs: Path) -> None:
    """No command reports a problem or fails on the dir as it is right now (info findings, such as
    records above the last checkpointed high watermark, describe a live dir and are allowed)."""
    checks.check_verify_index(logs, live=True)
    for command in (("summary", "--json"), ("txn", "--json")):
        for line in checks.json_lines(*command, str(logs)):
            problems = [f for f in line.get("findings", []) if f["severity"] != "note"]
            assert problems == [], (command, line["path"], problems)
    result = run_kdump("--files", ",".join(_all_logs(logs)), "--deep-iteration")
    assert result.exit_code == 0, result.stderr[-2000:]


def _wait_for_progress(stream: subprocess.Popen[str], at_least: int, timeout: float = 60) -> None:
    # readline() blocks, so a timer kills a silent producer; its closed pipe then ends the loop.
    timer = threading.Timer(timeout, stream.kill)
    timer.start()
    try:
        for line in stream.stdout:  # type: ignore[union-attr]
            if line.startswith("progress ") and int(line.split()[1]) >= at_least:
                return
    finally:
        timer.cancel()
    raise AssertionError(f"the stream producer did not reach {at_least} records: {stream.stderr.read()[-2000:]}")  # type: ignore[union-attr]


@pytest.mark.parametrize("release", RELEASES)
def test_live_dir_when_producers_finish_and_after_clean_stop(release: str, start_broker: Callable[..., Broker]) -> None:
    broker = start_broker(release)
    logs = broker.log_dir
    output = setup_topics(broker)
    stream = start_driver(broker.lib, "stream", broker.bootstrap, "stream", str(STREAM_RECORDS), "200")
    try:
        _wait_for_progress(stream, 50)
        output += run_scenario(broker)  # while the stream producer goes on
        stream_out, stream_err = stream.communicate(timeout=120)
    finally:
        if stream.poll() is None:
            stream.kill()
            stream.wait(10)
    assert stream.returncode == 0, stream_err[-2000:]
    output += stream_out + run_driver(broker.lib, "count", broker.bootstrap, "stream")
    driver = checks.DriverOutput.parse(output)
    assert driver.counts["stream"] == driver.sent["stream"] == STREAM_RECORDS

    check_readable(logs)
    checks.check_all(logs, driver, live=True)  # live and idle: active segments with preallocated indexes
    assert broker.stop() in (0, 143)  # 143: the JVM's exit status after its SIGTERM shutdown hooks ran
    assert (logs / ".kafka_cleanshutdown").exists()
    checks.check_all(logs, driver)


ROLLS = 10   # segment rolls (16 KiB segments) verify-index must see happen under it


def test_verify_index_while_a_producer_appends(start_broker: Callable[..., Broker]) -> None:
    """A busy partition: no false alarm from verify-index run again and again while the broker appends and
    rolls, until it has rolled the segment ``ROLLS`` times under it (or 30 s have passed)."""
    broker = start_broker(RELEASES[0])
    setup_topics(broker)
    stream = start_driver(broker.lib, "stream", broker.bootstrap, "stream", "1000000", "1")
    partition = broker.log_dir / "stream-0"
    errors: list[str] = []
    runs = 0
    try:
        _wait_for_progress(stream, 100)
        threading.Thread(target=stream.stdout.read, daemon=True).start()  # type: ignore[union-attr]  # keep it unblocked
        first = max(partition.glob("*.log")).name
        deadline = time.monotonic() + 30
        while not errors and time.monotonic() < deadline and stream.poll() is None:
            result = run_kdump("verify-index", str(partition))
            errors = [line for line in result.stdout.splitlines() if line.startswith("error: ")]
            runs += 1
            if sum(1 for p in partition.glob("*.log") if p.name > first) >= ROLLS:
                break
    finally:
        stream.kill()
        stream.wait(10)
    assert errors == []
    rolled = sum(1 for p in partition.glob("*.log") if p.name > first)
    assert rolled >= 2 and runs >= 3, (rolled, runs)   # the runs saw segments roll under them


@pytest.mark.parametrize("release", RELEASES)
def test_kill_copy_and_restart_on_the_copy(release: str, start_broker: Callable[..., Broker], tmp_path: Path) -> None:
    """The harness does what a recovery test needs: crash, copy, restart on the copy, stop cleanly."""
    broker = start_broker(release)
    setup_topics(broker)
    sent = checks.DriverOutput.parse(run_driver(broker.lib, "stream", broker.bootstrap, "stream", "200", "0"))
    broker.kill()
    assert not (broker.log_dir / ".kafka_cleanshutdown").exists()
    check_readable(broker.log_dir)  # what a crash leaves: zero-padded indexes, no final time-index entry

    crashed = broker.copy_log_dir(tmp_path / "crashed-copy")
    restarted = start_broker(release, log_dir=crashed)
    after = checks.DriverOutput.parse(run_driver(restarted.lib, "count", restarted.bootstrap, "stream"))
    assert after.counts["stream"] == sent.sent["stream"] == 200
    assert restarted.stop() in (0, 143)
    assert (crashed / ".kafka_cleanshutdown").exists()
    checks.check_verify_index(crashed)
    shutil.rmtree(crashed)
