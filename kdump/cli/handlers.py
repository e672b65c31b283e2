"""Which function dumps which kind of file; imported on first use so a plain dump starts fast."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from kdump.cli.run import DumpRun
from kdump.log.files import FileKind

Handler = Callable[[DumpRun, str], None]

# FileKind -> "module:function(run, path)".
HANDLERS: dict[FileKind, str] = {
    FileKind.LOG: "kdump.cli.dump_log:dump_log",
    FileKind.CHECKPOINT: "kdump.cli.dump_log:dump_log",
    FileKind.INDEX: "kdump.cli.dump_index:dump_offset_index",
    FileKind.TIME_INDEX: "kdump.cli.dump_index:dump_time_index",
    FileKind.PRODUCER_SNAPSHOT: "kdump.cli.dump_state:dump_producer_snapshot",
    FileKind.TXN_INDEX: "kdump.cli.dump_state:dump_txn_index",
}


def handler_for(kind: FileKind) -> Handler:
    module_name, attr = HANDLERS[kind].split(":")
    return getattr(importlib.import_module(module_name), attr)
