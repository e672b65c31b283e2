"""A progress bar on stderr for long runs, only where a person watches it.

    with ProgressBar(total_bytes, "verify", show=wants_progress(json_output)) as bar:
        for ...:
            bar.clear()          # before writing to stdout, in case it is the same terminal
            ...write...
            bar.advance(done_bytes)

Shown only when stderr is a terminal and the output is not JSON; never a byte on a pipe. It
appears once a run has taken ``KDUMP_PROGRESS_DELAY`` seconds (default 0.5: quick runs do not
flicker) and is erased when the run ends. It draws only when advanced (no refresh thread, so
worker processes are never forked while a thread holds a lock). ``clear`` takes it off the screen
before output is written to a terminal; it comes back on a later ``advance``.
"""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType
from typing import Any, TextIO

_REFRESH_SECONDS = 0.1
_DEFAULT_DELAY_SECONDS = 0.5


def is_terminal(stream: TextIO | None) -> bool:
    """False for a closed, missing or non-file stream too."""
    try:
        return stream is not None and stream.isatty()
    except (ValueError, AttributeError):
        return False


def wants_progress(json_output: bool, stream: TextIO | None = None) -> bool:
    """True when a bar belongs on ``stream`` (stderr): a terminal, and output meant for a person."""
    return not json_output and is_terminal(stream if stream is not None else sys.stderr)


def _delay() -> float:
    try:
        return max(0.0, float(os.environ.get("KDUMP_PROGRESS_DELAY", _DEFAULT_DELAY_SECONDS)))
    except ValueError:
        return _DEFAULT_DELAY_SECONDS


class ProgressBar:
    """Counts work done; draws a Rich bar on stderr when ``show`` (see the module doc)."""

    def __init__(self, total: int | None, description: str, *, show: bool, unit: str = "bytes",
                 stream: TextIO | None = None) -> None:
        self.total = total
        self.description = description
        self.show = show
        self.unit = unit
        self.stream = stream
        self.done = 0
        self._progress: Any = None
        self._task: Any = None
        self._visible = False
        self._started = time.monotonic()
        self._last_draw = 0.0
        self._hidden_at = 0.0

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.clear()

    def advance(self, amount: int = 1) -> None:
        self.done += amount
        if not self.show:
            return
        now = time.monotonic()
        if now - self._started < _delay() or now - self._last_draw < _REFRESH_SECONDS:
            return
        if not self._visible and now - self._hidden_at < _REFRESH_SECONDS * 2:
            return
        progress = self._rich()
        progress.update(self._task, completed=self.done)
        if not self._visible:
            progress.start()
            self._visible = True
        progress.refresh()
        self._last_draw = now

    def clear(self) -> None:
        """Erase the bar (it is transient) before output goes to the same terminal."""
        if self._visible:
            self._progress.stop()
            self._visible = False
            self._hidden_at = time.monotonic()

    def clear_for(self, output: TextIO) -> None:
        """``clear`` when ``output`` is a terminal (the bar's own, as likely as not)."""
        if self._visible and is_terminal(output):
            self.clear()

    def _rich(self) -> Any:
        if self._progress is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            amount = DownloadColumn() if self.unit == "bytes" else MofNCompleteColumn()
            console = Console(file=self.stream if self.stream is not None else sys.stderr)
            self._progress = Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), amount,
                                      TimeRemainingColumn(), console=console, transient=True, auto_refresh=False,
                                      redirect_stdout=False, redirect_stderr=False)
            self._task = self._progress.add_task(self.description, total=self.total)
        return self._progress


__all__ = ["ProgressBar", "is_terminal", "wants_progress"]
