"""``kdump find PARTITION_DIR --offset N | --timestamp T [--explain]``: Kafka's lookup, made visible.

Prints the batch and the record the broker would answer with (text as in ``kdump --files``; with
``--count N`` N records from it, through the filtered dump), and
with ``--explain`` every step first: the segment chosen, the index slot and entry, the start
position, the batches scanned and the bytes of log read. Exit status: 0 found, 1 not found,
2 usage error or unreadable input.
"""

from __future__ import annotations

import click

from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import json_option, kafka_version_option, traceback_option
from kdump.cli.time_options import TimeInput, time_style_options
from kdump.dump import DumpOptions, dump_records_from
from kdump.dump.filters import RecordFilter
from kdump.log.logdir import read_partition_dir
from kdump.log.lookup import LookupResult, find_offset, find_timestamp
from kdump.render import log_json
from kdump.render.dialect import parse_kafka_version
from kdump.render.log_text import RecordTextOptions
from kdump.render.times import TIME_INPUT_HELP, TimeStyle
from kdump.verify.partition_check import partition_checkpoints


def _render_json(result: LookupResult, explain: bool) -> str:
    obj: dict[str, object] = {"type": "find", "by": result.by, "target": result.target, "found": result.found,
                              "bytesRead": result.bytes_read, "batchesScanned": result.batches_scanned}
    if result.segment is not None:
        obj["segment"] = result.segment.log
    if result.batch is not None and result.record is not None:
        batch = log_json.batch_object(result.segment.log if result.segment and result.segment.log else "",
                                      result.batch, None)
        batch["records"] = [log_json.record_object(result.batch, result.record)]
        obj["batch"] = batch
    if result.log_record is not None:
        obj["logHolds"] = {"offset": result.log_record.offset, "timestamp": result.log_record.timestamp,
                           "note": next(s.text for s in result.steps if s.kind == "note" and "offset" in s.fields)}
    if explain:
        obj["steps"] = [{"kind": s.kind, "text": s.text, **s.fields} for s in result.steps]
    return log_json.dumps(obj)


@click.command("find", cls=KdumpCommand, error_exit=ExitCode.UNREADABLE)
@click.argument("partition_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--offset", type=int, default=None, help="Find the record at this offset.")
@click.option("--timestamp", type=TimeInput(), default=None, metavar="TIME",
              help=f"Find the first record with a timestamp >= TIME ({TIME_INPUT_HELP}).")
@click.option("--count", type=click.IntRange(min=1), default=1, show_default=True,
              help="Print this many records from the one found (on into later batches and segments).")
@click.option("--explain", is_flag=True, help="Show each step of Kafka's lookup and the bytes it reads.")
@click.option("--print-data-log", is_flag=True, help="Print the record's key and value.")
@time_style_options()
@kafka_version_option
@json_option
@traceback_option
def find(partition_dir: str, offset: int | None, timestamp: int | None, count: int, explain: bool,
         print_data_log: bool, times: TimeStyle, kafka_version: str, json_output: bool, traceback: bool) -> None:
    """Find a record by offset or timestamp the way a broker does (LogSegment.translateOffset,
    LogSegment.findOffsetByTimestamp).

    \b
    kdump find my-topic-0 --offset 1234 --explain
    kdump find my-topic-0 --timestamp 2024-05-01T12:00:00Z --count 10 --print-data-log
    """
    if (offset is None) == (timestamp is None):
        raise click.UsageError("give exactly one of --offset and --timestamp")
    dialect = parse_kafka_version(kafka_version)
    partition = read_partition_dir(partition_dir)
    checkpoints, _problems = partition_checkpoints(partition)
    first_base = partition.segments[0].base_offset if partition.segments else None
    log_start = checkpoints.offsets(first_base, None).log_start_offset
    if offset is not None:
        result = find_offset(partition, offset, log_start)
    else:
        result = find_timestamp(partition, timestamp or 0, log_start)
    if json_output:
        click.echo(_render_json(result, explain))
    elif explain:
        for step in result.steps:
            click.echo(f"{step.kind}: {step.text}")
    elif not result.found:
        click.echo(next((s.text for s in reversed(result.steps) if s.kind == "result"), "not found"))
    if result.log_record is not None and not json_output and not explain:
        click.echo("Note: " + next(s.text for s in result.steps if s.kind == "note" and "offset" in s.fields))
    if result.found and (count > 1 or not json_output):
        # The batch and ``count`` records from the one found, as ``kdump --files ... --offsets X.. --limit N``.
        assert result.segment is not None and result.batch is not None and result.record is not None
        records = RecordTextOptions(print_contents=print_data_log, times=None if times.fmt == "epoch" else times)
        options = DumpOptions(deep=True, records=records, dialect=dialect,
                              json=json_output, filter=RecordFilter(first_offset=result.record.offset, limit=count))
        later = [s for s in partition.segments if s.base_offset >= result.segment.base_offset]
        dump_records_from(later, result.batch.position, options)
    click.get_current_context().exit(ExitCode.OK if result.found else ExitCode.NOT_FOUND)
