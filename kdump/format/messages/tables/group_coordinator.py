"""Group coordinator records (`__consumer_offsets`): offset commits, classic groups, consumer groups, and
the consumer embedded protocol.

Field facts of Kafka 4.3.0 (apache/kafka release commit a9ce3221537b, 2026-05-13)
group-coordinator/src/main/resources/common/message/*.json and clients/.../ConsumerProtocol*.json.
From 4.1 every key is a ``coordinator-key`` at version 0 whose ``apiKey`` is the record type; before
that the key schemas were versioned by record type (same fields). Record type 0 is
``LegacyOffsetCommit*`` from 4.1; before that types 0 and 1 both used ``OffsetCommit*``.
Which release knows which record type and field: ``tables.group_coordinator``.
"""

from __future__ import annotations

from kdump.format.messages.schema import F, M, NULL  # noqa: F401

LEGACY_OFFSET_COMMIT_KEY = M('LegacyOffsetCommitKey', 0, '0', 'none', (
    F('group', 'string', '0'),
    F('topic', 'string', '0'),
    F('partition', 'int32', '0'),
))

LEGACY_OFFSET_COMMIT_VALUE = M('LegacyOffsetCommitValue', 0, '0', 'none', (
    F('offset', 'int64', '0'),
    F('metadata', 'string', '0'),
    F('commitTimestamp', 'int64', '0'),
))

OFFSET_COMMIT_KEY = M('OffsetCommitKey', 1, '0', 'none', (
    F('group', 'string', '0'),
    F('topic', 'string', '0'),
    F('partition', 'int32', '0'),
))

OFFSET_COMMIT_VALUE = M('OffsetCommitValue', 1, '0-4', '4+', (
    F('offset', 'int64', '0+'),
    F('leaderEpoch', 'int32', '3+', default=-1, ignorable=True),
    F('metadata', 'string', '0+'),
    F('commitTimestamp', 'int64', '0+'),
    F('expireTimestamp', 'int64', '1', default=-1, ignorable=True),
    F('topicId', 'uuid', '4+', tag=0, tagged='4+', ignorable=True),  # 4.1+
))

GROUP_METADATA_KEY = M('GroupMetadataKey', 2, '0', 'none', (
    F('group', 'string', '0'),
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

CONSUMER_GROUP_METADATA_KEY = M('ConsumerGroupMetadataKey', 3, '0', 'none', (
    F('GroupId', 'string', '0'),
))

CONSUMER_GROUP_METADATA_VALUE = M('ConsumerGroupMetadataValue', 3, '0', '0+', (
    F('Epoch', 'int32', '0+'),
    F('MetadataHash', 'int64', '0+', tag=0, tagged='0+', default=0),  # 4.1+ (KIP-1101)
))

# Still a known record type in 4.3, but no longer written from 4.1 (replaced by MetadataHash above).
CONSUMER_GROUP_PARTITION_METADATA_KEY = M('ConsumerGroupPartitionMetadataKey', 4, '0', 'none', (
    F('GroupId', 'string', '0'),
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

CONSUMER_GROUP_MEMBER_METADATA_KEY = M('ConsumerGroupMemberMetadataKey', 5, '0', 'none', (
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
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

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = M('ConsumerGroupTargetAssignmentMetadataKey', 6, '0', 'none', (
    F('GroupId', 'string', '0'),
))

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = M('ConsumerGroupTargetAssignmentMetadataValue', 6, '0', '0+', (
    F('AssignmentEpoch', 'int32', '0+'),
    F('AssignmentTimestamp', 'int64', '0+', tag=0, tagged='0+', default=0, ignorable=True),  # 4.3+
))

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = M('ConsumerGroupTargetAssignmentMemberKey', 7, '0', 'none', (
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
))

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = M('ConsumerGroupTargetAssignmentMemberValue', 7, '0', '0+', (
    F('TopicPartitions', '[]struct', '0+', struct='TopicPartition', fields=(
        F('TopicId', 'uuid', '0+'),
        F('Partitions', '[]int32', '0+'),
    )),
))

CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = M('ConsumerGroupCurrentMemberAssignmentKey', 8, '0', 'none', (
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
))

_TOPIC_PARTITIONS = (
    F('TopicId', 'uuid', '0+'),
    F('Partitions', '[]int32', '0+'),
    F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tag=0, tagged='0+'),  # 4.3+
)

CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = M('ConsumerGroupCurrentMemberAssignmentValue', 8, '0', '0+', (
    F('MemberEpoch', 'int32', '0+'),
    F('PreviousMemberEpoch', 'int32', '0+'),
    F('State', 'int8', '0+'),
    F('AssignedPartitions', '[]struct', '0+', struct='TopicPartitions', fields=_TOPIC_PARTITIONS),
    F('PartitionsPendingRevocation', '[]struct', '0+', struct='TopicPartitions', fields=_TOPIC_PARTITIONS),
))

# Record type 16 (4.0+, KIP-848 server-side regular expressions).
CONSUMER_GROUP_REGULAR_EXPRESSION_KEY = M('ConsumerGroupRegularExpressionKey', 16, '0', 'none', (
    F('GroupId', 'string', '0'),
    F('RegularExpression', 'string', '0'),
))

CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE = M('ConsumerGroupRegularExpressionValue', 16, '0', '0+', (
    F('Topics', '[]string', '0+'),
    F('Version', 'int64', '0+'),
    F('Timestamp', 'int64', '0+'),
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
