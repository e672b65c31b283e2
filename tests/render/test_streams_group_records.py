"""Coordinator, metadata and remote-log records added or changed after Oct 2024, as Kafka 4.x prints them.

Inputs are built with kdump's encoder (and, for a few, byte by byte) from the field facts of
Kafka 4.3.0's JSON schemas; every expected string is written by hand from those schemas: field
order, names with the first letter lower-cased, tagged fields only when not their default, JSON
numbers for ints, Kafka Uuid text, ``null`` for nullable nulls. Per-release expectations follow
which record types and fields each release's serde knows (see ``tables.group_coordinator``).
"""

from __future__ import annotations

import struct

import pytest

from kdump.format.messages import tables
from kdump.format.messages.encode import coordinator_key, coordinator_value, metadata_record, uvarint
from kdump.render.dialect import LATEST_RELEASE
from kdump.render.internal_topics import (
    ClusterMetadataDecoder,
    OffsetsDecoder,
    RemoteLogMetadataDecoder,
    ShareGroupStateDecoder,
    TransactionLogDecoder,
)

TOPIC_ID = "Uj5wn_FqTXirEASvVZRY1w"
GC = tables.group_coordinator(LATEST_RELEASE)
NEWEST = tables.group_coordinator((4, 4))  # every field any release knows: inputs for the older ones too


def record(record_type: int, key: dict, value: dict | None, version: int = 0,
           registry: dict[int, tables.KeyValue] = NEWEST) -> tuple[bytes, bytes | None]:
    key_schema, value_schema = registry[record_type]
    key_bytes = coordinator_key(key_schema, record_type, key)
    return key_bytes, None if value is None else coordinator_value(value_schema, version, value)


def decode(record_type: int, key: dict, value: dict | None, kafka_version: tuple[int, int] = (4, 3),
           version: int = 0) -> tuple[str | None, str | None]:
    return OffsetsDecoder(kafka_version).decode(0, *record(record_type, key, value, version))


def value_json(data: str, version: int = 0) -> str:
    return '{"version":"%d","data":%s}' % (version, data)


# -- registries ----------------------------------------------------------------------------------------------

def test_record_types_per_release() -> None:
    assert sorted(OffsetsDecoder((3, 9)).registry) == list(range(9))  # 3.9 shipped unused share-group JSON
    assert sorted(tables.group_coordinator((4, 0))) == list(range(17))
    assert sorted(tables.group_coordinator((4, 3))) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16,
                                                        17, 19, 20, 21, 22, 23]
    names = {t: (k.name, v.name) for t, (k, v) in tables.group_coordinator((4, 3)).items()}
    assert names[0] == ("LegacyOffsetCommitKey", "LegacyOffsetCommitValue")
    assert names[1] == ("OffsetCommitKey", "OffsetCommitValue")
    assert names[16] == ("ConsumerGroupRegularExpressionKey", "ConsumerGroupRegularExpressionValue")
    assert [names[t][0] for t in (17, 19, 20, 21, 22, 23)] == [
        "StreamsGroupMetadataKey", "StreamsGroupMemberMetadataKey", "StreamsGroupTargetAssignmentMetadataKey",
        "StreamsGroupTargetAssignmentMemberKey", "StreamsGroupCurrentMemberAssignmentKey", "StreamsGroupTopologyKey"]
    assert tables.group_coordinator((4, 0))[0][0].name == "OffsetCommitKey"  # before 4.1, 0 and 1 shared it
    assert tables.group_coordinator((4, 0))[9][0].name == "ShareGroupPartitionMetadataKey"


@pytest.mark.parametrize("kafka_version, record_type", [((4, 3), 9), ((4, 3), 18), ((4, 0), 17), ((3, 9), 16),
                                                        ((3, 9), 10)])
def test_record_types_a_release_does_not_know(kafka_version: tuple[int, int], record_type: int) -> None:
    key = struct.pack(">h", record_type) + b"\x00\x01g"
    assert OffsetsDecoder(kafka_version).decode(4, key, struct.pack(">h", 0)) == (
        f"Unknown record type {record_type} at offset 4, skipping.", None)


# -- streams group records (17, 19-23) ------------------------------------------------------------------------

STREAMS_KEY = '{"type":"%d","data":{"groupId":"app"}}'
STREAMS_MEMBER_KEY = '{"type":"%d","data":{"groupId":"app","memberId":"m1"}}'


def test_streams_group_metadata_tagged_fields() -> None:
    key = {"GroupId": "app"}
    plain = {"Epoch": 5, "MetadataHash": 1234567890123}
    assert decode(17, key, plain) == (STREAMS_KEY % 17, value_json('{"epoch":5,"metadataHash":1234567890123}'))
    tagged = {**plain, "ValidatedTopologyEpoch": 3,
              "LastAssignmentConfigs": [{"Key": "num.standby.replicas", "Value": "1"}]}
    assert decode(17, key, tagged)[1] == value_json(
        '{"epoch":5,"metadataHash":1234567890123,"validatedTopologyEpoch":3,'
        '"lastAssignmentConfigs":[{"key":"num.standby.replicas","value":"1"}]}')
    # A nullable tagged array whose default is the empty array: null is not the default, so it prints.
    assert decode(17, key, {**plain, "LastAssignmentConfigs": None})[1] == value_json(
        '{"epoch":5,"metadataHash":1234567890123,"lastAssignmentConfigs":null}')
    # 4.1 knew neither tag (it skips them); 4.4 adds two more.
    assert decode(17, key, tagged, (4, 1))[1] == value_json('{"epoch":5,"metadataHash":1234567890123}')
    assert decode(17, key, {**plain, "StoredDescriptionTopologyEpoch": 2}, (4, 4))[1] == value_json(
        '{"epoch":5,"metadataHash":1234567890123,"storedDescriptionTopologyEpoch":2}')
    assert decode(17, key, {**plain, "StoredDescriptionTopologyEpoch": 2}, (4, 3))[1] == value_json(
        '{"epoch":5,"metadataHash":1234567890123}')


def test_streams_group_metadata_from_hand_made_bytes() -> None:
    """The tagged section written out by hand: count, then tag / size / data in tag order."""
    key = struct.pack(">h", 17) + struct.pack(">h", 3) + b"app"
    config = b"\x02" + b"\x02k" + b"\x02v" + b"\x00"  # compact array of 1, Key "k", Value "v", no tags
    value = (struct.pack(">h", 0) + struct.pack(">i", 7) + struct.pack(">q", -1)
             + b"\x02" + b"\x00\x04" + struct.pack(">i", 9) + b"\x01" + bytes([len(config)]) + config)
    assert OffsetsDecoder().decode(0, key, value) == (
        STREAMS_KEY % 17,
        value_json('{"epoch":7,"metadataHash":-1,"validatedTopologyEpoch":9,'
                   '"lastAssignmentConfigs":[{"key":"k","value":"v"}]}'))
    assert record(17, {"GroupId": "app"}, {"Epoch": 7, "MetadataHash": -1, "ValidatedTopologyEpoch": 9,
                                           "LastAssignmentConfigs": [{"Key": "k", "Value": "v"}]}) == (key, value)


def test_streams_group_member_metadata() -> None:
    value = {"InstanceId": None, "RackId": "rack1", "ClientId": "client", "ClientHost": "/127.0.0.1",
             "TopologyEpoch": 2, "ProcessId": "process", "UserEndpoint": {"Host": "localhost", "Port": 65535},
             "ClientTags": [{"Key": "zone", "Value": "a"}]}
    assert decode(19, {"GroupId": "app", "MemberId": "m1"}, value) == (
        STREAMS_MEMBER_KEY % 19,
        value_json('{"instanceId":null,"rackId":"rack1","clientId":"client","clientHost":"/127.0.0.1",'
                   '"rebalanceTimeoutMs":-1,"topologyEpoch":2,"processId":"process",'
                   '"userEndpoint":{"host":"localhost","port":65535},"clientTags":[{"key":"zone","value":"a"}]}'))
    # UserEndpoint defaults to null (a nullable struct, not tagged: always printed).
    assert decode(19, {"GroupId": "app", "MemberId": "m1"}, {"InstanceId": "i"})[1] == value_json(
        '{"instanceId":"i","rackId":"","clientId":"","clientHost":"","rebalanceTimeoutMs":-1,"topologyEpoch":0,'
        '"processId":"","userEndpoint":null,"clientTags":[]}')


def test_streams_group_member_metadata_hand_made_user_endpoint() -> None:
    """Non-flexible parts of a flexible struct: a nullable struct is one presence byte, uint16 is 2 bytes."""
    key = struct.pack(">h", 19) + struct.pack(">h", 3) + b"app" + struct.pack(">h", 2) + b"m1"
    value = (struct.pack(">h", 0) + b"\x00" + b"\x00" + b"\x02c" + b"\x02h" + struct.pack(">i", 100)
             + struct.pack(">i", 1) + b"\x02p" + b"\x01" + b"\x02e" + struct.pack(">H", 9092) + b"\x00"
             + b"\x01" + b"\x00")
    assert OffsetsDecoder().decode(0, key, value)[1] == value_json(
        '{"instanceId":null,"rackId":null,"clientId":"c","clientHost":"h","rebalanceTimeoutMs":100,'
        '"topologyEpoch":1,"processId":"p","userEndpoint":{"host":"e","port":9092},"clientTags":[]}')


def test_streams_group_target_assignment_metadata() -> None:
    key = {"GroupId": "app"}
    value = {"AssignmentEpoch": 7, "AssignmentTimestamp": 1700000000000}
    assert decode(20, key, value) == (
        STREAMS_KEY % 20, value_json('{"assignmentEpoch":7,"assignmentTimestamp":1700000000000}'))
    assert decode(20, key, value, (4, 2))[1] == value_json('{"assignmentEpoch":7}')
    assert decode(20, key, {"AssignmentEpoch": 7})[1] == value_json('{"assignmentEpoch":7}')


def test_streams_group_target_assignment_member() -> None:
    value = {"ActiveTasks": [{"SubtopologyId": "0", "Partitions": [0, 1]}],
             "StandbyTasks": [{"SubtopologyId": "1", "Partitions": [2]}]}
    assert decode(21, {"GroupId": "app", "MemberId": "m1"}, value) == (
        STREAMS_MEMBER_KEY % 21,
        value_json('{"activeTasks":[{"subtopologyId":"0","partitions":[0,1]}],'
                   '"standbyTasks":[{"subtopologyId":"1","partitions":[2]}],"warmupTasks":[]}'))


def test_streams_group_current_member_assignment() -> None:
    value = {"MemberEpoch": 3, "PreviousMemberEpoch": 2, "State": 1,
             "ActiveTasks": [{"SubtopologyId": "0", "Partitions": [0, 1], "AssignmentEpochs": [3, 2]}],
             "StandbyTasks": [{"SubtopologyId": "1", "Partitions": [1]}],
             "ActiveTasksPendingRevocation": [{"SubtopologyId": "2", "Partitions": [5], "AssignmentEpochs": None}]}
    expected = ('{"memberEpoch":3,"previousMemberEpoch":2,"state":1,'
                '"activeTasks":[{"subtopologyId":"0","partitions":[0,1],"assignmentEpochs":[3,2]}],'
                '"standbyTasks":[{"subtopologyId":"1","partitions":[1]}],"warmupTasks":[],'
                '"activeTasksPendingRevocation":[{"subtopologyId":"2","partitions":[5],"assignmentEpochs":null}],'
                '"standbyTasksPendingRevocation":[],"warmupTasksPendingRevocation":[]}')
    assert decode(22, {"GroupId": "app", "MemberId": "m1"}, value) == (STREAMS_MEMBER_KEY % 22, value_json(expected))
    # 4.1 skips the tagged assignmentEpochs.
    assert decode(22, {"GroupId": "app", "MemberId": "m1"}, value, (4, 1))[1] == value_json(
        expected.replace(',"assignmentEpochs":[3,2]', "").replace(',"assignmentEpochs":null', ""))


def test_streams_group_topology() -> None:
    changelog = {"Name": "app-store-changelog", "Partitions": 0, "ReplicationFactor": -1,
                 "TopicConfigs": [{"key": "cleanup.policy", "value": "compact"}]}
    repartition = {"Name": "app-repartition", "Partitions": 4, "ReplicationFactor": 3}
    value = {"Epoch": 1, "Subtopologies": [{
        "SubtopologyId": "0", "SourceTopics": ["input"], "StateChangelogTopics": [changelog],
        "RepartitionSinkTopics": ["app-repartition"]}, {
        "SubtopologyId": "1", "SourceTopicRegex": ["in.*"], "RepartitionSourceTopics": [repartition],
        "CopartitionGroups": [{"SourceTopics": [0], "RepartitionSourceTopics": [0, 1]}]}]}
    assert decode(23, {"GroupId": "app"}, value) == (STREAMS_KEY % 23, value_json(
        '{"epoch":1,"subtopologies":['
        '{"subtopologyId":"0","sourceTopics":["input"],"sourceTopicRegex":[],"stateChangelogTopics":'
        '[{"name":"app-store-changelog","partitions":0,"replicationFactor":-1,'
        '"topicConfigs":[{"key":"cleanup.policy","value":"compact"}]}],'
        '"repartitionSinkTopics":["app-repartition"],"repartitionSourceTopics":[],"copartitionGroups":[]},'
        '{"subtopologyId":"1","sourceTopics":[],"sourceTopicRegex":["in.*"],"stateChangelogTopics":[],'
        '"repartitionSinkTopics":[],"repartitionSourceTopics":[{"name":"app-repartition","partitions":4,'
        '"replicationFactor":3,"topicConfigs":[]}],'
        '"copartitionGroups":[{"sourceTopics":[0],"sourceTopicRegex":[],"repartitionSourceTopics":[0,1]}]}]}'))


def test_streams_group_tombstone_and_unknown_value_version() -> None:
    assert decode(23, {"GroupId": "app"}, None) == (STREAMS_KEY % 23, "<DELETE>")
    assert decode(17, {"GroupId": "app"}, {"Epoch": 1}, version=1) == (
        "Error at offset 0, skipping. Found an unknown record version 1 for 17 type", None)


# -- consumer group records: regular expressions (16) and the fields added in 4.1 / 4.3 -----------------------

def test_consumer_group_regular_expression() -> None:
    key = {"GroupId": "g", "RegularExpression": "foo.*"}
    value = {"Topics": ["foo1", "foo2"], "Version": 10, "Timestamp": 1234}
    expected = ('{"type":"16","data":{"groupId":"g","regularExpression":"foo.*"}}',
                value_json('{"topics":["foo1","foo2"],"version":10,"timestamp":1234}'))
    assert decode(16, key, value) == expected
    assert decode(16, key, value, (4, 0)) == expected


def test_offset_commit_records_since_4_1() -> None:
    key = {"group": "g", "topic": "t", "partition": 3}
    key_json = '{"type":"%d","data":{"group":"g","topic":"t","partition":3}}'
    # Record type 0 is LegacyOffsetCommit (value version 0 only) ...
    assert decode(0, key, {"offset": 1, "metadata": "m", "commitTimestamp": 2}) == (
        key_json % 0, value_json('{"offset":1,"metadata":"m","commitTimestamp":2}'))
    raw_key = coordinator_key(GC[0][0], 0, key)
    v1 = coordinator_value(GC[1][1], 1, {"offset": 1, "commitTimestamp": 2, "expireTimestamp": 3})
    assert OffsetsDecoder().decode(8, raw_key, v1) == (
        "Error at offset 8, skipping. Found an unknown record version 1 for 0 type", None)
    # ... where 4.0 read both 0 and 1 as OffsetCommit.
    assert OffsetsDecoder((4, 0)).decode(8, raw_key, v1) == (
        key_json % 0, value_json('{"offset":1,"metadata":"","commitTimestamp":2,"expireTimestamp":3}', 1))
    # OffsetCommitValue v4 has a tagged topicId (4.1+).
    v4 = {"offset": 42, "commitTimestamp": 5, "topicId": TOPIC_ID}
    assert decode(1, key, v4, version=4) == (key_json % 1, value_json(
        f'{{"offset":42,"leaderEpoch":-1,"metadata":"","commitTimestamp":5,"topicId":"{TOPIC_ID}"}}', 4))
    assert decode(1, key, v4, (4, 0), version=4)[1] == value_json(
        '{"offset":42,"leaderEpoch":-1,"metadata":"","commitTimestamp":5}', 4)


def test_offset_commit_value_version_check_is_4_0_and_later() -> None:
    raw_key = coordinator_key(GC[1][0], 1, {"group": "g", "topic": "t", "partition": 0})
    v5 = coordinator_value(GC[1][1], 5, {"offset": 1})
    assert OffsetsDecoder((4, 0)).decode(2, raw_key, v5) == (
        "Error at offset 2, skipping. Found an unknown record version 5 for 1 type", None)
    # 3.8/3.9 read any version: the fields of versions 0+ / 3+ / 4+ and the tagged section.
    assert OffsetsDecoder((3, 9)).decode(2, raw_key, v5)[1] == value_json(
        '{"offset":1,"leaderEpoch":-1,"metadata":"","commitTimestamp":0}', 5)


def test_consumer_group_metadata_hash() -> None:
    value = {"Epoch": 10, "MetadataHash": 77}
    assert decode(3, {"GroupId": "g"}, value)[1] == value_json('{"epoch":10,"metadataHash":77}')
    assert decode(3, {"GroupId": "g"}, {"Epoch": 10})[1] == value_json('{"epoch":10}')
    assert decode(3, {"GroupId": "g"}, value, (4, 0))[1] == value_json('{"epoch":10}')


def test_consumer_group_assignment_fields_of_4_3() -> None:
    meta = decode(6, {"GroupId": "g"}, {"AssignmentEpoch": 4, "AssignmentTimestamp": 99})
    assert meta == ('{"type":"6","data":{"groupId":"g"}}', value_json('{"assignmentEpoch":4,"assignmentTimestamp":99}'))
    value = {"MemberEpoch": 4, "PreviousMemberEpoch": 3, "State": 0,
             "AssignedPartitions": [{"TopicId": TOPIC_ID, "Partitions": [0, 1], "AssignmentEpochs": [4, 3]}],
             "PartitionsPendingRevocation": [{"TopicId": TOPIC_ID, "Partitions": [2]}]}
    expected = ('{"memberEpoch":4,"previousMemberEpoch":3,"state":0,'
                f'"assignedPartitions":[{{"topicId":"{TOPIC_ID}","partitions":[0,1],"assignmentEpochs":[4,3]}}],'
                f'"partitionsPendingRevocation":[{{"topicId":"{TOPIC_ID}","partitions":[2]}}]}}')
    assert decode(8, {"GroupId": "g", "MemberId": "m"}, value) == (
        '{"type":"8","data":{"groupId":"g","memberId":"m"}}', value_json(expected))
    assert decode(8, {"GroupId": "g", "MemberId": "m"}, value, (4, 2))[1] == value_json(
        expected.replace(',"assignmentEpochs":[4,3]', ""))


# -- share group records in __consumer_offsets: the 4.0 preview and 4.1+ ----------------------------------------

def test_share_group_records_since_4_1() -> None:
    assert decode(11, {"GroupId": "s"}, {"Epoch": 3, "MetadataHash": 9}) == (
        '{"type":"11","data":{"groupId":"s"}}', value_json('{"epoch":3,"metadataHash":9}'))
    value = {"InitializingTopics": [{"TopicId": TOPIC_ID, "TopicName": "a", "Partitions": [0]}],
             "DeletingTopics": [{"TopicId": TOPIC_ID, "TopicName": "b"}]}
    assert decode(15, {"GroupId": "s"}, value)[1] == value_json(
        f'{{"initializingTopics":[{{"topicId":"{TOPIC_ID}","topicName":"a","partitions":[0]}}],'
        f'"initializedTopics":[],"deletingTopics":[{{"topicId":"{TOPIC_ID}","topicName":"b"}}]}}')
    assert decode(12, {"GroupId": "s"}, {"AssignmentEpoch": 1, "AssignmentTimestamp": 5})[1] == value_json(
        '{"assignmentEpoch":1,"assignmentTimestamp":5}')


def test_share_group_records_of_4_0() -> None:
    gc40 = tables.group_coordinator((4, 0))
    d = OffsetsDecoder((4, 0))
    assert d.decode(0, *record(11, {"GroupId": "s"}, {"Epoch": 3}, registry=gc40)) == (
        '{"type":"11","data":{"groupId":"s"}}', value_json('{"epoch":3}'))
    topics = {"Topics": [{"TopicId": TOPIC_ID, "TopicName": "a", "NumPartitions": 1,
                          "PartitionMetadata": [{"Partition": 0, "Racks": ["r1"]}]}]}
    assert d.decode(0, *record(9, {"GroupId": "s"}, topics, registry=gc40)) == (
        '{"type":"9","data":{"groupId":"s"}}',
        value_json(f'{{"topics":[{{"topicId":"{TOPIC_ID}","topicName":"a","numPartitions":1,'
                   '"partitionMetadata":[{"partition":0,"racks":["r1"]}]}]}'))
    state = {"InitializedTopics": [{"TopicId": TOPIC_ID, "TopicName": "a", "Partitions": [0]}]}
    assert d.decode(0, *record(15, {"GroupId": "s"}, state, registry=gc40))[1] == value_json(
        f'{{"initializedTopics":[{{"topicId":"{TOPIC_ID}","topicName":"a","partitions":[0]}}],"deletingTopics":[]}}')


# -- __share_group_state (4.1+ layout) ------------------------------------------------------------------------

SHARE_KEY = '{"type":"%d","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}'
BATCH = {"FirstOffset": 0, "LastOffset": 4, "DeliveryState": 2, "DeliveryCount": 1}
BATCH_JSON = '[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]'


def test_share_group_state_values_since_4_1() -> None:
    ss = tables.share_state(LATEST_RELEASE)
    key = {"GroupId": "gs1", "TopicId": TOPIC_ID, "Partition": 0}
    snapshot = {"SnapshotEpoch": 70000, "StateEpoch": 1, "LeaderEpoch": 2, "StartOffset": 10,
                "DeliveryCompleteCount": 5, "CreateTimestamp": 100, "WriteTimestamp": 200, "StateBatches": [BATCH]}
    assert ShareGroupStateDecoder().decode(0, *record(0, key, snapshot, registry=ss)) == (
        SHARE_KEY % 0,
        value_json('{"snapshotEpoch":70000,"stateEpoch":1,"leaderEpoch":2,"startOffset":10,"deliveryCompleteCount":5,'
                   f'"createTimestamp":100,"writeTimestamp":200,"stateBatches":{BATCH_JSON}}}'))
    assert ShareGroupStateDecoder((4, 1)).decode(0, *record(0, key, snapshot, registry=ss))[1] == value_json(
        '{"snapshotEpoch":70000,"stateEpoch":1,"leaderEpoch":2,"startOffset":10,'
        f'"createTimestamp":100,"writeTimestamp":200,"stateBatches":{BATCH_JSON}}}')
    update = {"SnapshotEpoch": 1, "LeaderEpoch": 2, "StartOffset": 10, "StateBatches": [BATCH]}
    assert ShareGroupStateDecoder().decode(0, *record(1, key, update, registry=ss)) == (
        SHARE_KEY % 1,
        value_json(f'{{"snapshotEpoch":1,"leaderEpoch":2,"startOffset":10,"stateBatches":{BATCH_JSON}}}'))


# -- __transaction_state: NextProducerEpoch (4.1+) ---------------------------------------------------------------

def test_transaction_log_next_producer_epoch() -> None:
    key_schema, value_schema = tables.transaction_log(LATEST_RELEASE)[0]
    key = coordinator_key(key_schema, 0, {"TransactionalId": "tx"})
    value = coordinator_value(value_schema, 1, {"ProducerId": 7, "ProducerEpoch": 1, "NextProducerEpoch": 2,
                                                "TransactionPartitions": None})
    assert TransactionLogDecoder((4, 3)).decode(0, key, value) == (
        '{"type":"0","data":{"transactionalId":"tx"}}',
        value_json('{"producerId":7,"producerEpoch":1,"nextProducerEpoch":2,"transactionTimeoutMs":0,'
                   '"transactionStatus":0,"transactionPartitions":null,"transactionLastUpdateTimestampMs":0,'
                   '"transactionStartTimestampMs":0}', 1))


# -- __cluster_metadata -------------------------------------------------------------------------------------------

MD = tables.metadata((4, 4))


def test_cluster_metadata_clear_elr_record() -> None:
    raw = metadata_record(MD[28], 0, {"TopicName": "t"})
    assert ClusterMetadataDecoder().decode(0, None, raw) == (
        None, '{"type":"CLEAR_ELR_RECORD","version":0,"data":{"topicName":"t"}}')
    assert ClusterMetadataDecoder((3, 9)).decode(0, None, raw) == (
        None, "Error at 0, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: "
              "Unknown metadata id 28")
    unregister = uvarint(1) + uvarint(29) + uvarint(0) + b"\x00\x00\x00\x01\x00"  # 4.4: ControllerId 1, no tags
    assert ClusterMetadataDecoder((4, 3)).decode(0, None, unregister)[1] == (
        "Error at 0, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 29")
    assert ClusterMetadataDecoder((4, 4)).decode(0, None, unregister)[1] == (
        '{"type":"UNREGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":1}}')


def test_cluster_metadata_cordoned_log_dirs() -> None:
    d = ClusterMetadataDecoder()
    change = metadata_record(MD[17], 3, {"BrokerId": 1, "BrokerEpoch": 5, "CordonedLogDirs": [TOPIC_ID]})
    assert d.decode(0, None, change)[1] == (
        '{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":3,"data":{"brokerId":1,"brokerEpoch":5,'
        f'"cordonedLogDirs":["{TOPIC_ID}"]}}}}')
    # Its default is null, so an empty (non-null) list is not the default and prints.
    empty = metadata_record(MD[17], 3, {"BrokerId": 1, "BrokerEpoch": 5, "CordonedLogDirs": []})
    assert d.decode(0, None, empty)[1].endswith('"brokerEpoch":5,"cordonedLogDirs":[]}}')
    assert d.decode(0, None, metadata_record(MD[17], 3, {"BrokerId": 1, "BrokerEpoch": 5}))[1].endswith(
        '"brokerEpoch":5}}')


def test_cluster_metadata_null_default_tagged_arrays() -> None:
    """PartitionChangeRecord's tagged arrays default to null: an empty list in the record is printed."""
    raw = metadata_record(MD[5], 0, {"PartitionId": 0, "TopicId": TOPIC_ID, "Isr": []})
    assert ClusterMetadataDecoder().decode(0, None, raw)[1] == (
        f'{{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{{"partitionId":0,"topicId":"{TOPIC_ID}",'
        '"isr":[]}}')


# -- __remote_log_metadata: TxnIndexEmpty (4.0+) ----------------------------------------------------------------

def test_remote_log_snapshot_with_txn_index_flag() -> None:
    segment = "AAAAAAAAAAAAAAAAAAAAAQ"
    raw = metadata_record(tables.remote_log(LATEST_RELEASE)[3], 0, {
        "SegmentId": segment, "StartOffset": 0, "EndOffset": 9, "SegmentLeaderEpochs": [{"LeaderEpoch": 0,
                                                                                         "Offset": 0}],
        "SegmentSizeInBytes": 100, "RemoteLogSegmentState": 1, "TxnIndexEmpty": True})
    assert RemoteLogMetadataDecoder().decode(0, None, raw)[1] == (
        f"RemoteLogSegmentMetadataSnapshot{{segmentId={segment}, startOffset=0, endOffset=9, maxTimestampMs=0, "
        "segmentLeaderEpochs={0=0}, segmentSizeInBytes=100, customMetadata=Optional.empty, "
        "state=COPY_SEGMENT_FINISHED, txnIdxEmpty=true}")
