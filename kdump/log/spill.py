"""A list of integer pairs that keeps memory flat by spilling to a temporary file.

DumpLogSegments remembers every non-consecutive offset pair of a file and prints them at the end of
the run; a crafted batch of millions of records at one offset makes that millions of pairs. Past
``limit`` pairs in memory, ``PairList`` appends them to an anonymous temporary file (deleted when
closed, never beside the files kdump reads) and reads them back in the order asked for: insertion
order, reversed, or sorted (a merge of sorted runs, one run in memory at a time).
"""

from __future__ import annotations

import heapq
import os
import struct
from array import array
from collections.abc import Iterable, Iterator
from typing import IO, Any

_PAIR = struct.Struct("<qq")
DEFAULT_LIMIT = 1 << 16


class PairList:
    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = limit
        self._memory = array("q")            # a, b, a, b, ...
        self._file: IO[bytes] | None = None
        self._spilled = 0                    # pairs in the file

    def __len__(self) -> int:
        return self._spilled + len(self._memory) // 2

    def __bool__(self) -> bool:
        return len(self) > 0

    def append(self, a: int, b: int) -> None:
        self._memory.append(a)
        self._memory.append(b)
        if len(self._memory) >= 2 * self.limit:
            self._spill()

    def extend(self, pairs: Iterable[tuple[int, int]]) -> None:
        for a, b in pairs:
            self.append(a, b)

    def _spill(self) -> None:
        import tempfile  # here and below: every dump makes PairLists, few ever spill

        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="kdump-pairs-")  # noqa: SIM115 (closed by close())
        self._file.seek(0, 2)
        self._file.write(self._memory.tobytes())
        self._spilled += len(self._memory) // 2
        self._memory = array("q")

    def _spilled_run(self, first: int) -> array:
        """Up to ``limit`` spilled pairs from pair number ``first``."""
        assert self._file is not None
        self._file.seek(first * _PAIR.size)
        run = array("q")
        run.frombytes(self._file.read(self.limit * _PAIR.size))
        return run

    def _runs(self) -> Iterator[array]:
        """The pairs in insertion order, ``limit`` pairs at a time."""
        if self._file is not None:
            for first in range(0, self._spilled, self.limit):
                yield self._spilled_run(first)
        if self._memory:
            yield self._memory

    def __iter__(self) -> Iterator[tuple[int, int]]:
        for run in self._runs():
            yield from zip(run[0::2], run[1::2], strict=True)

    def reversed(self) -> Iterator[tuple[int, int]]:
        if self._memory:
            yield from zip(reversed(self._memory[0::2]), reversed(self._memory[1::2]), strict=True)
        if self._file is None:
            return
        for first in reversed(range(0, self._spilled, self.limit)):
            run = self._spilled_run(first)
            yield from zip(reversed(run[0::2]), reversed(run[1::2]), strict=True)

    def sorted(self) -> Iterator[tuple[int, int]]:
        if self._file is None:
            yield from sorted(zip(self._memory[0::2], self._memory[1::2], strict=True))
            return
        import tempfile

        with tempfile.TemporaryFile(prefix="kdump-pairs-sorted-") as runs_file:
            bounds = []
            for run in self._runs():
                ordered = sorted(zip(run[0::2], run[1::2], strict=True))
                start = runs_file.tell()
                runs_file.write(b"".join(_PAIR.pack(a, b) for a, b in ordered))
                bounds.append((start, len(ordered)))
            yield from heapq.merge(*(_read_run(runs_file, start, count) for start, count in bounds))

    def __getstate__(self) -> dict[str, Any]:
        """A copy for another process (``--jobs``): spilled pairs travel through a named temporary
        file, which the receiving side reads back and deletes, so no process holds them all."""
        state: dict[str, Any] = {"limit": self.limit, "memory": self._memory.tobytes(), "spill": None}
        if self._file is not None:
            import shutil
            import tempfile

            with tempfile.NamedTemporaryFile(prefix="kdump-pairs-sent-", delete=False) as sent:
                self._file.seek(0)
                shutil.copyfileobj(self._file, sent, 1 << 20)
            state["spill"] = (sent.name, self._spilled)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(int(state["limit"]))  # type: ignore[misc]
        spill: tuple[str, int] | None = state["spill"]
        if spill is not None:
            import shutil
            import tempfile

            name, count = spill
            self._file = tempfile.TemporaryFile(prefix="kdump-pairs-")  # noqa: SIM115 (closed by close())
            with open(name, "rb") as sent:
                shutil.copyfileobj(sent, self._file, 1 << 20)
            os.unlink(name)
            self._spilled = count
        self._memory.frombytes(state["memory"])

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _read_run(file: IO[bytes], start: int, count: int, batch: int = 4096) -> Iterator[tuple[int, int]]:
    """One sorted run of ``file``, read ``batch`` pairs at a time (the runs share one file)."""
    for first in range(0, count, batch):
        n = min(batch, count - first)
        file.seek(start + first * _PAIR.size)
        data = file.read(n * _PAIR.size)
        yield from _PAIR.iter_unpack(data)
