"""Signals while kdump writes: SIGINT, SIGTERM and SIGHUP become ``SignalInterrupt`` so cleanup runs.

``guard.active()`` installs the handlers for the duration of a write (main thread only; a signal
that was ignored, as under nohup, stays ignored). ``guard.hold()`` marks the final renames: a
signal that arrives then waits until they are done and is raised afterwards, saying the output
is complete. Once ``SignalInterrupt`` was raised, later signals no longer cut the cleanup short.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

_GUARDED_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class SignalInterrupt(KeyboardInterrupt):
    """A signal stopped a write. ``completed`` names the output when it was already in place."""

    def __init__(self, signo: int, completed: str | None = None) -> None:
        super().__init__(signo)
        self.signo = signo
        self.completed = completed

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signo).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signo   # what a shell reports for a process killed by the signal


class SignalGuard:
    """Turns SIGINT/SIGTERM/SIGHUP into ``SignalInterrupt`` while a write runs (main thread only)."""

    def __init__(self) -> None:
        self.depth = 0
        self.holding = 0
        self.held: int | None = None      # a signal that arrived while holding
        self.raised = False               # SignalInterrupt was raised: later signals wait for the cleanup
        self.previous: dict[int, Any] = {}  # what signal.signal returned: a handler, SIG_DFL or None

    def _on_signal(self, signo: int, _frame: FrameType | None) -> None:
        if self.holding or self.raised:
            self.held = self.held or signo
            return
        self.raised = True
        raise SignalInterrupt(signo)

    @contextmanager
    def active(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        if self.depth == 0:
            self.held, self.raised = None, False
            for signo in _GUARDED_SIGNALS:
                previous = signal.getsignal(signo)
                if previous is not signal.SIG_IGN:   # e.g. nohup: an ignored SIGHUP stays ignored
                    self.previous[signo] = signal.signal(signo, self._on_signal)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            if self.depth == 0:
                for signo, previous in self.previous.items():
                    signal.signal(signo, previous)
                self.previous = {}

    @contextmanager
    def hold(self, target: str | None) -> Iterator[None]:
        """Signals wait until the block ends; then the first one raises, saying ``target`` is complete."""
        self.holding += 1
        try:
            yield
        finally:
            self.holding -= 1
        if not self.holding and self.held is not None and not self.raised:
            signo, self.held, self.raised = self.held, None, True
            raise SignalInterrupt(signo, completed=target)


guard = SignalGuard()

__all__ = ["SignalGuard", "SignalInterrupt", "guard"]
