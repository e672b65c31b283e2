"""Transaction log records (`__transaction_state`), record type 0.

Field facts of Kafka 4.3.0 (apache/kafka release commit a9ce3221537b, 2026-05-13)
transaction-coordinator/src/main/resources/common/message/*.json; ``NextProducerEpoch`` is new in 4.1.
"""

from __future__ import annotations

from kdump.format.messages.schema import F, M, NULL  # noqa: F401

TRANSACTION_LOG_KEY = M('TransactionLogKey', 0, '0', 'none', (
    F('TransactionalId', 'string', '0'),
))

TRANSACTION_LOG_VALUE = M('TransactionLogValue', 0, '0-1', '1+', (
    F('ProducerId', 'int64', '0+'),
    F('PreviousProducerId', 'int64', '1+', tag=0, tagged='1+', default=-1),
    F('NextProducerId', 'int64', '1+', tag=1, tagged='1+', default=-1),
    F('ProducerEpoch', 'int16', '0+'),
    F('NextProducerEpoch', 'int16', '1+', tag=3, tagged='1+', default=-1),  # 4.1+
    F('TransactionTimeoutMs', 'int32', '0+'),
    F('TransactionStatus', 'int8', '0+'),
    F('TransactionPartitions', '[]struct', '0+', nullable='0+', struct='PartitionsSchema', fields=(
        F('Topic', 'string', '0+'),
        F('PartitionIds', '[]int32', '0+'),
    )),
    F('TransactionLastUpdateTimestampMs', 'int64', '0+'),
    F('TransactionStartTimestampMs', 'int64', '0+'),
    F('ClientTransactionVersion', 'int16', '1+', tag=2, tagged='1+', default=0),
))

