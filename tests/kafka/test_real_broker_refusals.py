"""Log dirs a real broker refuses to start on, and `kdump recover` saying so.

Each case damages a copy of a cleanly stopped broker's log dir (4.3.0 and 3.9.2); the real broker started on it
exits during start-up (its only log dir goes offline), and `kdump recover` exits 2 with one
`Error: <file>: ...` line naming the file the broker fails on, and writes no copy.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from broker import RECOVER_RELEASES, Broker, BrokerError, run_driver
from broker_checks import damaged_copies
from make_real_fixtures import setup_topics
from real_jars import kafka_lib

from kdump_testing import run_kdump

PARTITION = "sequence-0"


def _garble(path: Path) -> None:
    path.write_text("0\n3\nsequence 0 12\n")      # three entries announced, one there


# The file each case garbles, under the log dir.
GARBLED: dict[str, str] = {
    "recovery-point-checkpoint": "recovery-point-offset-checkpoint",
    "log-start-checkpoint": "log-start-offset-checkpoint",
    "leader-epoch-checkpoint": f"{PARTITION}/leader-epoch-checkpoint",
}


@pytest.fixture(scope="module", params=RECOVER_RELEASES)
def stopped_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    release = request.param
    tmp = tmp_path_factory.mktemp(f"stopped-{release}")
    broker = Broker(kafka_lib(release), tmp / "logdir", tmp / "work", release).start()
    try:
        setup_topics(broker)
        run_driver(broker.lib, "sequence", broker.bootstrap, "sequence", "300", "10", "1700000000000", "1000")
    finally:
        assert broker.stop() in (0, 143)
    return release, broker.log_dir


@pytest.mark.parametrize("case", sorted(GARBLED))
def test_kdump_reports_what_the_broker_refuses(case: str, stopped_dir: tuple[str, Path], tmp_path: Path,
                                               start_broker: Callable[..., Broker]) -> None:
    release, stopped = stopped_dir
    for_kdump, for_broker = damaged_copies(stopped, tmp_path, lambda log_dir: _garble(log_dir / GARBLED[case]))
    damaged = for_kdump / GARBLED[case]

    result = run_kdump("recover", str(for_kdump), "--out", str(tmp_path / "copy"))
    assert result.exit_code == 2, result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {damaged}: the broker refuses to load "), lines
    assert not (tmp_path / "copy").exists()

    try:
        broker = start_broker(release, log_dir=for_broker)
    except BrokerError as err:
        assert "exited during start" in str(err)
    else:
        # A 3.3 broker listens before it loads its logs; it stops when it does.
        assert broker.process is not None and broker.process.wait(90) != 0, broker.output_tail()
