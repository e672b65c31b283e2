"""Control records (ControlRecordType, EndTransactionMarker): transaction markers and KRaft records.

A control batch's record key is (version int16, type int16); for ABORT/COMMIT the value is
(version int16, coordinatorEpoch int32). KRaft control values (LeaderChange, SnapshotHeader, ...)
are flexible messages decoded by ``kdump.format.messages``; here we only classify them.
"""

from __future__ import annotations

import struct
from enum import IntEnum
from typing import NamedTuple

from kdump.errors import InvalidRecordError

CONTROL_KEY = struct.Struct(
    ">h"  # version (0)
    "h"   # type
)
END_TXN_MARKER = struct.Struct(
    ">h"  # version (0)
    "i"   # coordinatorEpoch
)


class ControlType(IntEnum):
    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


class ControlRecordInfo(NamedTuple):   # a NamedTuple: a frozen dataclass costs ~1 ms of start-up to define
    type_id: int
    coordinator_epoch: int | None  # ABORT/COMMIT only

    @property
    def type_name(self) -> str:
        try:
            return ControlType(self.type_id).name
        except ValueError:
            return "UNKNOWN"

    @property
    def is_end_txn_marker(self) -> bool:
        return self.type_id in (ControlType.ABORT, ControlType.COMMIT)


def _versioned(layout: struct.Struct, data: bytes | None, what: str, version_what: str) -> int:
    """The field after the int16 version, with ControlRecordType's / EndTransactionMarker's checks."""
    if data is None or len(data) < layout.size:
        size = -1 if data is None else len(data)
        raise InvalidRecordError(f"Invalid value size found for {what}. Must have at least "
                                 f"{layout.size} bytes, but found only {size}")
    version, field = layout.unpack_from(data)
    if version < 0:
        raise InvalidRecordError(f"Invalid version found for {version_what}: {version}. May indicate data corruption")
    return int(field)


def parse_control_key(key: bytes | None) -> int:
    """The control type id of a control record key (ControlRecordType.parse)."""
    return _versioned(CONTROL_KEY, key, "end control record key", "control record")


def parse_control_record(key: bytes | None, value: bytes | None) -> ControlRecordInfo:
    type_id = parse_control_key(key)
    epoch = None
    if type_id in (ControlType.ABORT, ControlType.COMMIT):
        epoch = _versioned(END_TXN_MARKER, value, "end transaction marker", "end transaction marker")
    return ControlRecordInfo(type_id, epoch)


def encode_control_key(type_id: int, version: int = 0) -> bytes:
    return CONTROL_KEY.pack(version, type_id)


def encode_end_txn_marker(coordinator_epoch: int, version: int = 0) -> bytes:
    return END_TXN_MARKER.pack(version, coordinator_epoch)
