"""One run over log dirs for ``verify``, ``verify-index``, ``summary`` and ``txn``: one walk, one worker pool, one
progress bar.

    with Walk("txn", (path,), jobs=jobs, json_output=json_output) as walk:
        for partition, report in walk.partitions(analyze_transactions):
            walk.bar.clear_for(sys.stdout)
            ...print report...

The walk is ``kdump.verify.engine.plan`` (a partition dir, a log dir or a parent of log dirs; ``verify``
also takes segment files). The bar counts bytes of ``.log``; its total is listed before the run, only
when a bar is shown (listing directories twice keeps memory flat however many segments there are).
``partitions`` maps a function over the partitions in worker processes (``--jobs``) and advances the bar
as each comes back; ``verify`` hands ``walk.pool.ordered_map`` to ``kdump.verify.driver.verify_paths``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import Any, TypeVar

from kdump.cli.parallel import WorkerPool
from kdump.cli.progress import ProgressBar, wants_progress
from kdump.log.logdir import PartitionDir, files_bytes, log_bytes
from kdump.verify.engine import plan, planned_log_bytes

R = TypeVar("R")


def partitions_under(paths: Iterable[str]) -> Iterator[PartitionDir]:
    """The partitions ``plan`` finds under ``paths`` (directories), in its order."""
    for path in paths:
        for target in plan(path):
            if isinstance(target, PartitionDir):
                yield target


def _second(func: Callable[[Any], R], pair: tuple[PartitionDir, Any]) -> R:
    return func(pair[1])


def _partition_bytes(pair: tuple[PartitionDir, Any]) -> int:
    return files_bytes(pair[0].segments)


class Walk:
    """A context manager holding the run's ``pool`` and ``bar``; see the module docstring."""

    def __init__(self, command: str, paths: Iterable[str], *, jobs: int, json_output: bool) -> None:
        self.paths = tuple(paths)
        show = wants_progress(json_output)
        self.pool = WorkerPool(jobs)
        self.bar = ProgressBar(planned_log_bytes(self.paths) if show else None, command, show=show)

    def __enter__(self) -> Walk:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self.bar.__exit__(kind, error, tb)
        finally:
            self.pool.__exit__(kind, error, tb)

    def partitions(self, func: Callable[[Any], R],
                   prepare: Callable[[PartitionDir], Any] | None = None) -> Iterator[tuple[PartitionDir, R]]:
        """``(partition, func(prepare(partition)))`` for every partition, in walk order (``func`` at module
        level; ``prepare``, by default the partition itself, runs here just before it is handed out)."""
        items = ((p, p if prepare is None else prepare(p)) for p in partitions_under(self.paths))
        for (partition, _), result in self.pool.ordered_map(functools.partial(_second, func), items,
                                                            weight=_partition_bytes):
            self.bar.advance(log_bytes(partition.segments))
            yield partition, result  # type: ignore[misc]
