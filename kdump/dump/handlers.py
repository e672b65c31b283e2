"""Which function dumps which kind of file; imported on first use so a plain dump starts fast."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from kdump.dump.run import DumpRun
from kdump.log.files import FileKind

Handler = Callable[[DumpRun, str], None]

# FileKind -> "module:function(run, path)".
HANDLERS: dict[FileKind, str] = {
    FileKind.LOG: "kdump.dump.log:dump_log",
    FileKind.CHECKPOINT: "kdump.dump.log:dump_log",
    FileKind.INDEX: "kdump.dump.index:dump_offset_index",
    FileKind.TIME_INDEX: "kdump.dump.index:dump_time_index",
    FileKind.PRODUCER_SNAPSHOT: "kdump.dump.state:dump_producer_snapshot",
    FileKind.TXN_INDEX: "kdump.dump.state:dump_txn_index",
}


def handler_for(kind: FileKind) -> Handler:
    module_name, attr = HANDLERS[kind].split(":")
    return getattr(importlib.import_module(module_name), attr)
