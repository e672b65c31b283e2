"""Group coordinator records (`__consumer_offsets`), record types 0-8, and the consumer embedded protocol.

Transcribed from apache/kafka group-coordinator/src/main/resources/common/message/*.json and clients/.../ConsumerProtocol*.json @ 1eb7644 (field facts only).
"""

from __future__ import annotations

from kdump.format.messages.schema import F, M, NULL  # noqa: F401

OFFSET_COMMIT_KEY = M('OffsetCommitKey', 0, '0-1', 'none', (
    F('group', 'string', '0-1'),
    F('topic', 'string', '0-1'),
    F('partition', 'int32', '0-1'),
))

OFFSET_COMMIT_VALUE = M('OffsetCommitValue', 0, '0-4', '4+', (
    F('offset', 'int64', '0+'),
    F('leaderEpoch', 'int32', '3+', default=-1, ignorable=True),
    F('metadata', 'string', '0+'),
    F('commitTimestamp', 'int64', '0+'),
    F('expireTimestamp', 'int64', '1', default=-1, ignorable=True),
))

GROUP_METADATA_KEY = M('GroupMetadataKey', 2, '2', 'none', (
    F('group', 'string', '2'),
))

GROUP_METADATA_VALUE = M('GroupMetadataValue', 2, '0-4', '4+', (
    F('protocolType', 'string', '0+'),
    F('generation', 'int32', '0+'),
    F('protocol', 'string', '0+', nullable='0+'),
    F('leader', 'string', '0+', nullable='0+'),
    F('currentStateTimestamp', 'int64', '2+', default=-1, ignorable=True),
    F('members', '[]struct', '0+', struct='MemberMetadata', fields=(
        F('memberId', 'string', '0+'),
        F('groupInstanceId', 'string', '3+', nullable='3+', default=NULL, ignorable=True),
        F('clientId', 'string', '0+'),
        F('clientHost', 'string', '0+'),
        F('rebalanceTimeout', 'int32', '1+', default=-1, ignorable=True),
        F('sessionTimeout', 'int32', '0+'),
        F('subscription', 'bytes', '0+'),
        F('assignment', 'bytes', '0+'),
    )),
))

CONSUMER_GROUP_METADATA_KEY = M('ConsumerGroupMetadataKey', 3, '3', 'none', (
    F('GroupId', 'string', '3'),
))

CONSUMER_GROUP_METADATA_VALUE = M('ConsumerGroupMetadataValue', 3, '0', '0+', (
    F('Epoch', 'int32', '0+'),
))

CONSUMER_GROUP_PARTITION_METADATA_KEY = M('ConsumerGroupPartitionMetadataKey', 4, '4', 'none', (
    F('GroupId', 'string', '4'),
))

CONSUMER_GROUP_PARTITION_METADATA_VALUE = M('ConsumerGroupPartitionMetadataValue', 4, '0', '0+', (
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

CONSUMER_GROUP_MEMBER_METADATA_KEY = M('ConsumerGroupMemberMetadataKey', 5, '5', 'none', (
    F('GroupId', 'string', '5'),
    F('MemberId', 'string', '5'),
))

CONSUMER_GROUP_MEMBER_METADATA_VALUE = M('ConsumerGroupMemberMetadataValue', 5, '0', '0+', (
    F('InstanceId', 'string', '0+', nullable='0+'),
    F('RackId', 'string', '0+', nullable='0+'),
    F('ClientId', 'string', '0+'),
    F('ClientHost', 'string', '0+'),
    F('SubscribedTopicNames', '[]string', '0+'),
    F('SubscribedTopicRegex', 'string', '0+', nullable='0+'),
    F('RebalanceTimeoutMs', 'int32', '0+', default=-1),
    F('ServerAssignor', 'string', '0+', nullable='0+'),
    F('ClassicMemberMetadata', 'struct', '0+', nullable='0+', tag=0, tagged='0+', struct='ClassicMemberMetadata', fields=(
        F('SessionTimeoutMs', 'int32', '0+'),
        F('SupportedProtocols', '[]struct', '0+', struct='ClassicProtocol', fields=(
            F('Name', 'string', '0+'),
            F('Metadata', 'bytes', '0+'),
        )),
    )),
))

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = M('ConsumerGroupTargetAssignmentMetadataKey', 6, '6', 'none', (
    F('GroupId', 'string', '6'),
))

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = M('ConsumerGroupTargetAssignmentMetadataValue', 6, '0', '0+', (
    F('AssignmentEpoch', 'int32', '0+'),
))

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = M('ConsumerGroupTargetAssignmentMemberKey', 7, '7', 'none', (
    F('GroupId', 'string', '7'),
    F('MemberId', 'string', '7'),
))

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = M('ConsumerGroupTargetAssignmentMemberValue', 7, '0', '0+', (
    F('TopicPartitions', '[]struct', '0+', struct='TopicPartition', fields=(
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]int32', '0+'),
    )),
))

CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = M('ConsumerGroupCurrentMemberAssignmentKey', 8, '8', 'none', (
    F('GroupId', 'string', '8'),
    F('MemberId', 'string', '8'),
))

CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = M('ConsumerGroupCurrentMemberAssignmentValue', 8, '0', '0+', (
    F('MemberEpoch', 'int32', '0+'),
    F('PreviousMemberEpoch', 'int32', '0+'),
    F('State', 'int8', '0+'),
    F('AssignedPartitions', '[]struct', '0+', struct='TopicPartitions', fields=(
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]int32', '0+'),
    )),
    F('PartitionsPendingRevocation', '[]struct', '0+', struct='TopicPartitions', fields=(
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]int32', '0+'),
    )),
))

CONSUMER_PROTOCOL_SUBSCRIPTION = M('ConsumerProtocolSubscription', None, '0-3', 'none', (
    F('Topics', '[]string', '0+'),
    F('UserData', 'bytes', '0+', nullable='0+', default=NULL),
    F('OwnedPartitions', '[]struct', '1+', ignorable=True, struct='TopicPartition', fields=(
        F('Topic', 'string', '1+'),
        F('Partitions', '[]int32', '1+'),
    )),
    F('GenerationId', 'int32', '2+', default=-1, ignorable=True),
    F('RackId', 'string', '3+', nullable='3+', default=NULL, ignorable=True),
))

CONSUMER_PROTOCOL_ASSIGNMENT = M('ConsumerProtocolAssignment', None, '0-3', 'none', (
    F('AssignedPartitions', '[]struct', '0+', struct='TopicPartition', fields=(
        F('Topic', 'string', '0+'),
        F('Partitions', '[]int32', '0+'),
    )),
    F('UserData', 'bytes', '0+', nullable='0+', default=NULL),
))

