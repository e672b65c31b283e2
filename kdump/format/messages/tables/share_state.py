"""Share-group state records (`__share_group_state`): ShareSnapshot (type 0) and ShareUpdate (type 1).

Transcribed from apache/kafka share-coordinator/src/main/resources/common/message/*.json @ 1eb7644 (field facts only).
"""

from __future__ import annotations

from kdump.format.messages.schema import F, M, NULL  # noqa: F401

SHARE_SNAPSHOT_KEY = M('ShareSnapshotKey', 0, '0', 'none', (
    F('GroupId', 'string', '0'),
    F('TopicId', 'uuid', '0'),
    F('Partition', 'int32', '0'),
))

SHARE_SNAPSHOT_VALUE = M('ShareSnapshotValue', 0, '0', '0+', (
    F('SnapshotEpoch', 'uint16', '0'),
    F('StateEpoch', 'int32', '0+'),
    F('LeaderEpoch', 'int32', '0+'),
    F('StartOffset', 'int64', '0'),
    F('StateBatches', '[]struct', '0', struct='StateBatch', fields=(
        F('FirstOffset', 'int64', '0'),
        F('LastOffset', 'int64', '0'),
        F('DeliveryState', 'int8', '0'),
        F('DeliveryCount', 'int16', '0'),
    )),
))

SHARE_UPDATE_KEY = M('ShareUpdateKey', 1, '1', 'none', (
    F('GroupId', 'string', '1'),
    F('TopicId', 'uuid', '1'),
    F('Partition', 'int32', '1'),
))

SHARE_UPDATE_VALUE = M('ShareUpdateValue', 1, '0', '0+', (
    F('SnapshotEpoch', 'uint16', '0'),
    F('LeaderEpoch', 'int32', '0+'),
    F('StartOffset', 'int64', '0'),
    F('StateBatches', '[]struct', '0', struct='StateBatch', fields=(
        F('FirstOffset', 'int64', '0'),
        F('LastOffset', 'int64', '0'),
        F('DeliveryState', 'int8', '0'),
        F('DeliveryCount', 'int16', '0'),
    )),
))

