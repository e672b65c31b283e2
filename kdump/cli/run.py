"""State shared by every file of one ``kdump --files`` run: options, streams, end-of-run summaries."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TextIO

from kdump.errors import KdumpError
from kdump.render.dialect import Dialect
from kdump.render.log_text import RecordTextOptions
from kdump.render.summaries import DumpSummaries

INT32_MAX = 2**31 - 1

EXIT_OK = 0
EXIT_FILE_ERROR = 1   # at least one file could not be dumped completely (its error was printed)
EXIT_USAGE = 2        # bad arguments (click's usage errors use 2 as well)
EXIT_DUMP_USAGE = 1   # bad arguments to `kdump --files`: 1, as kafka-dump-log's printUsageAndExit


@dataclass
class DumpOptions:
    deep: bool = False
    records: RecordTextOptions = field(default_factory=RecordTextOptions)
    max_bytes: int = INT32_MAX
    verify_index_only: bool = False
    index_sanity_check: bool = False
    max_message_size: int = 5 * 1024 * 1024
    json: bool = False
    traceback: bool = False


@dataclass
class DumpRun:
    """What one run writes and remembers; handlers append to the summaries, ``finish`` prints them."""

    options: DumpOptions
    dialect: Dialect
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    exit_code: int = EXIT_OK
    summaries: DumpSummaries = field(default_factory=DumpSummaries)

    def error(self, err: KdumpError, path: str) -> None:
        """Report a file that could not be dumped (completely) and carry on with the next one."""
        err.with_file(path)
        self.out.flush()
        if self.options.traceback:
            import traceback

            traceback.print_exception(err, file=self.err)
        self.err.write(f"Error: {err}\n")
        self.err.flush()
        self.exit_code = EXIT_FILE_ERROR

    def warn(self, text: str) -> None:
        self.out.flush()
        self.err.write(text + "\n")
        self.err.flush()
