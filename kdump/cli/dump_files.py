"""The default command: ``kdump --files A[,B...]``, DumpLogSegments' top-level loop."""

from __future__ import annotations

import importlib
from typing import Any

from kdump.cli.boundary import print_error
from kdump.cli.dump_extra import dump_extra, expand_paths
from kdump.cli.exit_codes import ExitCode
from kdump.cli.handlers import handler_for
from kdump.cli.run import DumpOptions, DumpRun
from kdump.errors import KdumpError, UsageError
from kdump.format.crc import CRC32C_IMPLEMENTATION, CRC32C_IS_SLOW
from kdump.log.files import FileKind, file_kind, java_path, kafka_suffix
from kdump.render import log_json
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
    value = kafka_decoder_class(str(value_class or "StringDecoder"), dialect.major_minor)
    key = kafka_decoder_class(str(key_class or "StringDecoder"), dialect.major_minor)
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
    run = DumpRun(options=options, dialect=dialect)
    load_error = options.records.decoder_load_error
    if load_error and not dialect.decoders_created_per_file:
        run.err.write(f"Error: {load_error}\n")
        return ExitCode.FILE_ERROR
    if CRC32C_IS_SLOW:
        run.warn(f"Warning: CRC-32C is computed by {CRC32C_IMPLEMENTATION}; install the 'crc32c' package "
                 f"or a compiler for crcmod's C extension for normal speed.")
    # kdump extension: a partition directory or log.dirs expands to its files in Kafka's order.
    for path in expand_paths(split_files(str(flags["files"]))):
        dump_one(run, path)
    if options.json:  # JSON consumers read one stream: the summaries join the objects on stdout
        for obj in run.summaries.json_objects(dialect):
            run.out.write(log_json.dumps(obj) + "\n")
    run.out.flush()
    if not options.json:
        for line in run.summaries.lines(dialect):
            run.err.write(line + "\n")
        run.err.flush()
    return run.exit_code


def dump_one(run: DumpRun, path: str) -> None:
    if not run.options.json:
        run.out.write(f"Dumping {java_path(path)}\n")
    try:
        if path == "":
            raise UsageError("empty file name in --files (two commas in a row?)")
        # kdump extension: checkpoints, partition.metadata, meta.properties, quorum-state and
        # .deleted/.cleaned/.swap segment files, which Kafka's tool crashes on or ignores.
        if dump_extra(run, path):
            return
        if kafka_suffix(path) is None and run.dialect.ignores_names_without_dot:
            run.out.flush()
            run.err.write(f"Ignoring unknown file {java_path(path)}\n")
            run.err.flush()
            return
        if kafka_suffix(path) is None:
            # Kafka <= 4.2 dies here with StringIndexOutOfBoundsException; kdump names the file and goes on.
            raise UsageError("the file name has no '.', so its type is unknown (Kafka's tool crashes on "
                             "such names; checkpoint files are read by `kdump summary`)")
        kind = file_kind(path)
        if kind is None:
            run.out.flush()
            run.err.write(f"Ignoring unknown file {java_path(path)}\n")
            run.err.flush()
            return
        if kind in (FileKind.LOG, FileKind.CHECKPOINT) and not run.options.json:
            _create_decoders(run)
        handler_for(kind)(run, path)
    except KdumpError as err:
        run.error(err, path)
    except Exception as err:  # a bug in kdump: still one line, unless --traceback
        if run.options.traceback:
            raise
        run.error(KdumpError(f"internal error {type(err).__name__}: {err} (rerun with --traceback and "
                             f"report it)"), path)
        run.exit_code = ExitCode.FILE_ERROR


def _create_decoders(run: DumpRun) -> None:
    """What Kafka does when it creates the decoders for one .log file: print its notices, or fail."""
    records = run.options.records
    for notice in records.decoder_notices:
        run.out.write(notice + "\n")
    if records.decoder_load_error:
        raise KdumpError(records.decoder_load_error)
