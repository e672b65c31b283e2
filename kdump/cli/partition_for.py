"""``kdump partition-for``: which ``__consumer_offsets`` / ``__transaction_state`` partition holds a group
or a transactional id, i.e. which broker (that partition's leader) is its coordinator.

Kafka computes ``Utils.abs(id.hashCode()) % partitions``:
* GroupMetadataManager.partitionFor (core, Scala) and GroupCoordinatorService.partitionFor
  (group-coordinator, Java 3.7+): ``Utils.abs(groupId.hashCode) % groupMetadataTopicPartitionCount``;
* TransactionStateManager.partitionFor: ``Utils.abs(transactionalId.hashCode) % transactionTopicPartitionCount``.
``org.apache.kafka.common.utils.Utils.abs(int n)`` returns 0 for Integer.MIN_VALUE and Math.abs(n)
otherwise (its Javadoc says so because Math.abs(MIN_VALUE) stays negative). It is *not*
``Utils.toPositive`` (``n & 0x7fffffff``), which the producer's partitioner uses: for a negative hash
the two give different partitions. Sources read: apache/kafka clients/.../common/utils/Utils.java,
core/.../coordinator/transaction/TransactionStateManager.scala,
core/.../coordinator/group/GroupMetadataManager.scala (via the code index, 2024-2025 trunk).
"""

from __future__ import annotations

import click

from kdump.cli.boundary import KdumpCommand
from kdump.cli.options import json_option
from kdump.render import log_json
from kdump.render.kafka_maps import java_string_hash

DEFAULT_PARTITIONS = 50  # offsets.topic.num.partitions and transaction.state.log.num.partitions defaults


def kafka_utils_abs(n: int) -> int:
    """Utils.abs: Math.abs, except Integer.MIN_VALUE maps to 0."""
    return 0 if n == -(1 << 31) else abs(n)


@click.command("partition-for", cls=KdumpCommand)
@click.option("--group", "group_id", metavar="ID", help="Consumer group id (__consumer_offsets).")
@click.option("--transactional-id", metavar="ID", help="Producer transactional.id (__transaction_state).")
@click.option("--partitions", type=click.IntRange(min=1), default=DEFAULT_PARTITIONS, show_default=True,
              help="Partition count of the internal topic (offsets.topic.num.partitions / "
                   "transaction.state.log.num.partitions).")
@json_option
def partition_for(group_id: str | None, transactional_id: str | None, partitions: int, json_output: bool) -> None:
    """Which internal-topic partition (and so which coordinator) holds a group or a transactional id."""
    if (group_id is None) == (transactional_id is None):
        raise click.UsageError("give exactly one of --group or --transactional-id")
    if group_id is not None:
        key, topic, kind = group_id, "__consumer_offsets", "group"
    else:
        key, topic, kind = str(transactional_id), "__transaction_state", "transactionalId"
    hash_code = java_string_hash(key)
    partition = kafka_utils_abs(hash_code) % partitions
    if json_output:
        click.echo(log_json.dumps({"type": "partitionFor", kind: key, "topic": topic, "partitions": partitions,
                                   "hashCode": hash_code, "partition": partition}))
    else:
        click.echo(f"{topic}-{partition}")
        click.echo(f"  ({kind} {key!r}: hashCode {hash_code}, Utils.abs % {partitions} = {partition})", err=True)

