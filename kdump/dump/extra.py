"""kdump extensions to ``--files``: the log-directory files Kafka's tool does not dump.

Kafka's DumpLogSegments crashes on names without a dot (the checkpoints, quorum-state) and prints
``Ignoring unknown file`` for ``partition.metadata``, ``meta.properties`` and segments renamed with
``.deleted``/``.cleaned``/``.swap`` (LogFileUtils' suffixes). kdump shows them instead:

``dump_extra(run, path) -> bool`` handles such a file and returns True, or returns False so the
caller continues with Kafka's own dispatch. Malformed text becomes one ``Error:`` line naming the
file and the line number.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable

from kdump.dump.handlers import handler_for
from kdump.dump.run import DumpRun
from kdump.format.checkpoint import (
    LEADER_EPOCH_CHECKPOINT_NAME,
    OFFSET_CHECKPOINT_NAMES,
    CheckpointError,
    parse_clean_shutdown,
    parse_leader_epoch_checkpoint,
    parse_offset_checkpoint,
    parse_partition_metadata,
    parse_properties,
    parse_quorum_state,
)
from kdump.log.files import FileKind, file_kind, java_path, split_temp_suffix
from kdump.log.remote_layout import REMOTE_EPOCH_SUFFIX, parse_remote_segment_name
from kdump.log.segment import read_small_file
from kdump.render import log_json

# Suffixes Kafka appends to a finished file name while it is being replaced or deleted (LogFileUtils).
TEMP_SUFFIXES = {
    ".deleted": "scheduled for asynchronous deletion (file.delete.delay.ms); Kafka removes it at start-up",
    ".cleaned": "being written by the log cleaner or a segment split; Kafka removes it at start-up",
    ".swap": "a finished replacement waiting to be renamed into place; Kafka completes the swap at start-up",
    ".part": "an in-progress KRaft snapshot",
}


_MAX_TEXT_FILE_BYTES = 64 << 20  # checkpoints hold a line per partition: far below this on any broker


def _read_text(path: str) -> bytes:
    return read_small_file(path, _MAX_TEXT_FILE_BYTES)


def _malformed(run: DumpRun, path: str, err: CheckpointError) -> None:
    """One line: Kafka's message (which names the file) and the line number."""
    where = f" (line {err.line_number})" if err.line_number is not None else ""
    run.out.flush()
    run.emit({"type": "error", "path": path, "message": err.reason, "line": err.line_number})
    run.fail(f"{err.reason}{where}", path)


def _offset_checkpoint(run: DumpRun, path: str, name: str) -> None:
    from kdump.verify.partition_summary import CHECKPOINT_MEANING  # here: verify is slow to import for a plain dump

    parsed = parse_offset_checkpoint(_read_text(path), java_path(path))
    field = CHECKPOINT_MEANING[name]
    lines = [f"Offset checkpoint ({field}) version: {parsed.version} entries: {len(parsed.entries)}"]
    lines += [f"topic: {e.topic} partition: {e.partition} {field}: {e.offset}" for e in parsed.entries]
    run.emit(log_json.file_object(path, "offsetCheckpoint", checkpoint=name, meaning=field, version=parsed.version,
                                  entries=[{"topic": e.topic, "partition": e.partition, field: e.offset}
                                           for e in parsed.entries]), *lines)


def _leader_epochs(run: DumpRun, path: str) -> None:
    parsed = parse_leader_epoch_checkpoint(_read_text(path), java_path(path))
    lines = [f"Leader epoch checkpoint version: {parsed.version} entries: {len(parsed.entries)}"]
    lines += [f"epoch: {e.epoch} startOffset: {e.start_offset}" for e in parsed.entries]
    run.emit(log_json.file_object(path, "leaderEpochCheckpoint", version=parsed.version, entries=[
        {"epoch": e.epoch, "startOffset": e.start_offset} for e in parsed.entries]), *lines)


def _partition_metadata(run: DumpRun, path: str) -> None:
    meta = parse_partition_metadata(_read_text(path), java_path(path))
    run.emit(log_json.file_object(path, "partitionMetadata", version=meta.version, topicId=meta.topic_id),
             f"version: {meta.version} topicId: {meta.topic_id}")


def _meta_properties(run: DumpRun, path: str) -> None:
    props = parse_properties(_read_text(path), java_path(path))
    run.emit(log_json.file_object(path, "metaProperties", properties=props),
             *(f"{key}: {value}" for key, value in props.items()))


def _quorum_state(run: DumpRun, path: str) -> None:
    state = parse_quorum_state(_read_text(path), java_path(path))
    lines = [f"{key}: {json.dumps(value, separators=(',', ':'))}" for key, value in state.items()]
    run.emit(log_json.file_object(path, "quorumState", state=state), *lines)


def _clean_shutdown(run: DumpRun, path: str) -> None:
    marker = parse_clean_shutdown(_read_text(path), java_path(path))
    if marker.version is None:
        line = "Clean shutdown marker (empty, as written by older Kafka)"
    else:
        line = f"Clean shutdown marker version: {marker.version} brokerEpoch: {marker.broker_epoch}"
    run.emit(log_json.file_object(path, "cleanShutdown", version=marker.version, brokerEpoch=marker.broker_epoch),
             line)


_BY_NAME: dict[str, Callable[[DumpRun, str], None]] = {
    **{name: functools.partial(_offset_checkpoint, name=name) for name in OFFSET_CHECKPOINT_NAMES},
    LEADER_EPOCH_CHECKPOINT_NAME: _leader_epochs,
    "partition.metadata": _partition_metadata,
    "meta.properties": _meta_properties,
    "quorum-state": _quorum_state,
    ".kafka_cleanshutdown": _clean_shutdown,
}


_REMOTE_STATE = {"snapshot": "the producer state at the end of the remote segment starting at offset {start}",
                 "leader_epoch_checkpoint": "the partition's leader epochs up to the end of the remote segment "
                                            "starting at offset {start}"}


def _remote_state_note(run: DumpRun, path: str, name: str) -> None:
    """A remote segment's .snapshot / .leader_epoch_checkpoint (docs/tiered.md) says what it holds first."""
    remote = parse_remote_segment_name(name)
    if remote is None or remote[2] not in _REMOTE_STATE:
        return
    note = "kdump: " + _REMOTE_STATE[remote[2]].format(start=remote[0])
    run.emit({"type": "note", "path": path, "remoteSegmentId": remote[1], "text": note}, note)


def dump_extra(run: DumpRun, path: str) -> bool:
    """Dump ``path`` if it is a file Kafka's tool does not handle; False leaves it to Kafka's dispatch."""
    name = os.path.basename(java_path(path))
    _remote_state_note(run, path, name)
    handler = _BY_NAME.get(name) or (_leader_epochs if name.endswith(REMOTE_EPOCH_SUFFIX) else None)
    if handler is not None:
        try:
            handler(run, path)
        except CheckpointError as err:
            _malformed(run, path, err)
        return True
    stem, suffix = split_temp_suffix(name)
    kind = file_kind(stem) if suffix else None
    if kind is None or (suffix == ".part" and kind is not FileKind.CHECKPOINT):
        return False
    note = f"kdump: {os.path.basename(path)} is a {kind.value} file {TEMP_SUFFIXES[suffix]} ({suffix}); " \
           f"dumped as {kind.value}"
    run.emit({"type": "note", "path": path, "tempSuffix": suffix, "fileType": kind.value, "text": note}, note)
    handler_for(kind)(run, path)
    return True
