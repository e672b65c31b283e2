"""``--jobs N``: an ordered map over worker processes, so output is the same whatever N is.

    with WorkerPool(jobs) as pool:
        for item, result in pool.ordered_map(check_one, items):
            print(render(result))          # in the order of ``items``, as --jobs 1 prints them

``jobs <= 1`` runs ``func`` in this process (no pickling, no processes), so ``--jobs 1`` is the
plain loop. Given each item's ``weight`` (the bytes of its files), items also run here while they
add up to at most ``INLINE_BYTES``, and workers start only for what comes after: forking a worker
(copying a large parent's page tables) costs more than checking a few small partitions. In workers,
at most ``in_flight`` items (twice the workers by default) are submitted and not yet yielded, so
memory stays flat however many items ``items`` lazily produces; ``items``
is consumed only as room frees up, so work the parent does while producing an item (reading a
partition's checkpoints) happens just before that item is submitted. ``func`` must be a
module-level function and items and results picklable. An exception in a worker is raised by the
parent when its item's turn comes (``KdumpError`` keeps its file and position).

Workers ignore SIGINT: Ctrl-C reaches the whole process group, and only the parent may turn it
into kdump's one ``Error: interrupted`` line and exit 130. Leaving the pool any way but normally
(an exception, Ctrl-C, a closed pipe) terminates and reaps the workers; on Linux a worker also
dies with its parent (PR_SET_PDEATHSIG), so none is left behind even if the parent is killed.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:   # imported when a pool starts: --jobs 1 and kdump's start-up need neither
    from concurrent.futures import Future, ProcessPoolExecutor

T = TypeVar("T")
R = TypeVar("R")

_PR_SET_PDEATHSIG = 1   # linux/prctl.h
INLINE_BYTES = 8 << 20   # as kdump.dump.files.GROUP_BYTES and kdump.verify.driver.TASK_BYTES: one worker's share


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, not the machine's count)."""
    process_cpu_count = getattr(os, "process_cpu_count", None)   # Python >= 3.13
    if process_cpu_count is not None:
        return max(1, process_cpu_count() or 1)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """Workers are forked with SIGINT blocked, so a Ctrl-C arriving while one starts
    stays pending until ``_worker_init`` ignores it; the parent gets its own when this ends."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _worker_init(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # discards a Ctrl-C left pending while it started
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:   # the parent died before prctl took effect
        os._exit(1)


def split_bytes() -> int:
    """The size of the byte ranges a large segment is cut into for the workers (``kdump.log.segment.SPLIT_BYTES``,
    as ``kdump export``'s); the environment's ``KDUMP_SPLIT_BYTES`` overrides it (not documented: for tests,
    which cut small segments into many ranges)."""
    from kdump.log.segment import SPLIT_BYTES  # here: --help and a Tab import no log reader

    given = os.environ.get("KDUMP_SPLIT_BYTES")
    if not given:
        return SPLIT_BYTES
    if not given.isdigit() or int(given) < 1:
        raise click.UsageError(f"KDUMP_SPLIT_BYTES={given!r} is not a positive number of bytes")
    return int(given)


jobs_option = click.option(
    "--jobs", "-j", type=click.IntRange(min=1), default=available_cpus, show_default="CPUs available",
    help="Check this many partitions (or segments) at once in worker processes; output is the same "
         "as with --jobs 1.")


class WorkerPool:
    """A context manager for ``ordered_map``; workers start on first use and stop on exit."""

    def __init__(self, jobs: int, *, in_flight: int | None = None) -> None:
        self.jobs = max(1, jobs)
        self.in_flight = max(1, in_flight if in_flight is not None else 2 * self.jobs)
        self._executor: ProcessPoolExecutor | None = None

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close(abandon=kind is not None)

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # A forked worker inherits unwritten output and would write it again when it exits.
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError, AttributeError):
                    pass
            # Forked (every supported platform has fork): workers inherit kdump.dump.files' options, which hold
            # decoders that cannot be pickled.
            self._executor = ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context("fork"),
                                                 initializer=_worker_init, initargs=(os.getpid(),))
        return self._executor

    def ordered_map(self, func: Callable[[T], R], items: Iterable[T], *, is_work: Callable[[T], bool] | None = None,
                    weight: Callable[[T], int] | None = None) -> Iterator[tuple[T, R | None]]:
        """``(item, func(item))`` for every item, in the order of ``items``.

        Items for which ``is_work`` is false (markers the caller handles itself, such as "a
        partition ends here") are not sent to a worker: they come back in their place with None.
        With ``weight``, items run in this process while their weights add up to at most
        ``INLINE_BYTES``; the first that does not fit and all after it go to the workers (which start
        only then), so the order stays that of ``items``.
        """
        if self.jobs == 1:
            for item in items:
                yield item, func(item) if is_work is None or is_work(item) else None
            return
        iterator = iter(items)
        if weight is not None:
            budget = INLINE_BYTES
            for item in iterator:
                work = is_work is None or is_work(item)
                if work:
                    budget -= weight(item)
                    if budget < 0:   # this item and the rest go to the workers
                        iterator = itertools.chain((item,), iterator)
                        break
                yield item, func(item) if work else None
            else:
                return
        yield from self._in_workers(func, iterator, is_work)

    def _in_workers(self, func: Callable[[T], R], items: Iterator[T],
                    is_work: Callable[[T], bool] | None) -> Iterator[tuple[T, R | None]]:
        from concurrent.futures import Future

        pending: deque[tuple[T, Future[R | None]]] = deque()
        for item in items:
            if is_work is None or is_work(item):
                with _sigint_blocked():
                    future: Future[R | None] = self._pool().submit(func, item)
            else:
                future = Future()
                future.set_result(None)
            pending.append((item, future))
            if len(pending) >= self.in_flight:
                done, future = pending.popleft()
                yield done, future.result()
        while pending:
            done, future = pending.popleft()
            yield done, future.result()

    def close(self, *, abandon: bool = False) -> None:
        """Stop the workers: wait for them, or (``abandon``) terminate them now; either way reap them."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        if not abandon:
            executor.shutdown(wait=True)
            return
        processes = list(getattr(executor, "_processes", {}).values())
        for process in processes:
            process.terminate()
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.join()


__all__ = ["WorkerPool", "available_cpus", "jobs_option", "split_bytes"]
