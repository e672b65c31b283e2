"""The default command: ``kdump --files A[,B...]``: Kafka's options to ``DumpOptions``, then the library."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable
from typing import Any

from kdump import dump as library
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import INTERNAL_DECODERS
from kdump.cli.parallel import WorkerPool, split_bytes
from kdump.cli.progress import ProgressBar, is_terminal, wants_progress
from kdump.dump import DumpOptions
from kdump.dump.files import file_size
from kdump.dump.filters import RecordFilter, parse_offset_range
from kdump.dump.paths import expand_paths
from kdump.errors import KdumpError, UsageError, write_error
from kdump.render.decoders import BytesDecoder, escaped, escaped_pair, kafka_decoder_class, string_decoder
from kdump.render.dialect import Dialect, parse_kafka_version
from kdump.render.log_text import RecordDecoder, RecordTextOptions


def split_files(value: str) -> list[str]:
    """Java's String.split(","): no trimming, trailing empty pieces dropped."""
    return value.rstrip(",").split(",") if value.rstrip(",") else []


def _topic_decoders(flags: dict[str, object], dialect: Dialect) -> tuple[RecordDecoder | None,
                                                                         dict[str, RecordDecoder]]:
    """The decoder Kafka applies to every file (the first flag given), and the decoders by topic."""
    topics = [topic for flag, topic, _ in INTERNAL_DECODERS if flags.get(flag) or flags.get("decode_internal")]
    if not topics:
        return None, {}
    module = importlib.import_module("kdump.render.internal_topics")
    by_topic: dict[str, RecordDecoder] = {
        topic: module.TOPIC_DECODERS[topic](kafka_version=dialect.major_minor).decode for topic in topics}
    if flags.get("escape"):
        by_topic = {topic: escaped_pair(decode) for topic, decode in by_topic.items()}
    return (None if flags.get("decode_internal") else by_topic[topics[0]]), by_topic


def _record_filter(flags: dict[str, Any]) -> RecordFilter:
    first = last = None
    if flags.get("offsets") is not None:
        first, last = parse_offset_range(str(flags["offsets"]))
    patterns = {}
    for name in ("key", "value"):
        if flags.get(name) is not None:
            try:
                patterns[name] = re.compile(str(flags[name]))
            except re.error as err:
                raise UsageError(f"--{name} {flags[name]!r} is not a regular expression: {err}") from None
    return RecordFilter(first, last, flags.get("from_time"), flags.get("to_time"), patterns.get("key"),
                        patterns.get("value"), flags.get("limit"))


def build_options(flags: dict[str, Any], dialect: Dialect) -> DumpOptions:
    key_class = flags.get("key_decoder_class")
    value_class = flags.get("value_decoder_class")
    record_decoder, topic_decoders = _topic_decoders(flags, dialect)
    print_contents = bool(flags.get("print_data_log") or key_class is not None or value_class is not None
                          or topic_decoders)
    wanted = _record_filter(flags)
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
    wrap: Callable[[BytesDecoder], BytesDecoder] = escaped if flags.get("escape") else (lambda decoder: decoder)
    times = flags.get("times")
    records = RecordTextOptions(
        print_contents=print_contents,
        skip_metadata=bool(flags.get("skip_record_metadata")),
        key_decoder=wrap(key.decode or string_decoder),
        value_decoder=wrap(value.decode or string_decoder),
        record_decoder=record_decoder,
        decoder_notices=tuple(notices),
        decoder_load_error=load_error,
        header_key_decoder=wrap(string_decoder),
        times=None if times is None or times.fmt == "epoch" else times,
    )
    return DumpOptions(
        deep=print_contents or bool(flags.get("deep_iteration")) or wanted.active,
        records=records,
        max_bytes=max_bytes,
        verify_index_only=bool(flags.get("verify_index_only")),
        index_sanity_check=bool(flags.get("index_sanity_check")),
        max_message_size=int(flags.get("max_message_size") or 0),
        json=bool(flags.get("json_output")),
        traceback=bool(flags.get("traceback")),
        dialect=dialect,
        filter=wanted,
        topic_decoders=topic_decoders,
    )


def dump_files(**flags: object) -> int:
    """Run a dump; returns the exit code (0 ok, 1 some file failed or a usage error, as Kafka's tool)."""
    try:
        dialect = parse_kafka_version(str(flags.get("kafka_version")))
        options = build_options(flags, dialect)
    except UsageError as err:
        # kafka-dump-log's CommandLineUtils.printUsageAndExit exits 1, and so does `kdump --files`.
        write_error(err)
        return ExitCode.DUMP_USAGE
    paths = split_files(str(flags["files"]))
    jobs = int(str(flags.get("jobs") or 1))
    # A bar on stderr only while the dump goes elsewhere (a file, a pipe): on the same terminal every
    # line of the dump would have to take it off the screen first.
    show = wants_progress(options.json) and not is_terminal(sys.stdout)
    total = _total_size(paths) if show else None
    # Forked workers inherit the options, whose decoders cannot be pickled.
    with ProgressBar(total, "dump", show=show) as bar, WorkerPool(jobs) as pool:
        result = library.dump_files(paths, options, map_files=pool.ordered_map if jobs > 1 else None,
                                    on_file=lambda path: bar.advance(file_size(path)),
                                    split_bytes=split_bytes() if jobs > 1 else None)
    return ExitCode.OK if result.ok else ExitCode.FILE_ERROR


def _total_size(paths: list[str]) -> int | None:
    try:
        return sum(file_size(path) for path in expand_paths(paths))
    except (OSError, KdumpError):
        return None   # the dump reports an unreadable directory; the bar counts without a total
