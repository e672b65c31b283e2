"""What ``kdump spark`` copies of its JVM's stderr when quiet (no ``--verbose``): no start-up noise, no
traceback of a Python worker whose socket the JVM closed first, nothing once the session stops. The daemon
traceback below is the one a CI run printed under ``kdump spark verify`` when an executor could not import
kdump (PySpark 4.0's python/pyspark/daemon.py); a test of the whole command is in
tests/spark/test_cli_session.py."""

from __future__ import annotations

import os
import select
import threading

from kdump.cli.spark import _copy_without_noise

DAEMON_TRACEBACK = (
    b"Traceback (most recent call last):\n"
    b'  File "/venv/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/daemon.py", line 264, '
    b"in manager\n"
    b'  File "/venv/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/daemon.py", line 95, '
    b"in worker\n"
    b"BrokenPipeError: [Errno 32] Broken pipe\n")
# A README test run (tests/spark/test_cli_session.py, PySpark 4.3): the JVM closed a new worker's socket
# before it sent the secret the daemon reads first.
DAEMON_EOF_TRACEBACK = (
    b"Traceback (most recent call last):\n"
    b'  File "/venv/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/daemon.py", line 264, '
    b"in manager\n"
    b'  File "/venv/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/daemon.py", line 65, '
    b"in worker\n"
    b'  File "/venv/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/serializers.py", line 565, '
    b"in loads\n"
    b"    length = read_int(stream)\n"
    b"             ^^^^^^^^^^^^^^^^\n"
    b'  File "/venv/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/serializers.py", line 604, '
    b"in read_int\n"
    b"    raise EOFError\n"
    b"EOFError\n")
OTHER_TRACEBACK = (
    b"Traceback (most recent call last):\n"
    b'  File "/work/job.py", line 3, in <module>\n'
    b"    raise ValueError('x')\n"
    b"ValueError: x\n")


def _copied(chunks: list[bytes], stop_after: int | None = None) -> bytes:
    read_end, write_end = os.pipe()
    out_read, out_write = os.pipe()
    teardown = threading.Event()
    copier = threading.Thread(target=_copy_without_noise, args=(read_end, out_write, teardown))
    copier.start()
    before_stop = b""
    with os.fdopen(write_end, "wb", buffering=0) as jvm:
        for i, chunk in enumerate(chunks):
            jvm.write(chunk)
            if stop_after == i:            # what came before the stop is copied first
                assert select.select([out_read], [], [], 10)[0]
                before_stop = os.read(out_read, 4096)
                teardown.set()
    copier.join(10)
    assert not copier.is_alive()
    with os.fdopen(out_read, "rb") as out:
        return before_stop + out.read()


def test_noise_and_the_daemons_closed_socket_are_dropped() -> None:
    got = _copied([b"WARNING: Using incubator modules: jdk.incubator.vector\n", DAEMON_TRACEBACK,
                   DAEMON_EOF_TRACEBACK, b"a line of the job\n", OTHER_TRACEBACK,
                   b"Traceback (most recent call last):\n  File"])
    # any other traceback stays whole, and so does a cut one at the end
    assert got == b"a line of the job\n" + OTHER_TRACEBACK + b"Traceback (most recent call last):\n  File"


def test_nothing_is_copied_once_the_session_stops() -> None:
    assert _copied([b"before\n", b"Exception in thread stopping\n"], stop_after=0) == b"before\n"
