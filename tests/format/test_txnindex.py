"""Aborted-transaction index entries (AbortedTxn, TransactionIndex)."""

from __future__ import annotations

import struct

import pytest

from kdump.format.txnindex import (
    AbortedTxn,
    TxnIndexVersionError,
    encode_aborted_txn,
    iter_aborted_txns,
    parse_aborted_txns,
)


def test_entry_layout_is_34_bytes_big_endian() -> None:
    assert encode_aborted_txn(7, 10, 20, 15) == struct.pack(">hqqqq", 0, 7, 10, 20, 15)
    assert len(encode_aborted_txn(7, 10, 20, 15)) == 34


def test_parse_ignores_a_trailing_partial_entry() -> None:
    data = encode_aborted_txn(7, 10, 20, 15) + encode_aborted_txn(8, 21, 30, 21) + b"\x00" * 33
    assert parse_aborted_txns(data, "x") == [AbortedTxn(0, 7, 10, 20, 15), AbortedTxn(0, 8, 21, 30, 21)]


def test_only_the_first_version_byte_counts() -> None:
    # int16 version 1 is bytes 00 01: Kafka reads byte 0 and sees version 0.
    assert parse_aborted_txns(encode_aborted_txn(1, 2, 3, 4, version=1), "x")[0].version == 0
    assert parse_aborted_txns(encode_aborted_txn(1, 2, 3, 4, version=-256), "x")[0].version == -1


def test_version_above_zero_fails_at_that_entry() -> None:
    data = encode_aborted_txn(7, 10, 20, 15) + encode_aborted_txn(8, 21, 30, 21, version=0x0300)
    entries = iter_aborted_txns(data, "/logs/t-0/00000000000000000000.txnindex")
    assert next(entries).producer_id == 7
    with pytest.raises(TxnIndexVersionError) as info:
        next(entries)
    assert info.value.reason == ("Unexpected aborted transaction version 3 in transaction index "
                                 "/logs/t-0/00000000000000000000.txnindex, current version is 0")

