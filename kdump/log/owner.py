"""Who made a temporary area, and whether that process provably no longer runs.

A pid alone is not enough (pids are reused, and restart after a reboot): the record also holds
the host name, the boot id and the process start time from /proc.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

OWNER_HEADER = "kdump temporary area; removed by the next kdump writer once this process is gone"


def read_text(path: str) -> str | None:
    """The first 4 KiB of a small text file (an owner record, a /proc file), None if it cannot be read."""
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read(4096)
    except OSError:
        return None


def _boot_id() -> str:
    return (read_text("/proc/sys/kernel/random/boot_id") or "").strip()


def _process_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time in clock ticks since boot) of a live process, from /proc; None if unknown."""
    text = read_text(f"/proc/{pid}/stat")
    if not text or ")" not in text:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return (fields[0], fields[19]) if len(fields) > 19 else None


@dataclass(frozen=True, slots=True)
class Owner:
    """The process that made a temporary area. A pid alone is not enough: pids are reused."""

    host: str
    boot: str
    pid: int
    start: str

    @classmethod
    def current(cls) -> Owner:
        stat = _process_stat(os.getpid())
        return cls(socket.gethostname(), _boot_id(), os.getpid(), stat[1] if stat else "")

    def encode(self) -> bytes:
        return f"{OWNER_HEADER}\nhost={self.host}\nboot={self.boot}\npid={self.pid}\nstart={self.start}\n".encode()

    @classmethod
    def decode(cls, text: str) -> Owner | None:
        lines = text.split("\n")
        if lines[0] != OWNER_HEADER:
            return None
        fields = dict(line.partition("=")[::2] for line in lines[1:] if "=" in line)
        try:
            return cls(fields["host"], fields["boot"], int(fields["pid"]), fields["start"])
        except (KeyError, ValueError):
            return None

    def is_gone(self) -> bool:
        """True only when this process provably no longer runs (same host, and it or its boot ended)."""
        if self.host != socket.gethostname():
            return False            # another machine sharing the folder: no way to tell
        here = _boot_id()
        if self.boot and here and self.boot != here:
            return True             # the machine rebooted since
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass                    # someone else's live process
        stat = _process_stat(self.pid)
        if stat is None:
            return False
        state, start = stat
        # a zombie has exited; another start time means the pid now belongs to another process
        return state == "Z" or bool(self.start and start != self.start)


__all__ = ["OWNER_HEADER", "Owner", "read_text"]
