"""KRaft metadata records (`__cluster_metadata`), api keys 14-29.

Transcribed from apache/kafka metadata/src/main/resources/common/metadata/*.json @ 1eb7644 (field facts only),
brought up to Kafka 4.3.0 (release commit a9ce3221537b): BrokerRegistrationChangeRecord v3
(``CordonedLogDirs``), ClearElrRecord (28, new in 4.0); UnregisterControllerRecord (29) is from the
unreleased 4.4 branch. ``tables.metadata`` hides record types a release does not know.
"""

from __future__ import annotations

from kdump.format.messages.schema import F, M, NULL  # noqa: F401

CLIENT_QUOTA_RECORD = M('ClientQuotaRecord', 14, '0', '0+', (
    F('Entity', '[]struct', '0+', struct='EntityData', fields=(
        F('EntityType', 'string', '0+'),
        F('EntityName', 'string', '0+', nullable='0+'),
    )),
    F('Key', 'string', '0+'),
    F('Value', 'float64', '0+'),
    F('Remove', 'bool', '0+'),
))

PRODUCER_IDS_RECORD = M('ProducerIdsRecord', 15, '0', '0+', (
    F('BrokerId', 'int32', '0+'),
    F('BrokerEpoch', 'int64', '0+', default=-1),
    F('NextProducerId', 'int64', '0+'),
))

BROKER_REGISTRATION_CHANGE_RECORD = M('BrokerRegistrationChangeRecord', 17, '0-3', '0+', (
    F('BrokerId', 'int32', '0+'),
    F('BrokerEpoch', 'int64', '0+'),
    F('Fenced', 'int8', '0+', tag=0, tagged='0+'),
    F('InControlledShutdown', 'int8', '1+', tag=1, tagged='1+'),
    F('LogDirs', '[]uuid', '2+', tag=2, tagged='2+'),
    F('CordonedLogDirs', '[]uuid', '3+', nullable='3+', tag=3, tagged='3+', default=NULL),  # 4.3+
))

ACCESS_CONTROL_ENTRY_RECORD = M('AccessControlEntryRecord', 18, '0', '0+', (
    F('Id', 'uuid', '0+'),
    F('ResourceType', 'int8', '0+'),
    F('ResourceName', 'string', '0+'),
    F('PatternType', 'int8', '0+'),
    F('Principal', 'string', '0+'),
    F('Host', 'string', '0+'),
    F('Operation', 'int8', '0+'),
    F('PermissionType', 'int8', '0+'),
))

REMOVE_ACCESS_CONTROL_ENTRY_RECORD = M('RemoveAccessControlEntryRecord', 19, '0', '0+', (
    F('Id', 'uuid', '0+'),
))

NO_OP_RECORD = M('NoOpRecord', 20, '0', '0+', (
))

ZK_MIGRATION_STATE_RECORD = M('ZkMigrationStateRecord', 21, '0', '0+', (
    F('ZkMigrationState', 'int8', '0+'),
))

REMOVE_USER_SCRAM_CREDENTIAL_RECORD = M('RemoveUserScramCredentialRecord', 22, '0', '0+', (
    F('Name', 'string', '0+'),
    F('Mechanism', 'int8', '0+'),
))

BEGIN_TRANSACTION_RECORD = M('BeginTransactionRecord', 23, '0', '0+', (
    F('Name', 'string', '0+', nullable='0+', tag=0, tagged='0+', default=NULL),
))

END_TRANSACTION_RECORD = M('EndTransactionRecord', 24, '0', '0+', (
))

ABORT_TRANSACTION_RECORD = M('AbortTransactionRecord', 25, '0', '0+', (
    F('Reason', 'string', '0+', nullable='0+', tag=0, tagged='0+', default=NULL),
))

REMOVE_DELEGATION_TOKEN_RECORD = M('RemoveDelegationTokenRecord', 26, '0', '0+', (
    F('TokenId', 'string', '0+'),
))

REGISTER_CONTROLLER_RECORD = M('RegisterControllerRecord', 27, '0', '0+', (
    F('ControllerId', 'int32', '0+'),
    F('IncarnationId', 'uuid', '0+'),
    F('ZkMigrationReady', 'bool', '0+'),
    F('EndPoints', '[]struct', '0+', struct='ControllerEndpoint', fields=(
        F('Name', 'string', '0+'),
        F('Host', 'string', '0+'),
        F('Port', 'uint16', '0+'),
        F('SecurityProtocol', 'int16', '0+'),
    )),
    F('Features', '[]struct', '0+', struct='ControllerFeature', fields=(
        F('Name', 'string', '0+'),
        F('MinSupportedVersion', 'int16', '0+'),
        F('MaxSupportedVersion', 'int16', '0+'),
    )),
))

CLEAR_ELR_RECORD = M('ClearElrRecord', 28, '0', '0+', (  # 4.0+
    F('TopicName', 'string', '0+'),
))

UNREGISTER_CONTROLLER_RECORD = M('UnregisterControllerRecord', 29, '0', '0+', (  # 4.4+
    F('ControllerId', 'int32', '0+'),
))
