"""Share group records in `__consumer_offsets`, record types 9-15.

Field facts of Kafka 4.3.0 (apache/kafka release commit a9ce3221537b, 2026-05-13)
group-coordinator/src/main/resources/common/message/ShareGroup*.json. Share groups were a preview
in 4.0 and changed incompatibly in 4.1: record type 9 (ShareGroupPartitionMetadata) exists only in
4.0, and the 4.0 shapes of types 11 and 15 (no ``MetadataHash`` / ``InitializingTopics``) are derived
in ``tables.group_coordinator``. The 4.0 schema of type 9 is kept here from Kafka 4.0.0.
"""

from __future__ import annotations

from kdump.format.messages.schema import F, M, NULL  # noqa: F401

# Kafka 4.0 only (removed in 4.1); its key was versioned by record type there, like every 4.0 key.
SHARE_GROUP_PARTITION_METADATA_KEY = M('ShareGroupPartitionMetadataKey', 9, '9', 'none', (
    F('GroupId', 'string', '9'),
))

SHARE_GROUP_PARTITION_METADATA_VALUE = M('ShareGroupPartitionMetadataValue', 9, '0', '0+', (
    F('Topics', '[]struct', '0+', struct='TopicMetadata', fields=(
        F('TopicId', 'uuid', '0+'),
        F('TopicName', 'string', '0+'),
        F('NumPartitions', 'int32', '0+'),
        F('PartitionMetadata', '[]struct', '0+', struct='PartitionMetadata', fields=(
            F('Partition', 'int32', '0+'),
            F('Racks', '[]string', '0+'),
        )),
    )),
))

SHARE_GROUP_MEMBER_METADATA_KEY = M('ShareGroupMemberMetadataKey', 10, '0', 'none', (
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
))

SHARE_GROUP_MEMBER_METADATA_VALUE = M('ShareGroupMemberMetadataValue', 10, '0', '0+', (
    F('RackId', 'string', '0+', nullable='0+'),
    F('ClientId', 'string', '0+'),
    F('ClientHost', 'string', '0+'),
    F('SubscribedTopicNames', '[]string', '0+'),
))

SHARE_GROUP_METADATA_KEY = M('ShareGroupMetadataKey', 11, '0', 'none', (
    F('GroupId', 'string', '0'),
))

SHARE_GROUP_METADATA_VALUE = M('ShareGroupMetadataValue', 11, '0', '0+', (
    F('Epoch', 'int32', '0+'),
    F('MetadataHash', 'int64', '0+'),  # 4.1+ (not tagged: 4.0 records have a different layout)
))

SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = M('ShareGroupTargetAssignmentMetadataKey', 12, '0', 'none', (
    F('GroupId', 'string', '0'),
))

SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = M('ShareGroupTargetAssignmentMetadataValue', 12, '0', '0+', (
    F('AssignmentEpoch', 'int32', '0+'),
    F('AssignmentTimestamp', 'int64', '0+', tag=0, tagged='0+', default=0, ignorable=True),  # 4.3+
))

SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = M('ShareGroupTargetAssignmentMemberKey', 13, '0', 'none', (
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
))

SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = M('ShareGroupTargetAssignmentMemberValue', 13, '0', '0+', (
    F('TopicPartitions', '[]struct', '0+', struct='TopicPartition', fields=(
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]int32', '0+'),
    )),
))

SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = M('ShareGroupCurrentMemberAssignmentKey', 14, '0', 'none', (
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
))

SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = M('ShareGroupCurrentMemberAssignmentValue', 14, '0', '0+', (
    F('MemberEpoch', 'int32', '0+'),
    F('PreviousMemberEpoch', 'int32', '0+'),
    F('State', 'int8', '0+'),
    F('AssignedPartitions', '[]struct', '0+', struct='TopicPartitions', fields=(
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]int32', '0+'),
    )),
))

SHARE_GROUP_STATE_PARTITION_METADATA_KEY = M('ShareGroupStatePartitionMetadataKey', 15, '0', 'none', (
    F('GroupId', 'string', '0'),
))

_TOPIC_PARTITIONS_INFO = (
    F('TopicId', 'uuid', '0+'),
    F('TopicName', 'string', '0+'),
    F('Partitions', '[]int32', '0+'),
)

SHARE_GROUP_STATE_PARTITION_METADATA_VALUE = M('ShareGroupStatePartitionMetadataValue', 15, '0', '0+', (
    F('InitializingTopics', '[]struct', '0+', struct='TopicPartitionsInfo', fields=_TOPIC_PARTITIONS_INFO),  # 4.1+
    F('InitializedTopics', '[]struct', '0+', struct='TopicPartitionsInfo', fields=_TOPIC_PARTITIONS_INFO),
    F('DeletingTopics', '[]struct', '0+', struct='TopicInfo', fields=(
        F('TopicId', 'uuid', '0+'),
        F('TopicName', 'string', '0+'),
    )),
))
