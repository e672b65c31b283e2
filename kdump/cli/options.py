"""Option sets declared once and shared by the commands that take them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from kdump.cli.boundary import TRACEBACK_HELP
from kdump.cli.completion import complete_decoder, complete_kafka_version
from kdump.cli.parallel import available_cpus
from kdump.cli.time_options import TimeInput, time_style_options
from kdump.render.dialect import DEFAULT_KAFKA_VERSION
from kdump.render.times import TIME_INPUT_HELP

# Java's Integer.MAX_VALUE, DumpLogSegments' default --max-bytes (kdump.format.batch.INT32_MAX, not
# imported here: this module is loaded by every command, even --version, and must stay light).
_INT32_MAX = 2**31 - 1

F = TypeVar("F", bound=Callable[..., object])


def option_stack(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    def apply(func: F) -> F:
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return apply


kafka_version_option = click.option(
    "--kafka-version", default=DEFAULT_KAFKA_VERSION, show_default=True, metavar="V",
    shell_complete=complete_kafka_version,
    help="Reproduce the output of this Kafka version's tool (2.2 ... 4.4).")
class LocationParam(click.ParamType):
    """A directory that must exist, or an s3://, gs://, hdfs://, file:// URI (kdump.log.locations reads it,
    and says plainly when it is not there or pyarrow is missing)."""

    name = "path"
    _local = click.Path(exists=True, file_okay=False)

    def convert(self, value: str, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if "://" in value:
            return value
        return str(self._local.convert(value, param, ctx))


DIR_OR_URI = LocationParam()

json_option = click.option("--json", "json_output", is_flag=True,
                           help="Write JSON Lines instead of Kafka's text (schema: docs/json-output.md).")
traceback_option = click.option("--traceback", is_flag=True, help=TRACEBACK_HELP)



def index_settings_options(func: F) -> F:
    """The topic settings a rebuilt index depends on (rebuild-index, recover --out); the defaults are
    the index writer's, imported when a command that takes them is."""
    from kdump.format.index import DEFAULT_MAX_INDEX_BYTES
    from kdump.log.index_builder import DEFAULT_INDEX_INTERVAL_BYTES

    return option_stack(
        click.option("--index-interval-bytes", type=click.IntRange(min=0), default=DEFAULT_INDEX_INTERVAL_BYTES,
                     show_default=True, help="The topic's index.interval.bytes."),
        click.option("--segment-index-bytes", type=click.IntRange(min=24), default=DEFAULT_MAX_INDEX_BYTES,
                     show_default=True, help="The topic's segment.index.bytes (an index holds at most this much)."),
    )(func)


# The internal topics' decoder flags, in Kafka's precedence (the first flag given wins): flag, topic, help.
INTERNAL_DECODERS = (
    ("offsets_decoder", "__consumer_offsets", "__consumer_offsets records"),
    ("transaction_log_decoder", "__transaction_state", "__transaction_state records"),
    ("cluster_metadata_decoder", "__cluster_metadata", "KRaft __cluster_metadata records and snapshots"),
    ("remote_log_metadata_decoder", "__remote_log_metadata", "__remote_log_metadata records"),
    ("share_group_state_decoder", "__share_group_state", "__share_group_state records"),
)

dump_options = option_stack(
    click.option("--files", metavar="file1,file2,...",
                 help="REQUIRED: comma-separated list of what to dump: segment files (.log, .index, "
                      ".timeindex, .snapshot, .txnindex, .checkpoint), checkpoint and metadata files, "
                      "partition directories or whole log.dirs. A path that does not exist is an error (exit 1)."),
    click.option("--print-data-log", is_flag=True,
                 help="Print the records' keys and values (implies --deep-iteration)."),
    click.option("--deep-iteration", is_flag=True,
                 help="Iterate the records inside each batch, decompressing, not just the batches."),
    click.option("--skip-record-metadata", is_flag=True,
                 help="Do not print record metadata (offset, timestamp, sizes, headers); control records "
                      "print empty lines."),
    click.option("--verify-index-only", is_flag=True,
                 help="For .index/.timeindex: check entries against the log but do not print them."),
    click.option("--index-sanity-check", is_flag=True,
                 help="For .index/.timeindex: only run the index's structural sanity check."),
    click.option("--max-message-size", type=int, default=5 * 1024 * 1024, show_default=True,
                 help="For .index: bytes read at each indexed position to find its batch."),
    click.option("--max-bytes", type=int, default=_INT32_MAX, show_default=True,
                 help="For .log: read at most this many bytes from the start of each file."),
    click.option("--key-decoder-class", is_flag=False, flag_value="StringDecoder", default=None, metavar="[CLASS]",
                 shell_complete=complete_decoder,
                 help="Decoder for keys: StringDecoder, IntegerDecoder, LongDecoder, DefaultDecoder (full "
                      "org.apache.kafka.tools.api.* names accepted) or hex, base64, json, schema-registry. "
                      "Implies --print-data-log."),
    click.option("--value-decoder-class", is_flag=False, flag_value="StringDecoder", default=None, metavar="[CLASS]",
                 shell_complete=complete_decoder,
                 help="Decoder for values (same choices). Implies --print-data-log."),
    *(click.option(f"--{flag.replace('_', '-')}", is_flag=True, help=f"Decode {what}. Implies --print-data-log.")
      for flag, _, what in INTERNAL_DECODERS),
    click.option("--decode-internal", is_flag=True,
                 help="Decode each internal topic's partitions with its decoder (__consumer_offsets, "
                      "__transaction_state, __cluster_metadata, __share_group_state, __remote_log_metadata) "
                      "and print other topics' records as strings. Implies --print-data-log."),
    click.option("--offsets", metavar="A..B",
                 help="Only records with offsets A to B (inclusive; A.. or ..B leave an end open), found "
                      "through the .index."),
    click.option("--from", "from_time", type=TimeInput(), metavar="TIME",
                 help=f"Only records with timestamps at or after TIME ({TIME_INPUT_HELP}), found through the "
                      f".timeindex."),
    click.option("--to", "to_time", type=TimeInput(), metavar="TIME",
                 help="Only records with timestamps at or before TIME."),
    click.option("--key", metavar="REGEX", help="Only records whose key, as printed by the key decoder, "
                                                "contains a match of REGEX."),
    click.option("--value", metavar="REGEX", help="Only records whose value, as printed by the value decoder, "
                                                  "contains a match of REGEX."),
    click.option("--limit", type=int, metavar="N", help="Stop after N matching records."),
    click.option("--escape", is_flag=True,
                 help="Print control characters in keys, values and header keys as \\n, \\x1b... (and \\ "
                      "as \\\\), so no record can print a line of its own."),
    time_style_options(),
    click.option("--jobs", "-j", type=click.IntRange(min=1), default=available_cpus, show_default="CPUs available",
                 help="Dump this many groups of files at once in worker processes (when several files are "
                      "given), or byte ranges of a segment larger than kdump export's --split-bytes; the output "
                      "is the same bytes as with --jobs 1."),
    kafka_version_option,
    json_option,
    traceback_option,
)
