"""Streams group records in `__consumer_offsets` (KIP-1071), record types 17 and 19-23.

Field facts of Kafka 4.3.0 (apache/kafka release commit a9ce3221537b, 2026-05-13)
group-coordinator/src/main/resources/common/message/StreamsGroup*.json. The record types first
shipped in 4.1; 4.2 and 4.3 only added tagged fields (marked below). Record type 18
(StreamsGroupPartitionMetadata) existed on trunk during 4.1 development but no release has it.
The two tagged fields of Kafka 4.4 (release branch, unreleased when transcribed) are included and
dropped for older releases by ``tables.group_coordinator``.
"""

from __future__ import annotations

from kdump.format.messages.schema import F, M, NULL  # noqa: F401

STREAMS_GROUP_METADATA_KEY = M('StreamsGroupMetadataKey', 17, '0', 'none', (
    F('GroupId', 'string', '0'),
))

STREAMS_GROUP_METADATA_VALUE = M('StreamsGroupMetadataValue', 17, '0', '0+', (
    F('Epoch', 'int32', '0+'),
    F('MetadataHash', 'int64', '0+'),
    F('ValidatedTopologyEpoch', 'int32', '0+', tag=0, tagged='0+', default=-1),  # 4.2+
    F('LastAssignmentConfigs', '[]struct', '0+', nullable='0+', tag=1, tagged='0+',  # 4.2+
      struct='LastAssignmentConfig', fields=(
          F('Key', 'string', '0+'),
          F('Value', 'string', '0+'),
      )),
    F('StoredDescriptionTopologyEpoch', 'int32', '0+', tag=2, tagged='0+', default=-1),  # 4.4+
    F('FailedDescriptionTopologyEpoch', 'int32', '0+', tag=3, tagged='0+', default=-1),  # 4.4+
))

STREAMS_GROUP_MEMBER_METADATA_KEY = M('StreamsGroupMemberMetadataKey', 19, '0', 'none', (
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
))

STREAMS_GROUP_MEMBER_METADATA_VALUE = M('StreamsGroupMemberMetadataValue', 19, '0', '0+', (
    F('InstanceId', 'string', '0+', nullable='0+'),
    F('RackId', 'string', '0+', nullable='0+'),
    F('ClientId', 'string', '0+'),
    F('ClientHost', 'string', '0+'),
    F('RebalanceTimeoutMs', 'int32', '0+', default=-1),
    F('TopologyEpoch', 'int32', '0+'),
    F('ProcessId', 'string', '0+'),
    F('UserEndpoint', 'struct', '0+', nullable='0+', default=NULL, struct='Endpoint', fields=(
        F('Host', 'string', '0+'),
        F('Port', 'uint16', '0+'),
    )),
    F('ClientTags', '[]struct', '0+', struct='KeyValue', fields=(
        F('Key', 'string', '0+'),
        F('Value', 'string', '0+'),
    )),
))

STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = M('StreamsGroupTargetAssignmentMetadataKey', 20, '0', 'none', (
    F('GroupId', 'string', '0'),
))

STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = M('StreamsGroupTargetAssignmentMetadataValue', 20, '0', '0+', (
    F('AssignmentEpoch', 'int32', '0+'),
    F('AssignmentTimestamp', 'int64', '0+', tag=0, tagged='0+', default=0, ignorable=True),  # 4.3+
))

STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = M('StreamsGroupTargetAssignmentMemberKey', 21, '0', 'none', (
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
))

_TASK_IDS = (
    F('SubtopologyId', 'string', '0+'),
    F('Partitions', '[]int32', '0+'),
)

STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = M('StreamsGroupTargetAssignmentMemberValue', 21, '0', '0+', (
    F('ActiveTasks', '[]struct', '0+', struct='TaskIds', fields=_TASK_IDS),
    F('StandbyTasks', '[]struct', '0+', struct='TaskIds', fields=_TASK_IDS),
    F('WarmupTasks', '[]struct', '0+', struct='TaskIds', fields=_TASK_IDS),
))

STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = M('StreamsGroupCurrentMemberAssignmentKey', 22, '0', 'none', (
    F('GroupId', 'string', '0'),
    F('MemberId', 'string', '0'),
))

# This value's TaskIds common struct has a third, tagged field (the target-assignment one does not).
_TASK_IDS_WITH_EPOCHS = (
    *_TASK_IDS,
    F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tag=0, tagged='0+'),  # 4.2+
)

STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = M('StreamsGroupCurrentMemberAssignmentValue', 22, '0', '0+', (
    F('MemberEpoch', 'int32', '0+'),
    F('PreviousMemberEpoch', 'int32', '0+'),
    F('State', 'int8', '0+'),
    F('ActiveTasks', '[]struct', '0+', struct='TaskIds', fields=_TASK_IDS_WITH_EPOCHS),
    F('StandbyTasks', '[]struct', '0+', struct='TaskIds', fields=_TASK_IDS_WITH_EPOCHS),
    F('WarmupTasks', '[]struct', '0+', struct='TaskIds', fields=_TASK_IDS_WITH_EPOCHS),
    F('ActiveTasksPendingRevocation', '[]struct', '0+', struct='TaskIds', fields=_TASK_IDS_WITH_EPOCHS),
    F('StandbyTasksPendingRevocation', '[]struct', '0+', struct='TaskIds', fields=_TASK_IDS_WITH_EPOCHS),
    F('WarmupTasksPendingRevocation', '[]struct', '0+', struct='TaskIds', fields=_TASK_IDS_WITH_EPOCHS),
))

STREAMS_GROUP_TOPOLOGY_KEY = M('StreamsGroupTopologyKey', 23, '0', 'none', (
    F('GroupId', 'string', '0'),
))

_TOPIC_INFO = (
    F('Name', 'string', '0+'),
    F('Partitions', 'int32', '0+'),
    F('ReplicationFactor', 'int16', '0+'),
    F('TopicConfigs', '[]struct', '0+', struct='TopicConfig', fields=(
        F('key', 'string', '0+'),
        F('value', 'string', '0+'),
    )),
)

STREAMS_GROUP_TOPOLOGY_VALUE = M('StreamsGroupTopologyValue', 23, '0', '0+', (
    F('Epoch', 'int32', '0+'),
    F('Subtopologies', '[]struct', '0+', struct='Subtopology', fields=(
        F('SubtopologyId', 'string', '0+'),
        F('SourceTopics', '[]string', '0+'),
        F('SourceTopicRegex', '[]string', '0+'),
        F('StateChangelogTopics', '[]struct', '0+', struct='TopicInfo', fields=_TOPIC_INFO),
        F('RepartitionSinkTopics', '[]string', '0+'),
        F('RepartitionSourceTopics', '[]struct', '0+', struct='TopicInfo', fields=_TOPIC_INFO),
        F('CopartitionGroups', '[]struct', '0+', struct='CopartitionGroup', fields=(
            F('SourceTopics', '[]int16', '0+'),
            F('SourceTopicRegex', '[]int16', '0+'),
            F('RepartitionSourceTopics', '[]int16', '0+'),
        )),
    )),
))
