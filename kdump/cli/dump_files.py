"""The default command: ``kdump --files A[,B...]``: Kafka's options to ``DumpOptions``, then the library."""

from __future__ import annotations

import importlib
from typing import Any

from kdump import dump as library
from kdump.cli.boundary import print_error
from kdump.cli.exit_codes import ExitCode
from kdump.dump import DumpOptions
from kdump.errors import UsageError
from kdump.render.decoders import kafka_decoder_class, string_decoder
from kdump.render.dialect import Dialect, parse_kafka_version
from kdump.render.log_text import RecordDecoder, RecordTextOptions

_INTERNAL_DECODERS = (  # Kafka's precedence: the first flag given wins.
    ("offsets_decoder", "OffsetsDecoder"),
    ("transaction_log_decoder", "TransactionLogDecoder"),
    ("cluster_metadata_decoder", "ClusterMetadataDecoder"),
    ("remote_log_metadata_decoder", "RemoteLogMetadataDecoder"),
    ("share_group_state_decoder", "ShareGroupStateDecoder"),
)


def split_files(value: str) -> list[str]:
    """Java's String.split(","): no trimming, trailing empty pieces dropped."""
    pieces = value.split(",")
    while pieces and pieces[-1] == "":
        pieces.pop()
    return pieces


def _record_decoder(flags: dict[str, object], dialect: Dialect) -> RecordDecoder | None:
    for flag, class_name in _INTERNAL_DECODERS:
        if flags.get(flag):
            module = importlib.import_module("kdump.render.internal_topics")
            return getattr(module, class_name)(kafka_version=dialect.major_minor).decode
    return None


def build_options(flags: dict[str, Any], dialect: Dialect) -> DumpOptions:
    key_class = flags.get("key_decoder_class")
    value_class = flags.get("value_decoder_class")
    record_decoder = _record_decoder(flags, dialect)
    print_contents = bool(flags.get("print_data_log") or key_class is not None or value_class is not None
                          or record_decoder is not None)
    max_bytes = int(flags.get("max_bytes") or 0)
    if max_bytes < 0:
        raise UsageError(f"--max-bytes must not be negative: {max_bytes}")
    # Kafka builds the value decoder, then the key decoder; a class it cannot load stops there.
    value = kafka_decoder_class(str(value_class or "StringDecoder"), dialect)
    key = kafka_decoder_class(str(key_class or "StringDecoder"), dialect)
    notices: list[str] = []
    load_error = None
    if record_decoder is None:
        for decoder in (value, key):
            if decoder.notice:
                notices.append(decoder.notice)
            if decoder.decode is None:
                load_error = f"Failed to load decoder class {decoder.name} (Kafka {dialect.label} has no such class)"
                break
    records = RecordTextOptions(
        print_contents=print_contents,
        skip_metadata=bool(flags.get("skip_record_metadata")),
        key_decoder=key.decode or string_decoder,
        value_decoder=value.decode or string_decoder,
        record_decoder=record_decoder,
        decoder_notices=tuple(notices),
        decoder_load_error=load_error,
    )
    return DumpOptions(
        deep=print_contents or bool(flags.get("deep_iteration")),
        records=records,
        max_bytes=max_bytes,
        verify_index_only=bool(flags.get("verify_index_only")),
        index_sanity_check=bool(flags.get("index_sanity_check")),
        max_message_size=int(flags.get("max_message_size") or 0),
        json=bool(flags.get("json_output")),
        traceback=bool(flags.get("traceback")),
        dialect=dialect,
    )


def dump_files(**flags: object) -> int:
    """Run a dump; returns the exit code (0 ok, 1 some file failed or a usage error, as Kafka's tool)."""
    try:
        dialect = parse_kafka_version(str(flags.get("kafka_version")))
        options = build_options(flags, dialect)
    except UsageError as err:
        # kafka-dump-log's CommandLineUtils.printUsageAndExit exits 1, and so does `kdump --files`.
        print_error(err)
        return ExitCode.DUMP_USAGE
    result = library.dump_files(split_files(str(flags["files"])), options)
    return ExitCode.OK if result.ok else ExitCode.FILE_ERROR
