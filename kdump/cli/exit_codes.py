"""The exit status of every kdump command, in one place (README's exit-code table lists them).

1 and 2 mean slightly different things per command (``find``: 1 not found; ``verify-index``: 1
problems found), so they have one name per meaning, all aliases of the same numbers. The codes
above 3 mean the same for every command: they are what the error boundary
(``kdump.cli.boundary``) returns when the run itself could not go on.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    PROBLEMS = 1        # verify-index / spark verify / summary / txn: problems found
    FILE_ERROR = 1      # --files: at least one file could not be dumped completely
    DUMP_USAGE = 1      # --files: bad arguments, 1 as kafka-dump-log's CommandLineUtils.printUsageAndExit
    NOT_FOUND = 1       # find: no record at or after the target
    FAILED = 1          # gen / rebuild-index: the output could not be written
    DATA_LOST = 1       # recover: the broker would truncate or delete data
    USAGE = 2           # bad arguments
    UNREADABLE = 2      # verify-index, find, summary, txn, spark: a PATH could not be read at all
    HANGING = 3         # txn: a transaction is still open at the log end
    REPLICAS_DIVERGE = 3  # replicas: replicas diverge, or a follower would drop records the leader lacks
    GROUPS_AT_RISK = 3  # groups: a group would skip, re-read, fail or has lost consumed records
    INTERNAL = 70       # a bug in kdump (sysexits EX_SOFTWARE)
    OUTPUT = 74         # standard output could not be written: full disk, I/O error, closed (EX_IOERR)
    INTERRUPTED = 130   # SIGINT / Ctrl-C (128 + SIGINT, as shells report it)
    BROKEN_PIPE = 141   # the reader of standard output went away (128 + SIGPIPE, as `cat` reports it)
