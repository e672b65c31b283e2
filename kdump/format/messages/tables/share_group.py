"""Share group records in `__consumer_offsets`, record types 9-15.

Transcribed from apache/kafka group-coordinator/src/main/resources/common/message/ShareGroup*.json @ 1eb7644 (field facts only).
"""

from __future__ import annotations

from kdump.format.messages.schema import F, M, NULL  # noqa: F401

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

SHARE_GROUP_MEMBER_METADATA_KEY = M('ShareGroupMemberMetadataKey', 10, '10', 'none', (
    F('GroupId', 'string', '10'),
    F('MemberId', 'string', '10'),
))

SHARE_GROUP_MEMBER_METADATA_VALUE = M('ShareGroupMemberMetadataValue', 10, '0', '0+', (
    F('RackId', 'string', '0+', nullable='0+'),
    F('ClientId', 'string', '0+'),
    F('ClientHost', 'string', '0+'),
    F('SubscribedTopicNames', '[]string', '0+'),
))

SHARE_GROUP_METADATA_KEY = M('ShareGroupMetadataKey', 11, '11', 'none', (
    F('GroupId', 'string', '11'),
))

SHARE_GROUP_METADATA_VALUE = M('ShareGroupMetadataValue', 11, '0', '0+', (
    F('Epoch', 'int32', '0+'),
))

SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = M('ShareGroupTargetAssignmentMetadataKey', 12, '12', 'none', (
    F('GroupId', 'string', '12'),
))

SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = M('ShareGroupTargetAssignmentMetadataValue', 12, '0', '0+', (
    F('AssignmentEpoch', 'int32', '0+'),
))

SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = M('ShareGroupTargetAssignmentMemberKey', 13, '13', 'none', (
    F('GroupId', 'string', '13'),
    F('MemberId', 'string', '13'),
))

SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = M('ShareGroupTargetAssignmentMemberValue', 13, '0', '0+', (
    F('TopicPartitions', '[]struct', '0+', struct='TopicPartition', fields=(
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]int32', '0+'),
    )),
))

SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = M('ShareGroupCurrentMemberAssignmentKey', 14, '14', 'none', (
    F('GroupId', 'string', '14'),
    F('MemberId', 'string', '14'),
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

SHARE_GROUP_STATE_PARTITION_METADATA_KEY = M('ShareGroupStatePartitionMetadataKey', 15, '15', 'none', (
    F('GroupId', 'string', '15'),
))

SHARE_GROUP_STATE_PARTITION_METADATA_VALUE = M('ShareGroupStatePartitionMetadataValue', 15, '0', '0+', (
    F('InitializedTopics', '[]struct', '0+', struct='TopicPartitionsInfo', fields=(
        F('TopicId', 'uuid', '0+'),
        F('TopicName', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
    )),
    F('DeletingTopics', '[]struct', '0+', struct='TopicInfo', fields=(
        F('TopicId', 'uuid', '0+'),
        F('TopicName', 'string', '0+'),
    )),
))

