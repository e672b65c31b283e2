"""Tiered-storage metadata records (`__remote_log_metadata`).

Field facts of Kafka 4.3.0 (apache/kafka release commit a9ce3221537b, 2026-05-13)
storage/src/main/resources/message/*.json; ``TxnIndexEmpty`` is new in 4.0.
"""

from __future__ import annotations

from kdump.format.messages.schema import F, M, NULL  # noqa: F401

REMOTE_LOG_SEGMENT_METADATA_RECORD = M('RemoteLogSegmentMetadataRecord', 0, '0', '0+', (
    F('RemoteLogSegmentId', 'struct', '0+', struct='RemoteLogSegmentIdEntry', fields=(
        F('TopicIdPartition', 'struct', '0+', struct='TopicIdPartitionEntry', fields=(
            F('Name', 'string', '0+'),
            F('Id', 'uuid', '0+'),
            F('Partition', 'int32', '0+'),
        )),
        F('Id', 'uuid', '0+'),
    )),
    F('StartOffset', 'int64', '0+'),
    F('EndOffset', 'int64', '0+'),
    F('BrokerId', 'int32', '0+'),
    F('MaxTimestampMs', 'int64', '0+'),
    F('EventTimestampMs', 'int64', '0+'),
    F('SegmentLeaderEpochs', '[]struct', '0+', struct='SegmentLeaderEpochEntry', fields=(
        F('LeaderEpoch', 'int32', '0+'),
        F('Offset', 'int64', '0+'),
    )),
    F('SegmentSizeInBytes', 'int32', '0+'),
    F('CustomMetadata', 'bytes', '0+', nullable='0+', default=NULL),
    F('RemoteLogSegmentState', 'int8', '0+'),
    F('TxnIndexEmpty', 'bool', '0+', tag=0, tagged='0+'),  # 4.0+
))

REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD = M('RemoteLogSegmentMetadataUpdateRecord', 1, '0', '0+', (
    F('RemoteLogSegmentId', 'struct', '0+', struct='RemoteLogSegmentIdEntry', fields=(
        F('TopicIdPartition', 'struct', '0+', struct='TopicIdPartitionEntry', fields=(
            F('Name', 'string', '0+'),
            F('Id', 'uuid', '0+'),
            F('Partition', 'int32', '0+'),
        )),
        F('Id', 'uuid', '0+'),
    )),
    F('BrokerId', 'int32', '0+'),
    F('EventTimestampMs', 'int64', '0+'),
    F('CustomMetadata', 'bytes', '0+', nullable='0+', default=NULL),
    F('RemoteLogSegmentState', 'int8', '0+'),
))

REMOTE_PARTITION_DELETE_METADATA_RECORD = M('RemotePartitionDeleteMetadataRecord', 2, '0', '0+', (
    F('TopicIdPartition', 'struct', '0+', struct='TopicIdPartitionEntry', fields=(
        F('Name', 'string', '0+'),
        F('Id', 'uuid', '0+'),
        F('Partition', 'int32', '0+'),
    )),
    F('BrokerId', 'int32', '0+'),
    F('EventTimestampMs', 'int64', '0+'),
    F('RemotePartitionDeleteState', 'int8', '0+'),
))

REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD = M('RemoteLogSegmentMetadataSnapshotRecord', 3, '0', '0+', (
    F('SegmentId', 'uuid', '0+'),
    F('StartOffset', 'int64', '0+'),
    F('EndOffset', 'int64', '0+'),
    F('BrokerId', 'int32', '0+'),
    F('MaxTimestampMs', 'int64', '0+'),
    F('EventTimestampMs', 'int64', '0+'),
    F('SegmentLeaderEpochs', '[]struct', '0+', struct='SegmentLeaderEpochEntry', fields=(
        F('LeaderEpoch', 'int32', '0+'),
        F('Offset', 'int64', '0+'),
    )),
    F('SegmentSizeInBytes', 'int32', '0+'),
    F('CustomMetadata', 'bytes', '0+', nullable='0+', default=NULL),
    F('RemoteLogSegmentState', 'int8', '0+'),
    F('TxnIndexEmpty', 'bool', '0+', tag=0, tagged='0+'),  # 4.0+
))

