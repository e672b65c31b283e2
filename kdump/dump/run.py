"""What one dump run is given (``DumpOptions``) and shares between its files (``DumpRun``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TextIO

from kdump.errors import KdumpError, write_error
from kdump.render.dialect import LATEST, Dialect
from kdump.render.log_text import RecordTextOptions
from kdump.render.summaries import DumpSummaries

INT32_MAX = 2**31 - 1


@dataclass
class DumpOptions:
    """Kafka's options of one dump (the defaults are kafka-dump-log's), and the dialect to print in."""

    deep: bool = False
    records: RecordTextOptions = field(default_factory=RecordTextOptions)
    max_bytes: int = INT32_MAX
    verify_index_only: bool = False
    index_sanity_check: bool = False
    max_message_size: int = 5 * 1024 * 1024
    json: bool = False
    traceback: bool = False
    dialect: Dialect = LATEST


@dataclass
class DumpRun:
    """What one run writes and remembers; handlers append to the summaries, printed after the last file."""

    options: DumpOptions
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    failed: list[str] = field(default_factory=list)   # files that could not be dumped completely
    summaries: DumpSummaries = field(default_factory=DumpSummaries)

    @property
    def dialect(self) -> Dialect:
        return self.options.dialect

    def error(self, err: KdumpError, path: str) -> None:
        """Report a file that could not be dumped (completely) and carry on with the next one."""
        err.with_file(path)
        self.fail(err, path, traceback_of=err if self.options.traceback else None)

    def fail(self, problem: BaseException | str, path: str, traceback_of: BaseException | None = None) -> None:
        """One ``Error:`` line for a file that could not be dumped completely; the run goes on."""
        write_error(problem, err=self.err, out=self.out, traceback_of=traceback_of)
        self.failed.append(path)

    def warn(self, text: str) -> None:
        self.out.flush()
        self.err.write(text + "\n")
        self.err.flush()
