"""Kafka's text lines for `.log`/`.checkpoint` dumps: batch lines and `| offset: ...` record lines.

Format strings follow DumpLogSegments.dumpLog in the dialect chosen by ``--kafka-version``.
Renderers take model objects and return strings; the caller makes one write per batch. The
v2 batch line and the StringDecoder record lines have C versions (``_v2lines.c``, optional, same text).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from kdump.accelerators import BATCH_LINE_FUNCTION, implementation, load
from kdump.errors import CodecError, KdumpError
from kdump.format.batch import Batch, increment_sequence
from kdump.format.control import parse_control_record
from kdump.format.record_stream import LazyValue
from kdump.format.records import Record
from kdump.render.decoders import BytesDecoder, decode_pieces, string_decoder
from kdump.render.dialect import Dialect

_c_string_lines: Callable[[list[Record], str, str, str, bool], str | None] | None = load(
    "kdump.render._v2lines", "string_lines")
_c_batch_line: Callable[[Batch, str, str | None, str, str], str | None] | None = load(*BATCH_LINE_FUNCTION)
_c_batch_lines: Callable[[list[Batch], dict[int, Any], Callable[[Batch], str]], str] | None = load(
    "kdump.render._v2lines", "batch_lines")
_c_data_lines: Callable[..., tuple[memoryview, int, int | None, int | None, list[tuple[int, int]]]] | None = load(
    "kdump.render._v2lines", "data_lines")
LINE_FORMATTER = implementation(_c_batch_line)
"""Which formatter writes batch lines and StringDecoder record lines (``kdump --version`` prints it)."""

RecordDecoder = Callable[[int, bytes | None, bytes | None], tuple[str | None, str | None]]
"""(offset, key, value) -> (text after 'key: ' or None, text after 'payload: ' or None)."""


class RecordLinesError(KdumpError):
    """A record's key or value could not be decoded. ``printed`` holds what Kafka had printed of the
    batch's record lines by then: the earlier lines, and the failing record's metadata (Kafka prints
    the metadata, then decodes key and value, then prints them)."""

    def __init__(self, cause: KdumpError, printed: list[str]) -> None:
        super().__init__(cause.reason, path=cause.path, position=cause.position)
        self.printed = printed


class RecordTextOptions(NamedTuple):   # a NamedTuple: a frozen dataclass costs ~1.5 ms of start-up to define
    print_contents: bool = False
    skip_metadata: bool = False
    key_decoder: BytesDecoder = string_decoder
    value_decoder: BytesDecoder = string_decoder
    record_decoder: RecordDecoder | None = None   # --offsets-decoder and friends take precedence
    # Kafka creates the key/value decoders again for every .log file: lines it prints then, and
    # the class it fails to load (the file then fails right after its "Dumping" line).
    decoder_notices: tuple[str, ...] = ()
    decoder_load_error: str | None = None
    header_key_decoder: BytesDecoder = string_decoder   # --escape wraps it as it wraps the others
    times: Callable[[int], str] | None = None           # --time-format iso/both; None: Kafka's numbers


def codec_text(batch: Batch, dialect: Dialect) -> str:
    codec = batch.codec
    return codec.name if dialect.upper_codec_names else codec.kafka_name


def batch_line_renderer(dialect: Dialect, times: Callable[[int], str] | None = None) -> Callable[[Batch], str]:
    """The batch line of one dialect: what depends only on (magic, attributes) is formatted once."""
    if times is not None:  # not Kafka's text: the Python formatter, with the maximum timestamp as ``times`` says
        attribute_text = _make_batch_line_renderer(dialect, texts_only=True)
        return lambda batch: _python_batch_line(batch, attribute_text(batch), times(batch.max_timestamp))
    return _kafka_renderer(dialect)[0]


def batch_lines_renderer(dialect: Dialect, times: Callable[[int], str] | None = None) -> Callable[[list[Batch]], str]:
    """The lines of a list of batches, each followed by a newline: ``batch_line_renderer``'s lines for a
    shallow dump's run of batches, formatted in C (``_v2lines.batch_lines``) from the same cached
    per-attributes texts. On an error (a batch Kafka cannot print) nothing of the list is returned:
    render the list a batch at a time to print the lines before it."""
    if times is not None or _c_batch_lines is None:
        line_of = batch_line_renderer(dialect, times)
        return lambda batches: "".join([line_of(batch) + "\n" for batch in batches])
    render, texts = _kafka_renderer(dialect)
    c_lines = _c_batch_lines
    return lambda batches: c_lines(batches, texts, render)


DataLines = Callable[[memoryview, int, list[Batch], int, "int | None"],
                     tuple[memoryview, int, "int | None", "int | None", list[tuple[int, int]]]]
"""(window, base, batches, index, previous offset) -> (UTF-8 text, valid until the next call, index it stopped at,
first offset, last offset, gaps): ``_v2lines.data_lines`` with a dialect's and options' texts bound."""


def data_lines_renderer(options: RecordTextOptions, dialect: Dialect) -> DataLines | None:
    """The batch and record lines of a run of batches in one C call (``_v2lines.data_lines``), for the options
    whose record lines ``_v2_data_lines`` writes with StringDecoder contents (or none); None for any other
    options, or without the C extension: then ``record_lines`` writes every batch's lines. The C code stops
    at a batch it does not write (compressed, control, malformed, not cached yet) and the caller prints
    that one the usual way, so what it writes is exactly what ``batch_line_renderer`` and ``record_lines``
    write, a run at a time instead of a batch at a time."""
    if (_c_data_lines is None or options.skip_metadata or dialect.superset_record_line
            or options.record_decoder is not None or options.times is not None
            or options.header_key_decoder is not string_decoder):
        return None
    if options.print_contents and (options.key_decoder is not string_decoder
                                   or options.value_decoder is not string_decoder):
        return None
    texts = _kafka_renderer(dialect)[1]
    key_name, value_name = dialect.size_field_names
    key_label, value_label = f" {key_name}: ", f" {value_name}: "
    contents, key_for_null = options.print_contents, dialect.key_printed_for_null_value
    c_lines = _c_data_lines
    return lambda window, base, batches, index, previous: c_lines(
        window, base, batches, index, texts, key_label, value_label, contents, key_for_null, previous)


_RENDERERS: dict[tuple[int, ...], tuple[Callable[[Batch], str], dict[int, _AttributeText | None]]] = {}


def _kafka_renderer(dialect: Dialect) -> tuple[Callable[[Batch], str], dict[int, _AttributeText | None]]:
    """The batch line renderer of a dialect, and the per-(magic, attributes) texts it caches."""
    cached = _RENDERERS.get(dialect.version)
    if cached is None:
        texts: dict[int, _AttributeText | None] = {}
        cached = _RENDERERS[dialect.version] = (_make_batch_line_renderer(dialect, texts=texts), texts)
    return cached


def _make_batch_line_renderer(dialect: Dialect, texts_only: bool = False,
                              texts: dict[int, _AttributeText | None] | None = None) -> Callable[[Batch], Any]:
    if texts is None:
        texts = {}
    c_line = _c_batch_line

    def render(batch: Batch) -> Any:
        magic = batch[4]
        key = (magic << 16) | batch[6]
        fixed = texts.get(key, False)
        if fixed is False:
            fixed = texts[key] = _attribute_text(magic, batch[6], dialect)
        if fixed is None:
            _ = batch.codec  # raises CodecError (Kafka: "Unknown compression type id") with the position
        if texts_only:
            return fixed
        if magic >= 2 and c_line is not None:
            text = c_line(batch, fixed.flags, fixed.c_horizon, fixed.ts_name, fixed.codec)  # type: ignore[union-attr]
            if text is not None:
                return text
        return _python_batch_line(batch, fixed)  # type: ignore[arg-type]

    return render


class _AttributeText(NamedTuple):
    # _v2lines.c batch_lines reads these by slot (its ATTRIBUTE_* enum): change both together.
    ts_name: str
    codec: str
    flags: str              # "isTransactional: ... isControl: ... "
    horizon: str            # "" before 3.1, else "deleteHorizonMs: OptionalLong.empty ", or "set"
    c_horizon: str | None   # the same for the C formatter, None for "set"


def _python_batch_line(batch: Batch, fixed: _AttributeText, max_ts: int | str | None = None) -> str:
    (position, base_offset, last_offset, size, magic, crc, _attributes, leader_epoch, base_ts, max_timestamp,
     producer_id, producer_epoch, base_seq, count, valid) = batch
    if max_ts is None:
        max_ts = max_timestamp
    ts_name, codec, flags, horizon, _ = fixed
    valid_text = "true" if valid else "false"
    if magic < 2:
        return (f"offset: {last_offset} position: {position} {ts_name}: {max_ts} size: {size} magic: {magic} "
                f"compresscodec: {codec} crc: {crc} isvalid: {valid_text}")
    if base_seq == -1:
        last_seq = -1
    else:
        last_seq = increment_sequence(base_seq, last_offset - base_offset)
    if horizon == "set":
        horizon = f"deleteHorizonMs: OptionalLong[{base_ts}] "
    return (f"baseOffset: {base_offset} lastOffset: {last_offset} count: {count} baseSequence: {base_seq} "
            f"lastSequence: {last_seq} producerId: {producer_id} producerEpoch: {producer_epoch} "
            f"partitionLeaderEpoch: {leader_epoch} {flags}{horizon}position: {position} {ts_name}: {max_ts} "
            f"size: {size} magic: {magic} compresscodec: {codec} crc: {crc} isvalid: {valid_text}")


def _attribute_text(magic: int, attributes: int, dialect: Dialect) -> _AttributeText | None:
    """The texts that depend only on (magic, attributes); None for an unknown codec id."""
    probe = Batch(0, 0, 0, 0, magic, 0, attributes, -1, 0, 0, -1, -1, -1, 0, None)
    try:
        codec = codec_text(probe, dialect)
    except CodecError:
        return None
    flags = (f"isTransactional: {'true' if probe.is_transactional else 'false'} "
             f"isControl: {'true' if probe.is_control else 'false'} ")
    if not dialect.has_delete_horizon:
        horizon = ""
    elif probe.delete_horizon_ms is None:
        horizon = "deleteHorizonMs: OptionalLong.empty "
    else:
        horizon = "set"  # the value is the batch's baseTimestamp, filled in per batch
    return _AttributeText(probe.timestamp_type.kafka_name, codec, flags, horizon, None if horizon == "set" else horizon)


def control_text(record: Record, dialect: Dialect) -> str:
    """What a control record prints after its metadata (DumpLogSegments' ``<control>`` text)."""
    info = parse_control_record(record.key, record.value)
    if info.is_end_txn_marker:
        return f" endTxnMarker: {info.type_name} coordinatorEpoch: {info.coordinator_epoch}"
    from kdump.render.internal_topics import control_record_text

    return control_record_text(info.type_id, record.value or b"", dialect.major_minor)


def record_lines(batch: Batch, records: Sequence[Record], options: RecordTextOptions,
                 dialect: Dialect) -> list[str]:
    """The record lines, including the empty lines Kafka prints with --skip-record-metadata.

    An element may hold several lines joined by newlines (the C formatter returns a batch's lines as
    one string), so callers join the elements with newlines rather than count them."""
    key_name, value_name = dialect.size_field_names
    ts_name = batch.timestamp_type.kafka_name
    is_control = batch.is_control
    legacy = batch.is_legacy
    show_meta = not options.skip_metadata
    superset = _superset_fields(batch, records, dialect) if dialect.superset_record_line else None
    if (not legacy and not is_control and show_meta and superset is None and options.record_decoder is None
            and options.times is None and options.header_key_decoder is string_decoder):
        return _v2_data_lines(records, options, dialect, ts_name, key_name, value_name)
    times = options.times or str
    header_key = options.header_key_decoder
    lines: list[str] = []
    for record in records:
        parts: list[str] = []
        if show_meta:
            key_size = -1 if record.key is None else len(record.key)
            value_size = -1 if record.value is None else len(record.value)
            if superset is not None:
                parts.append(_superset_head(record, key_name, key_size, value_name, value_size,
                                            f"{ts_name}: {times(record.timestamp)}", superset))
            else:
                parts.append(f"| offset: {record.offset} {ts_name}: {times(record.timestamp)} "
                             f"{key_name}: {key_size} {value_name}: {value_size}")
            if legacy:
                parts.append(_legacy_validity(record, dialect))
            else:
                keys = ",".join(header_key(k) for k, _ in record.headers)
                parts.append(f" sequence: {record.sequence} headerKeys: [{keys}]")
            if is_control:
                parts.append(control_text(record, dialect))
        if options.print_contents and not is_control:
            try:
                parts.append(_contents(record, options, dialect, show_meta))
            except KdumpError as err:
                raise RecordLinesError(err, [*lines, "".join(parts)]) from err
        lines.append("".join(parts))
    return lines


_LAZY = "\x00lazy value\x00"


def lazy_record_line(batch: Batch, record: Record, options: RecordTextOptions, dialect: Dialect) -> Iterator[str]:
    """The line ``record_lines`` gives for a record whose value was too large to hold (a ``LazyValue``),
    in pieces: the value is read again and decoded as it is written, so memory stays flat."""
    value = record.value
    assert isinstance(value, LazyValue)
    if options.record_decoder is not None:   # an internal topic's decoder parses the whole value
        yield record_lines(batch, [record._replace(value=bytes(value))], options, dialect)[0] + "\n"
        return
    # The line around the value, with a stand-in where its text goes (a tuple keeps the C formatter,
    # which wants bytes, out of it); the value is the last field of Kafka's line.
    line = record_lines(batch, (record,), options._replace(value_decoder=lambda _: _LAZY), dialect)[0]
    head, tail = line.rsplit(_LAZY, 1)
    yield head
    yield from decode_pieces(options.value_decoder, value.chunks())
    yield tail + "\n"


def _v2_data_lines(records: Sequence[Record], options: RecordTextOptions, dialect: Dialect, ts_name: str,
                   key_name: str, value_name: str) -> list[str]:
    """The common case, written for speed: v2 data records with metadata (one f-string per record).

    With StringDecoder contents the C formatter (``_v2lines.c``) writes the same lines, when built;
    this loop is its reference."""
    head = f" {ts_name}: "
    key_label = f" {key_name}: "
    value_label = f" {value_name}: "
    if options.print_contents and options.key_decoder is string_decoder and options.value_decoder is string_decoder:
        if _c_string_lines is not None and type(records) is list:
            text = _c_string_lines(records, head, key_label, value_label, dialect.key_printed_for_null_value)
            if text is not None:
                return [text] if records else []  # one string holding every line of the batch
    contents = options.print_contents
    decode_key = options.key_decoder
    decode_value = options.value_decoder
    null_value_hides_key = not dialect.key_printed_for_null_value
    lines: list[str] = []
    append = lines.append
    for offset, timestamp, key, value, headers, sequence, _, _ in records:
        keys = ",".join([string_decoder(k) for k, _ in headers]) if headers else ""
        line = (f"| offset: {offset}{head}{timestamp}{key_label}{-1 if key is None else len(key)}"
                f"{value_label}{-1 if value is None else len(value)} sequence: {sequence} headerKeys: [{keys}]")
        if contents:
            try:
                if value is None:
                    if key is not None and not null_value_hides_key:
                        line = f"{line} key: {decode_key(key)}"
                elif key is None:
                    line = f"{line} payload: {decode_value(value)}"
                else:
                    line = f"{line} key: {decode_key(key)} payload: {decode_value(value)}"
            except KdumpError as err:
                raise RecordLinesError(err, [*lines, line]) from err
        append(line)
    return lines


def decoded_texts(record: Record, contents: RecordTextOptions) -> tuple[str | None, str | None]:
    """What the text dump prints after ``key:`` and ``payload:`` (None for a null key or value)."""
    if contents.record_decoder is not None:
        return contents.record_decoder(record.offset, record.key, record.value)
    return (None if record.key is None else contents.key_decoder(record.key),
            None if record.value is None else contents.value_decoder(record.value))


def _superset_fields(batch: Batch, records: Sequence[Record], dialect: Dialect) -> str:
    """The batch fields 2.8.x repeated on each record line, after the timestamp."""
    # A legacy batch's baseOffset() is its first inner record's offset (the wrapper holds the last).
    base_offset = records[0].offset if batch.is_legacy and records else batch.base_offset
    return (f"baseOffset: {base_offset} lastOffset: {batch.last_offset} "
            f"baseSequence: {batch.base_sequence} lastSequence: {batch.last_sequence} "
            f"producerEpoch: {batch.producer_epoch} partitionLeaderEpoch: {batch.partition_leader_epoch} "
            f"batchSize: {batch.size} magic: {batch.magic} compressType: {codec_text(batch, dialect)} "
            f"position: {batch.position}")


def _superset_head(record: Record, key_name: str, key_size: int, value_name: str, value_size: int,
                   timestamp: str, batch_fields: str) -> str:
    # v2 records have no CRC of their own: 2.8 printed isValid: true crc: null for them.
    if record.legacy_crc is None:
        validity = "isValid: true crc: null"
    else:
        validity = f"isValid: {'true' if record.legacy_valid else 'false'} crc: {record.legacy_crc}"
    return (f"| offset: {record.offset} {validity} {key_name}: {key_size} {value_name}: {value_size} "
            f"{timestamp} {batch_fields}")


def _legacy_validity(record: Record, dialect: Dialect) -> str:
    valid = "true" if record.legacy_valid else "false"
    if dialect.legacy_record_crc_first:
        return f" crc: {record.legacy_crc} isvalid: {valid}"
    brace = "}" if dialect.legacy_crc_brace else ""
    return f" isValid: {valid} crc: {record.legacy_crc}{brace}"


def _contents(record: Record, options: RecordTextOptions, dialect: Dialect, show_meta: bool) -> str:
    if record.value is None and options.record_decoder is None and not dialect.key_printed_for_null_value:
        return ""
    key_text, value_text = decoded_texts(record, options)
    out = ""
    if key_text is not None:
        out = (" key: " if show_meta else "| key: ") + key_text
    if value_text is not None:
        if not show_meta and key_text is None and dialect.keyless_payload_bar:
            out += "| payload: " + value_text
        else:
            out += " payload: " + value_text
    return out
