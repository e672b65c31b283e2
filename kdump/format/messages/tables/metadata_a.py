"""KRaft metadata records (`__cluster_metadata`), api keys 0-12.

Transcribed from apache/kafka metadata/src/main/resources/common/metadata/*.json @ 1eb7644 (field facts only),
brought up to Kafka 4.3.0 (release commit a9ce3221537b): RegisterBrokerRecord v4 (``CordonedLogDirs``).
"""

from __future__ import annotations

from kdump.format.messages.schema import F, M, NULL  # noqa: F401

REGISTER_BROKER_RECORD = M('RegisterBrokerRecord', 0, '0-4', '0+', (
    F('BrokerId', 'int32', '0+'),
    F('IsMigratingZkBroker', 'bool', '2+', default=False),
    F('IncarnationId', 'uuid', '0+'),
    F('BrokerEpoch', 'int64', '0+'),
    F('EndPoints', '[]struct', '0+', struct='BrokerEndpoint', fields=(
        F('Name', 'string', '0+'),
        F('Host', 'string', '0+'),
        F('Port', 'uint16', '0+'),
        F('SecurityProtocol', 'int16', '0+'),
    )),
    F('Features', '[]struct', '0+', struct='BrokerFeature', fields=(
        F('Name', 'string', '0+'),
        F('MinSupportedVersion', 'int16', '0+'),
        F('MaxSupportedVersion', 'int16', '0+'),
    )),
    F('Rack', 'string', '0+', nullable='0+'),
    F('Fenced', 'bool', '0+', default=True),
    F('InControlledShutdown', 'bool', '1+', default=False),
    F('LogDirs', '[]uuid', '3+', tag=0, tagged='3+'),
    F('CordonedLogDirs', '[]uuid', '4+', nullable='4+', tag=1, tagged='4+', default=NULL),  # 4.3+
))

UNREGISTER_BROKER_RECORD = M('UnregisterBrokerRecord', 1, '0', '0+', (
    F('BrokerId', 'int32', '0+'),
    F('BrokerEpoch', 'int64', '0+'),
))

TOPIC_RECORD = M('TopicRecord', 2, '0', '0+', (
    F('Name', 'string', '0+'),
    F('TopicId', 'uuid', '0+'),
))

PARTITION_RECORD = M('PartitionRecord', 3, '0-2', '0+', (
    F('PartitionId', 'int32', '0+', default=-1),
    F('TopicId', 'uuid', '0+'),
    F('Replicas', '[]int32', '0+'),
    F('Isr', '[]int32', '0+'),
    F('RemovingReplicas', '[]int32', '0+'),
    F('AddingReplicas', '[]int32', '0+'),
    F('Leader', 'int32', '0+', default=-1),
    F('LeaderRecoveryState', 'int8', '0+', tag=0, tagged='0+', default=0),
    F('LeaderEpoch', 'int32', '0+', default=-1),
    F('PartitionEpoch', 'int32', '0+', default=-1),
    F('Directories', '[]uuid', '1+'),
    F('EligibleLeaderReplicas', '[]int32', '2+', nullable='2+', tag=1, tagged='2+', default=NULL),
    F('LastKnownElr', '[]int32', '2+', nullable='2+', tag=2, tagged='2+', default=NULL),
))

CONFIG_RECORD = M('ConfigRecord', 4, '0', '0+', (
    F('ResourceType', 'int8', '0+'),
    F('ResourceName', 'string', '0+'),
    F('Name', 'string', '0+'),
    F('Value', 'string', '0+', nullable='0+'),
))

PARTITION_CHANGE_RECORD = M('PartitionChangeRecord', 5, '0-2', '0+', (
    F('PartitionId', 'int32', '0+', default=-1),
    F('TopicId', 'uuid', '0+'),
    F('Isr', '[]int32', '0+', nullable='0+', tag=0, tagged='0+', default=NULL),
    F('Leader', 'int32', '0+', tag=1, tagged='0+', default=-2),
    F('Replicas', '[]int32', '0+', nullable='0+', tag=2, tagged='0+', default=NULL),
    F('RemovingReplicas', '[]int32', '0+', nullable='0+', tag=3, tagged='0+', default=NULL),
    F('AddingReplicas', '[]int32', '0+', nullable='0+', tag=4, tagged='0+', default=NULL),
    F('LeaderRecoveryState', 'int8', '0+', tag=5, tagged='0+', default=-1),
    F('Directories', '[]uuid', '1+', nullable='1+', tag=8, tagged='1+', default=NULL),
    F('EligibleLeaderReplicas', '[]int32', '2+', nullable='2+', tag=6, tagged='2+', default=NULL),
    F('LastKnownElr', '[]int32', '2+', nullable='2+', tag=7, tagged='2+', default=NULL),
))

FENCE_BROKER_RECORD = M('FenceBrokerRecord', 7, '0', '0+', (
    F('Id', 'int32', '0+'),
    F('Epoch', 'int64', '0+'),
))

UNFENCE_BROKER_RECORD = M('UnfenceBrokerRecord', 8, '0', '0+', (
    F('Id', 'int32', '0+'),
    F('Epoch', 'int64', '0+'),
))

REMOVE_TOPIC_RECORD = M('RemoveTopicRecord', 9, '0', '0+', (
    F('TopicId', 'uuid', '0+'),
))

DELEGATION_TOKEN_RECORD = M('DelegationTokenRecord', 10, '0', '0+', (
    F('Owner', 'string', '0+'),
    F('Requester', 'string', '0+'),
    F('Renewers', '[]string', '0+'),
    F('IssueTimestamp', 'int64', '0+'),
    F('MaxTimestamp', 'int64', '0+'),
    F('ExpirationTimestamp', 'int64', '0+'),
    F('TokenId', 'string', '0+'),
))

USER_SCRAM_CREDENTIAL_RECORD = M('UserScramCredentialRecord', 11, '0', '0+', (
    F('Name', 'string', '0+'),
    F('Mechanism', 'int8', '0+'),
    F('Salt', 'bytes', '0+'),
    F('StoredKey', 'bytes', '0+'),
    F('ServerKey', 'bytes', '0+'),
    F('Iterations', 'int32', '0+'),
))

FEATURE_LEVEL_RECORD = M('FeatureLevelRecord', 12, '0', '0+', (
    F('Name', 'string', '0+'),
    F('FeatureLevel', 'int16', '0+'),
))

