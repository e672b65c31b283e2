"""Transaction index (``.txnindex``): 34-byte aborted-transaction entries.

Mirrors org.apache.kafka.storage.internals.log.AbortedTxn / TransactionIndex. The file is not
preallocated; a trailing partial entry is ignored. Kafka reads only the first byte of the 2-byte
version field and fails on a value above 0 when it reaches that entry, after the earlier
entries were already used, so ``iter_aborted_txns`` is lazy and raises at the bad entry.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from kdump.errors import FormatError

Buffer = bytes | bytearray | memoryview

ABORTED_TXN = struct.Struct(
    ">h"  # version (0); readers look only at its first byte
    "q"   # producerId
    "q"   # firstOffset
    "q"   # lastOffset
    "q"   # lastStableOffset at the time of the abort
)
ENTRY_SIZE = ABORTED_TXN.size   # 34
CURRENT_VERSION = 0


class TxnIndexVersionError(FormatError):
    """Kafka's KafkaException for an entry whose version byte is above 0."""


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    version: int              # the signed first byte of the version field
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


def iter_aborted_txns(data: Buffer, name: str) -> Iterator[AbortedTxn]:
    """Every complete entry; ``name`` (Kafka prints the absolute path) goes into the version error."""
    count = len(data) // ENTRY_SIZE
    for slot in range(count):
        pos = slot * ENTRY_SIZE
        _, producer_id, first, last, lso = ABORTED_TXN.unpack_from(data, pos)
        version = data[pos]
        if version > 127:
            version -= 256
        if version > CURRENT_VERSION:
            raise TxnIndexVersionError(f"Unexpected aborted transaction version {version} in transaction index "
                                       f"{name}, current version is {CURRENT_VERSION}", position=pos)
        yield AbortedTxn(version, producer_id, first, last, lso)


def parse_aborted_txns(data: Buffer, name: str) -> list[AbortedTxn]:
    return list(iter_aborted_txns(data, name))


def encode_aborted_txn(producer_id: int, first_offset: int, last_offset: int, last_stable_offset: int, *,
                       version: int = CURRENT_VERSION) -> bytes:
    """One 34-byte entry (AbortedTxn's constructor). ``version`` is the int16 field as stored; only
    its high byte is what readers see, so ``version=1`` reads back as 0 and ``version=256`` as 1."""
    return ABORTED_TXN.pack(version, producer_id, first_offset, last_offset, last_stable_offset)

