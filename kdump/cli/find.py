"""``kdump find PARTITION_DIR --offset N | --timestamp T [--explain]``: Kafka's lookup, made visible.

Prints the batch and the record the broker would answer with (text as in ``kdump --files``), and
with ``--explain`` every step first: the segment chosen, the index slot and entry, the start
position, the batches scanned and the bytes of log read. Exit status: 0 found, 1 not found,
2 usage error or unreadable input.
"""

from __future__ import annotations

import json

import click

from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import json_option, kafka_version_option, traceback_option
from kdump.log.logdir import read_partition_dir
from kdump.log.lookup import LookupResult, find_offset, find_timestamp
from kdump.render import log_json
from kdump.render.dialect import parse_kafka_version
from kdump.render.log_text import RecordTextOptions, batch_line, record_lines


def _render_text(result: LookupResult, explain: bool, print_data: bool, kafka_version: str) -> list[str]:
    lines = [f"{step.kind}: {step.text}" for step in result.steps] if explain else []
    if result.batch is not None and result.record is not None:
        dialect = parse_kafka_version(kafka_version)
        lines.append(batch_line(result.batch, dialect))
        lines.extend(record_lines(result.batch, [result.record], RecordTextOptions(print_contents=print_data),
                                  dialect))
    elif not explain:
        lines.append(next((s.text for s in reversed(result.steps) if s.kind == "result"), "not found"))
    return lines


def _render_json(result: LookupResult, explain: bool) -> list[str]:
    obj: dict[str, object] = {"type": "find", "by": result.by, "target": result.target, "found": result.found,
                              "bytesRead": result.bytes_read, "batchesScanned": result.batches_scanned}
    if result.segment is not None:
        obj["segment"] = result.segment.log
    if result.batch is not None and result.record is not None:
        batch = log_json.batch_object(result.segment.log if result.segment and result.segment.log else "",
                                      result.batch, None)
        batch["records"] = [log_json.record_object(result.batch, result.record)]
        obj["batch"] = batch
    if explain:
        obj["steps"] = [{"kind": s.kind, "text": s.text, **s.fields} for s in result.steps]
    return [json.dumps(obj, separators=(",", ":"), ensure_ascii=False)]


@click.command("find", cls=KdumpCommand, error_exit=ExitCode.UNREADABLE)
@click.argument("partition_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--offset", type=int, default=None, help="Find the record at this offset.")
@click.option("--timestamp", type=int, default=None,
              help="Find the first record with a timestamp >= this (epoch milliseconds).")
@click.option("--explain", is_flag=True, help="Show each step of Kafka's lookup and the bytes it reads.")
@click.option("--print-data-log", is_flag=True, help="Print the record's key and value.")
@kafka_version_option
@json_option
@traceback_option
def find(partition_dir: str, offset: int | None, timestamp: int | None, explain: bool, print_data_log: bool,
         kafka_version: str, json_output: bool, traceback: bool) -> None:
    """Find a record by offset or timestamp the way a broker does (LogSegment.translateOffset,
    LogSegment.findOffsetByTimestamp).

    \b
    kdump find my-topic-0 --offset 1234 --explain
    kdump find my-topic-0 --timestamp 1700000000000
    """
    ctx = click.get_current_context()
    if (offset is None) == (timestamp is None):
        raise click.UsageError("give exactly one of --offset and --timestamp")
    parse_kafka_version(kafka_version)
    partition = read_partition_dir(partition_dir)
    result = find_offset(partition, offset) if offset is not None else find_timestamp(partition, timestamp or 0)
    lines = _render_json(result, explain) if json_output else _render_text(result, explain, print_data_log,
                                                                           kafka_version)
    for line in lines:
        click.echo(line)
    ctx.exit(ExitCode.OK if result.found else ExitCode.NOT_FOUND)
