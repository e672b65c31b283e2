"""The per-record columns of ``level=record`` as Arrow arrays built from flat buffers, not Python objects.

A task's time goes to turning bytes into Arrow columns, so records never become Python objects on
the common path: the C extension's ``columns`` (``kdump/format/_v2records.c``) appends the records of
a whole v2 records area to twelve bytearrays (fixed-width values, and for byte strings a length per
value plus the bytes back to back), and ``RecordColumns.arrays`` wraps them as Arrow buffers without
copying. Anything the C code declines (legacy entries, batches of more than ``GROUP_SIZE`` records or
several decompressed chunks, malformed records, no C extension) is decoded by ``decode_records`` and
its ``Record`` tuples go into the same buffers, so both paths give the same arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa

from kdump.accelerators import load
from kdump.format.batch import Batch
from kdump.format.records import Buffer, Record, small_v2_area

_accelerated_columns: Callable[..., int | None] | None = load("kdump.format._v2records", "columns")

# The buffers, in the order the C function fills them.
(OFFSET, TIMESTAMP, SEQUENCE, KEY_LENGTH, KEY_DATA, VALUE_LENGTH, VALUE_DATA, HEADER_COUNT,
 HEADER_KEY_LENGTH, HEADER_KEY_DATA, HEADER_VALUE_LENGTH, HEADER_VALUE_DATA) = range(12)

NAMES = ("offset", "timestamp", "key", "value", "headers", "sequence")
"""The columns this module builds (the rest of a record row is per batch)."""
_FIXED = {"offset": OFFSET, "timestamp": TIMESTAMP, "sequence": SEQUENCE}          # one fixed-width value a row
_BYTES = {"key": (KEY_LENGTH, KEY_DATA), "value": (VALUE_LENGTH, VALUE_DATA)}     # a length a row, then the bytes

_INT32_MAX = (1 << 31) - 1


class RecordColumns:
    """Record values of the rows collected so far, one slot per row (null slots for rows without a record)."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self.buffers = tuple(bytearray() for _ in range(12))
        self.missing: list[int] = []        # the rows without a record

    @property
    def data_bytes(self) -> int:
        """Bytes of keys, values and headers held: a flush bound, so Arrow's int32 offsets never overflow."""
        b = self.buffers
        return len(b[KEY_DATA]) + len(b[VALUE_DATA]) + len(b[HEADER_KEY_DATA]) + len(b[HEADER_VALUE_DATA])

    def add_batch(self, buf: Buffer, batch: Batch) -> int | None:
        """The records of a v2 batch through the C extension: how many, or None when it declined."""
        fast = _accelerated_columns
        if fast is None or batch.is_legacy:
            return None
        area = small_v2_area(buf, batch)
        if area is None:
            return None
        return fast(area, batch.records_count, batch.base_offset, batch.base_timestamp, batch.log_append_time,
                    batch.base_sequence, self.buffers)

    def add_records(self, records: Sequence[Record]) -> None:
        """Decoded ``Record`` tuples, at least one (the path for whatever ``add_batch`` declines)."""
        b = self.buffers
        offsets, timestamps, keys, values, headers, sequences = list(zip(*records, strict=True))[:6]
        b[OFFSET].extend(np.array(offsets, np.int64).tobytes())
        b[TIMESTAMP].extend(np.array(timestamps, np.int64).tobytes())
        b[SEQUENCE].extend(np.array(sequences, np.int32).tobytes())
        _put_strings(keys, b[KEY_LENGTH], b[KEY_DATA])
        _put_strings(values, b[VALUE_LENGTH], b[VALUE_DATA])
        b[HEADER_COUNT].extend(np.array([len(h) for h in headers], np.int32).tobytes())
        pairs = [pair for hs in headers for pair in hs]
        if pairs:
            _put_strings([k for k, _ in pairs], b[HEADER_KEY_LENGTH], b[HEADER_KEY_DATA])
            _put_strings([v for _, v in pairs], b[HEADER_VALUE_LENGTH], b[HEADER_VALUE_DATA])

    def add_missing(self) -> None:
        """One row whose record columns are all null (a batch-level or unreadable entry)."""
        b = self.buffers
        self.missing.append(len(b[SEQUENCE]) // 4)
        b[OFFSET].extend(bytes(8))
        b[TIMESTAMP].extend(bytes(8))
        b[SEQUENCE].extend(bytes(4))
        b[KEY_LENGTH].extend(_NULL_LENGTH)
        b[VALUE_LENGTH].extend(_NULL_LENGTH)
        b[HEADER_COUNT].extend(bytes(4))

    def arrays(self, fields: dict[str, pa.DataType]) -> dict[str, pa.Array]:
        """The Arrow arrays of the requested record columns, for all rows collected; then starts over."""
        b = self.buffers
        n = len(b[SEQUENCE]) // 4
        valid, nulls = None, len(self.missing)
        if nulls:
            rows = np.ones(n, bool)
            rows[self.missing] = False
            valid = pa.py_buffer(np.packbits(rows, bitorder="little"))
        out: dict[str, pa.Array] = {}
        for name, type_ in fields.items():
            if name in _FIXED:
                out[name] = pa.Array.from_buffers(type_, n, [valid, pa.py_buffer(b[_FIXED[name]])], null_count=nulls)
            elif name in _BYTES:
                out[name] = _binary_array(b[_BYTES[name][0]], b[_BYTES[name][1]], type_)
            elif name == "headers":
                out[name] = self._headers(type_, valid, nulls)
        self._reset()  # the arrays now own the old buffers, which must not grow again
        return out

    def _headers(self, list_type: pa.DataType, valid: pa.Buffer | None, nulls: int) -> pa.Array:
        """list<struct<key string, value binary>>; a key that is not UTF-8 is shown with U+FFFD, never fails."""
        b = self.buffers
        counts = np.frombuffer(b[HEADER_COUNT], np.int32)
        offsets = np.zeros(len(counts) + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        struct_type = list_type.value_type
        keys = _binary_array(b[HEADER_KEY_LENGTH], b[HEADER_KEY_DATA], pa.binary())
        try:
            key_array = keys.cast(pa.string())
        except pa.ArrowInvalid:
            key_array = pa.array([k.decode("utf-8", "replace") for k in keys.to_pylist()], pa.string())
        items = pa.StructArray.from_arrays(
            [key_array, _binary_array(b[HEADER_VALUE_LENGTH], b[HEADER_VALUE_DATA], struct_type.field("value").type)],
            fields=list(struct_type))
        return pa.Array.from_buffers(list_type, len(counts), [valid, pa.py_buffer(_int32(offsets))],
                                     null_count=nulls, children=[items])


_NULL_LENGTH = np.array([-1], np.int32).tobytes()


def _put_strings(items: Sequence[bytes | None], lengths: bytearray, data: bytearray) -> None:
    lengths.extend(np.array([-1 if v is None else len(v) for v in items], np.int32).tobytes())
    data.extend(b"".join(v for v in items if v))


def _int32(offsets: np.ndarray) -> np.ndarray:
    if offsets[-1] > _INT32_MAX:
        raise OverflowError("more than 2 GiB of bytes in one Arrow column: lower maxRowsPerBatch")
    return offsets.astype(np.int32)


def _binary_array(lengths_buffer: bytearray, data: bytearray, type_: pa.DataType) -> pa.Array:
    """A binary (or string) array from a length per value (-1: null) and the values' bytes."""
    lengths = np.frombuffer(lengths_buffer, np.int32)
    present = lengths >= 0
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(np.where(present, lengths, 0), out=offsets[1:])
    nulls = len(lengths) - int(np.count_nonzero(present))
    valid = None if nulls == 0 else pa.py_buffer(np.packbits(present, bitorder="little"))
    return pa.Array.from_buffers(type_, len(lengths), [valid, pa.py_buffer(_int32(offsets)), pa.py_buffer(data)],
                                 null_count=nulls)
