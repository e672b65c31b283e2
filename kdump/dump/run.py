"""What one dump run is given (``DumpOptions``) and shares between its files (``DumpRun``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from kdump.dump.filters import RecordFilter
from kdump.errors import KdumpError, write_error
from kdump.format.batch import INT32_MAX
from kdump.log.files import FileKind, file_kind
from kdump.render.dialect import LATEST, Dialect
from kdump.render.log_text import RecordDecoder, RecordTextOptions
from kdump.render.summaries import DumpSummaries

if TYPE_CHECKING:
    from kdump.dump.log import RecordedRanges


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
    filter: RecordFilter = field(default_factory=RecordFilter)
    # Internal topic -> its decoder, for the files of that topic's partitions (a directory's files, or
    # every file when records.record_decoder is None); other topics print with the key/value decoders.
    topic_decoders: Mapping[str, RecordDecoder] = field(default_factory=dict)

    def records_for(self, path: str, from_directory: bool) -> RecordTextOptions:
        """How the records of ``path`` are printed: by its partition's topic, where that applies."""
        if not self.topic_decoders or (self.records.record_decoder is not None and not from_directory):
            return self.records  # Kafka: the decoder given applies to every file named
        from kdump.log.logdir import parse_partition_dir_name  # here: a plain dump needs no partition dirs

        parsed = parse_partition_dir_name(os.path.basename(os.path.dirname(os.path.abspath(path))))
        topic = parsed[0] if parsed is not None else None
        if file_kind(path) is FileKind.CHECKPOINT:
            topic = "__cluster_metadata"  # KRaft snapshots, bootstrap.checkpoint in the log dir too
        decoder = self.topic_decoders.get(topic) if topic is not None else None
        return self.records._replace(record_decoder=decoder)


@dataclass
class DumpRun:
    """What one run writes and remembers; handlers append to the summaries, printed after the last file."""

    options: DumpOptions
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    failed: list[str] = field(default_factory=list)   # files that could not be dumped completely
    summaries: DumpSummaries = field(default_factory=DumpSummaries)
    records: RecordTextOptions = field(init=False)   # the file being dumped's (``records_for``)
    printed: int = 0                                  # records printed, for --limit
    # The segment being dumped whose batches workers dumped in ranges (--jobs, kdump.dump.files).
    ranges: RecordedRanges | None = None

    def __post_init__(self) -> None:
        self.records = self.options.records

    @property
    def limit_reached(self) -> bool:
        limit = self.options.filter.limit
        return limit is not None and self.printed >= limit

    def take(self) -> bool:
        """Count one more matching record; False once --limit records were printed."""
        if self.limit_reached:
            return False
        self.printed += 1
        return True

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

    def emit(self, obj: dict[str, Any], *lines: str) -> None:
        """``obj`` as one JSON line with --json, else ``lines`` (Kafka's text; none: JSON only)."""
        if self.options.json:
            from kdump.render import log_json  # here: a text dump needs no JSON

            self.out.write(log_json.dumps(obj) + "\n")
        else:
            for line in lines:
                self.out.write(line + "\n")

    def warn(self, text: str) -> None:
        self.out.flush()
        self.err.write(text + "\n")
        self.err.flush()
