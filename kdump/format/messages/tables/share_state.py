"""Share-group state records (`__share_group_state`): ShareSnapshot (type 0) and ShareUpdate (type 1).

Field facts of Kafka 4.3.0 (apache/kafka release commit a9ce3221537b, 2026-05-13)
share-coordinator/src/main/resources/common/message/*.json. Kafka 4.0 (share groups in preview)
had an incompatible layout at the same value version 0 (``uint16`` SnapshotEpoch, no timestamps);
those schemas are kept as ``*_V40`` from Kafka 4.0.0. ``DeliveryCompleteCount`` is new in 4.2.
"""

from __future__ import annotations

from kdump.format.messages.schema import F, M, NULL  # noqa: F401

SHARE_SNAPSHOT_KEY = M('ShareSnapshotKey', 0, '0', 'none', (
    F('GroupId', 'string', '0'),
    F('TopicId', 'uuid', '0'),
    F('Partition', 'int32', '0'),
))

_STATE_BATCH = (
    F('FirstOffset', 'int64', '0+'),
    F('LastOffset', 'int64', '0+'),
    F('DeliveryState', 'int8', '0+'),
    F('DeliveryCount', 'int16', '0+'),
)

SHARE_SNAPSHOT_VALUE = M('ShareSnapshotValue', 0, '0', '0+', (
    F('SnapshotEpoch', 'int32', '0+'),
    F('StateEpoch', 'int32', '0+'),
    F('LeaderEpoch', 'int32', '0+'),
    F('StartOffset', 'int64', '0+'),
    F('DeliveryCompleteCount', 'int32', '0+', tag=0, tagged='0+', default=-1),  # 4.2+
    F('CreateTimestamp', 'int64', '0+'),
    F('WriteTimestamp', 'int64', '0+'),
    F('StateBatches', '[]struct', '0+', struct='StateBatch', fields=_STATE_BATCH),
))

SHARE_UPDATE_KEY = M('ShareUpdateKey', 1, '0', 'none', (
    F('GroupId', 'string', '0'),
    F('TopicId', 'uuid', '0'),
    F('Partition', 'int32', '0'),
))

SHARE_UPDATE_VALUE = M('ShareUpdateValue', 1, '0', '0+', (
    F('SnapshotEpoch', 'int32', '0+'),
    F('LeaderEpoch', 'int32', '0+'),
    F('StartOffset', 'int64', '0+'),
    F('DeliveryCompleteCount', 'int32', '0+', tag=0, tagged='0+', default=-1),  # 4.2+
    F('StateBatches', '[]struct', '0+', struct='StateBatch', fields=_STATE_BATCH),
))

# -- Kafka 4.0 (share-coordinator/.../Share*Value.json @ 4.0.0) ------------------------------------------

_STATE_BATCH_V40 = (
    F('FirstOffset', 'int64', '0'),
    F('LastOffset', 'int64', '0'),
    F('DeliveryState', 'int8', '0'),
    F('DeliveryCount', 'int16', '0'),
)

SHARE_SNAPSHOT_VALUE_V40 = M('ShareSnapshotValue', 0, '0', '0+', (
    F('SnapshotEpoch', 'uint16', '0'),
    F('StateEpoch', 'int32', '0+'),
    F('LeaderEpoch', 'int32', '0+'),
    F('StartOffset', 'int64', '0'),
    F('StateBatches', '[]struct', '0', struct='StateBatch', fields=_STATE_BATCH_V40),
))

SHARE_UPDATE_VALUE_V40 = M('ShareUpdateValue', 1, '0', '0+', (
    F('SnapshotEpoch', 'uint16', '0'),
    F('LeaderEpoch', 'int32', '0+'),
    F('StartOffset', 'int64', '0'),
    F('StateBatches', '[]struct', '0', struct='StateBatch', fields=_STATE_BATCH_V40),
))
