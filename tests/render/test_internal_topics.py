"""Internal-topic decoders and KRaft control-record text, against Kafka's own expected strings.

Inputs are built from the schema tables with kdump's encoder; the expected strings are the ones
asserted by Kafka's DumpLogSegmentsTest (testDumpMetadataRecords,
testDumpMetadataSnapshot, testDumpControlRecord, testDumpRemoteLogMetadata*, testOffsetsMessageParser,
testTransactionLogMessageParser, testShareGroupStateMessageParser).
"""

from __future__ import annotations

import struct

import pytest

from kdump.errors import InvalidRecordError
from kdump.format.messages import tables
from kdump.format.messages.encode import (
    control_value,
    coordinator_key,
    coordinator_value,
    metadata_record,
    uvarint,
    write_message,
)
from kdump.render.dialect import LATEST_RELEASE
from kdump.render.internal_topics import (
    ClusterMetadataDecoder,
    OffsetsDecoder,
    RemoteLogMetadataDecoder,
    ShareGroupStateDecoder,
    TransactionLogDecoder,
    control_record_text,
)

GC = tables.group_coordinator(LATEST_RELEASE)
TOPIC_ID = "Uj5wn_FqTXirEASvVZRY1w"


def gc_record(record_type: int, key: dict, value: dict | None, value_version: int = 0,
              value_type: int | None = None) -> tuple[bytes, bytes | None]:
    key_bytes = coordinator_key(GC[record_type][0], record_type, key)
    if value is None:
        return key_bytes, None
    schema = GC[record_type if value_type is None else value_type][1]
    return key_bytes, coordinator_value(schema, value_version, value)


# -- row 18: offsets decoder ---------------------------------------------------------------------------------

def test_offsets_missing_key_message_per_version() -> None:
    # DumpLogSegments.scala: "offset topic decoder" at 4.0.0, "the specified decoder" from 4.1.0 (not 4.3 as
    # the spec says; docs/dialects-research.md).
    with pytest.raises(InvalidRecordError) as s:
        OffsetsDecoder((4, 0)).decode(0, None, None)
    assert s.value.reason == "Failed to decode message at offset 0 using offset topic decoder (message had a missing key)"
    with pytest.raises(InvalidRecordError) as j:
        OffsetsDecoder((4, 1)).decode(7, None, b"x")
    assert j.value.reason == "Failed to decode message at offset 7 using the specified decoder (message had a missing key)"
    with pytest.raises(InvalidRecordError) as old:
        OffsetsDecoder((3, 7)).decode(0, None, None)
    assert old.value.reason == "Failed to decode message using offset topic decoder (message had a missing key)"


def test_offsets_consumer_group_metadata() -> None:
    assert OffsetsDecoder().decode(0, *gc_record(3, {"groupId": "group"}, {"epoch": 10})) == (
        '{"type":"3","data":{"groupId":"group"}}', '{"version":"0","data":{"epoch":10}}')


def test_offsets_consumer_group_member_of_the_consumer_protocol() -> None:
    """A KIP-848 member's record as a real 4.3.0 broker wrote it (fixtures/real-groups/4.3.0, offset 5 of
    __consumer_offsets-0), and the line the real DumpLogSegments 4.3.0 printed for it: ClassicMemberMetadata
    is a tagged null (tag 0, size 1, varint marker 0), which kdump read as a byte marker until then."""
    key = bytes.fromhex("0005000e6b64756d702d636f6e73756d65720016632d616b766f2d53513357597239476d614144664e51")
    value = bytes.fromhex("000000001a636f6e73756d65722d6b64756d702d636f6e73756d65722d320b2f3132372e302e302e3103"
                          "066772702d61066772702d6201000493e00001000100")
    assert OffsetsDecoder((4, 3)).decode(5, key, value) == (
        '{"type":"5","data":{"groupId":"kdump-consumer","memberId":"c-akvo-SQ3WYr9GmaADfNQ"}}',
        '{"version":"0","data":{"instanceId":null,"rackId":null,"clientId":"consumer-kdump-consumer-2",'
        '"clientHost":"/127.0.0.1","subscribedTopicNames":["grp-a","grp-b"],"subscribedTopicRegex":"",'
        '"rebalanceTimeoutMs":300000,"serverAssignor":null,"classicMemberMetadata":null}}')


def _group_metadata(subscription: bytes, assignment: bytes) -> tuple[bytes, bytes | None]:
    member = {"memberId": "member", "clientId": "client", "clientHost": "host", "groupInstanceId": "instance",
              "sessionTimeout": 100, "rebalanceTimeout": 1000, "subscription": subscription, "assignment": assignment}
    value = {"protocolType": "consumer", "protocol": "range", "leader": "member", "generation": 10,
             "members": [member]}
    return gc_record(2, {"group": "group"}, value, value_version=4)


GROUP_PREFIX = ('{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
                '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
                '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
                '"rebalanceTimeout":1000,"sessionTimeout":100,')


def test_offsets_group_metadata_expands_consumer_protocol() -> None:
    sub = struct.pack(">h", 3) + write_message(tables.consumer_protocol(LATEST_RELEASE)[0], {
        "topics": ["foo"], "userData": None, "ownedPartitions": [{"topic": "foo", "partitions": [0]}],
        "generationId": 0, "rackId": "rack"}, 3)
    asg = struct.pack(">h", 3) + write_message(tables.consumer_protocol(LATEST_RELEASE)[1], {
        "assignedPartitions": [{"topic": "foo", "partitions": [0]}]}, 3)
    assert OffsetsDecoder().decode(0, *_group_metadata(sub, asg)) == (
        '{"type":"2","data":{"group":"group"}}',
        GROUP_PREFIX + '"subscription":{"topics":["foo"],"userData":null,"ownedPartitions":[{"topic":"foo",'
        '"partitions":[0]}],"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":'
        '[{"topic":"foo","partitions":[0]}],"userData":null}}]}}')


def test_offsets_group_metadata_keeps_malformed_protocol_as_base64() -> None:
    assert OffsetsDecoder().decode(0, *_group_metadata(b"Subscription", b"Assignment"))[1] == (
        GROUP_PREFIX + '"subscription":"U3Vic2NyaXB0aW9u","assignment":"QXNzaWdubWVudA=="}]}}')


def test_offsets_tombstone_unknown_type_and_error() -> None:
    d = OffsetsDecoder()
    assert d.decode(0, *gc_record(3, {"groupId": "group"}, None)) == (
        '{"type":"3","data":{"groupId":"group"}}', "<DELETE>")
    unknown_key = struct.pack(">h", 32767) + b"\x00\x05group"
    assert d.decode(0, unknown_key, coordinator_value(GC[3][1], 0, {"epoch": 10})) == (
        "Unknown record type 32767 at offset 0, skipping.", None)
    # A ConsumerGroupMemberMetadataValue where a ConsumerGroupMetadataValue belongs.
    assert d.decode(0, *gc_record(3, {"groupId": "group"}, {}, value_type=5)) == (
        "Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: "
        "Error reading byte array of 536870911 byte(s): only 1 byte(s) available.", None)


def test_offsets_legacy_strings() -> None:
    d = OffsetsDecoder((3, 7))
    key, value = gc_record(1, {"group": "g", "topic": "t", "partition": 3}, {"offset": 42, "metadata": ""},
                           value_version=3)
    assert d.decode(5, key, value) == ("offset_commit::group=g,partition=t-3", "offset=42")
    value = coordinator_value(GC[1][1], 1, {"offset": 42, "metadata": "m"})
    assert d.decode(5, key, value) == ("offset_commit::group=g,partition=t-3", "offset=42,metadata=m")
    assert d.decode(5, key, None) == ("offset_commit::group=g,partition=t-3", "<DELETE>")
    asg = struct.pack(">h", 0) + write_message(tables.consumer_protocol(LATEST_RELEASE)[1], {
        "assignedPartitions": [{"topic": "t", "partitions": [0, 1]}], "userData": b"\x01\xab"}, 0)
    assert d.decode(0, *_group_metadata(b"", asg)) == (
        "group_metadata::group=group",
        '{"protocolType":"consumer","protocol":"range","generationId":10,"assignment":"{member=[t-0, t-1]:1AB}"}')
    assert d.decode(0, *gc_record(3, {"groupId": "g"}, None)) == ("unknown::version=3", None)


# -- row 19: transaction log -----------------------------------------------------------------------------

TXN_KEY, TXN_VALUE = tables.transaction_log(LATEST_RELEASE)[0]


def test_transaction_log_json() -> None:
    d = TransactionLogDecoder((4, 1))  # JSON from 4.1.0; 4.0.0 still printed transaction_metadata::...
    key = coordinator_key(TXN_KEY, 0, {"transactionalId": "txnId"})
    v0 = coordinator_value(TXN_VALUE, 0, {"producerId": 123, "transactionPartitions": []})
    assert d.decode(0, key, v0) == (
        '{"type":"0","data":{"transactionalId":"txnId"}}',
        '{"version":"0","data":{"producerId":123,"producerEpoch":0,"transactionTimeoutMs":0,"transactionStatus":0,'
        '"transactionPartitions":[],"transactionLastUpdateTimestampMs":0,"transactionStartTimestampMs":0}}')
    v1 = coordinator_value(TXN_VALUE, 1, {"producerId": 12, "previousProducerId": 11, "nextProducerId": 13,
                                          "producerEpoch": 2, "transactionStatus": 4,
                                          "transactionPartitions": [{"topic": "t", "partitionIds": [0, 1]}]})
    assert d.decode(0, key, v1)[1] == (
        '{"version":"1","data":{"producerId":12,"previousProducerId":11,"nextProducerId":13,"producerEpoch":2,'
        '"transactionTimeoutMs":0,"transactionStatus":4,"transactionPartitions":[{"topic":"t","partitionIds":[0,1]}],'
        '"transactionLastUpdateTimestampMs":0,"transactionStartTimestampMs":0}}')
    assert '"transactionStatus":"CompleteCommit"' in TransactionLogDecoder((4, 4)).decode(0, key, v1)[1]
    unknown = coordinator_value(TXN_VALUE, 1, {"producerId": 12, "transactionStatus": 9, "transactionPartitions": []})
    assert '"transactionStatus":"9"' in TransactionLogDecoder((4, 4)).decode(0, key, unknown)[1]
    assert '"transactionStatus":9' in d.decode(0, key, unknown)[1]
    assert TransactionLogDecoder((4, 0)).decode(0, key, v0)[0] == "transaction_metadata::transactionalId=txnId"
    assert d.decode(0, key, None) == ('{"type":"0","data":{"transactionalId":"txnId"}}', "<DELETE>")
    assert d.decode(0, struct.pack(">h", 32767), v0) == ("Unknown record type 32767 at offset 0, skipping.", None)
    with pytest.raises(InvalidRecordError, match="using the specified decoder"):
        TransactionLogDecoder((4, 3)).decode(0, None, v0)


def test_transaction_log_legacy_string() -> None:
    d = TransactionLogDecoder((3, 9))
    key = coordinator_key(TXN_KEY, 0, {"transactionalId": "txnId"})
    value = coordinator_value(TXN_VALUE, 0, {"producerId": 7, "producerEpoch": 1, "transactionTimeoutMs": 60000,
                                             "transactionStatus": 1, "transactionLastUpdateTimestampMs": 99,
                                             "transactionPartitions": [{"topic": "t", "partitionIds": [0]}]})
    assert d.decode(0, key, value) == (
        "transaction_metadata::transactionalId=txnId",
        "producerId:7,producerEpoch:1,state=Ongoing,partitions=[t-0],txnLastUpdateTimestamp=99,txnTimeoutMs=60000")
    assert d.decode(0, key, None)[1] == "<DELETE>"
    assert d.decode(0, struct.pack(">h", 5) + b"\x00\x00", None) == ("unknown::version=5", None)


# -- row 20: share group state -----------------------------------------------------------------------------

SS = tables.share_state(LATEST_RELEASE)
SS40 = tables.share_state((4, 0))  # the preview layout of Kafka 4.0 (uint16 snapshotEpoch, no timestamps)
BATCH = {"firstOffset": 0, "lastOffset": 4, "deliveryState": 2, "deliveryCount": 1}
SHARE_KEY = '{"type":"%d","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}'


# 3.9 had no share-group state decoder: kdump reads 4.0's records there. 4.1+: below.
@pytest.mark.parametrize("kafka_version, envelope", [((4, 0), "type"), ((3, 9), "type")])
def test_share_group_state(kafka_version: tuple[int, int], envelope: str) -> None:
    d = ShareGroupStateDecoder(kafka_version)
    key0 = coordinator_key(SS40[0][0], 0, {"groupId": "gs1", "topicId": TOPIC_ID, "partition": 0})
    snap = coordinator_value(SS40[0][1], 0, {"stateBatches": [BATCH]})
    assert d.decode(0, key0, snap) == (
        SHARE_KEY % 0, '{"%s":"0","data":{"snapshotEpoch":0,"stateEpoch":0,"leaderEpoch":0,"startOffset":0,'
        '"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}' % envelope)
    key1 = coordinator_key(SS40[1][0], 1, {"groupId": "gs1", "topicId": TOPIC_ID, "partition": 0})
    upd = coordinator_value(SS40[1][1], 0, {"stateBatches": [BATCH]})
    assert d.decode(0, key1, upd) == (
        SHARE_KEY % 1, '{"%s":"0","data":{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":0,'
        '"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}' % envelope)
    assert d.decode(0, key0, None) == (SHARE_KEY % 0, "<DELETE>")
    assert d.decode(0, struct.pack(">h", 32767) + key0[2:], snap) == (
        "Unknown record type 32767 at offset 0, skipping.", None)
    wrong = coordinator_value(SS40[0][1], 0, {})  # a snapshot value where an update value belongs
    assert d.decode(0, key1, wrong) == (
        "Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: "
        "non-nullable field stateBatches was serialized as null.", None)


def test_share_group_state_missing_key() -> None:
    with pytest.raises(InvalidRecordError) as info:
        ShareGroupStateDecoder((4, 0)).decode(0, None, None)
    assert info.value.reason == ("Failed to decode message at offset 0 using share group state topic decoder "
                                 "(message had a missing key)")
    with pytest.raises(InvalidRecordError, match="at offset 3 using the specified decoder"):
        ShareGroupStateDecoder((4, 1)).decode(3, None, None)


def test_share_group_state_value_envelope_is_version_from_4_1() -> None:
    key0 = coordinator_key(SS[0][0], 0, {"groupId": "gs1", "topicId": TOPIC_ID, "partition": 0})
    snap = coordinator_value(SS[0][1], 0, {"stateBatches": [BATCH]})
    key_text, value_text = ShareGroupStateDecoder((4, 1)).decode(0, key0, snap)
    assert key_text == SHARE_KEY % 0
    assert value_text.startswith('{"version":"0","data":{"snapshotEpoch":0,')


# -- rows 7-9: cluster metadata and control records -------------------------------------------------------

MD = tables.metadata((4, 4))


def test_cluster_metadata_records() -> None:
    d = ClusterMetadataDecoder()
    broker = metadata_record(MD[0], 3, {"brokerId": 1, "brokerEpoch": 7, "rack": None, "incarnationId": TOPIC_ID,
                                        "endPoints": [{"name": "PLAINTEXT", "host": "h", "port": 9092}]})
    key, payload = d.decode(0, None, broker)
    assert key is None and '"type":"REGISTER_BROKER_RECORD","version":3' in payload and "BROKER_RECORD" in payload
    assert d.decode(1, None, metadata_record(MD[2], 0, {"name": "t", "topicId": TOPIC_ID})) == (
        None, '{"type":"TOPIC_RECORD","version":0,"data":{"name":"t","topicId":"Uj5wn_FqTXirEASvVZRY1w"}}')
    bogus = uvarint(10000) + uvarint(10000)
    assert d.decode(5, None, bogus) == (None, "Error at 5, skipping. Could not deserialize metadata record due to "
                                              "unknown frame version 10000(only frame version 1 is supported)")
    assert d.decode(5, None, uvarint(40000))[1] == "Error at 5, skipping. Value for frame version was too large."
    assert d.decode(6, None, uvarint(1) + uvarint(10000) + uvarint(0)) == (
        None, "Error at 6, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: "
              "Unknown metadata id 10000")
    assert d.decode(7, None, b"\x00\x02\x00") == (
        None, "Error at 7, skipping. Could not deserialize metadata record with frame version 0. Note that "
              "upgrades from the preview release of KRaft in 2.8 to newer versions are not supported.")
    topic = metadata_record(MD[2], 0, {"name": "t"})
    assert d.decode(8, None, topic + b"zz")[1] == "Error at 8, skipping. Found 2 byte(s) of garbage after 2"
    assert d.decode(9, None, topic[:-3])[1] == "Error at 9, skipping. Failed to deserialize record with type 2"


CT = tables.control(LATEST_RELEASE)


def test_control_record_texts() -> None:
    assert control_record_text(3, control_value(CT[3], {"lastContainedLogTimestamp": 10000})) == (
        ' SnapshotHeader {"version":0,"lastContainedLogTimestamp":10000}')
    assert control_record_text(4, control_value(CT[4], {})) == ' SnapshotFooter {"version":0}'
    assert control_record_text(5, control_value(CT[5], {"kRaftVersion": 1})) == (
        ' KRaftVersion {"version":0,"kRaftVersion":1}')
    voters = control_value(CT[6], {"voters": [{
        "voterId": 1, "voterDirectoryId": TOPIC_ID,
        "endpoints": [{"name": "CONTROLLER", "host": "localhost", "port": 9093}],
        "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1}}]})
    assert control_record_text(6, voters) == (
        ' KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"Uj5wn_FqTXirEASvVZRY1w",'
        '"endpoints":[{"name":"CONTROLLER","host":"localhost","port":9093}],'
        '"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}')
    leader = control_value(CT[2], {"leaderId": 1, "voters": [{"voterId": 1}], "grantingVoters": [{"voterId": 1}]})
    assert control_record_text(2, leader) == (
        ' LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}')
    assert control_record_text(2, leader, (4, 0)) == " controlType: LEADER_CHANGE(2)"
    assert control_record_text(6, voters, (3, 7)) == " controlType: UNKNOWN(6)"
    assert control_record_text(3, b"", (3, 2)) == " controlType: SNAPSHOT_HEADER(3)"


# -- rows 11, 13: remote log metadata ------------------------------------------------------------------------

RL = tables.remote_log(LATEST_RELEASE)
SEGMENT_ID = "AAAAAAAAAAAAAAAAAAAAAQ"
TIP = {"name": "foo", "id": TOPIC_ID, "partition": 0}


def test_remote_log_metadata_to_string_forms() -> None:
    d = RemoteLogMetadataDecoder()
    delete = metadata_record(RL[2], 0, {"topicIdPartition": TIP, "remotePartitionDeleteState": 0})
    assert d.decode(0, None, delete) == (None, (
        f"RemotePartitionDeleteMetadata{{topicPartition={TOPIC_ID}:foo-0, state=DELETE_PARTITION_MARKED, "
        "eventTimestampMs=0, brokerId=0}"))
    update = metadata_record(RL[1], 0, {"remoteLogSegmentId": {"topicIdPartition": TIP, "id": SEGMENT_ID},
                                        "customMetadata": b"\x00\x01\x02\x03", "remoteLogSegmentState": 1})
    assert d.decode(1, None, update)[1] == (
        f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId=RemoteLogSegmentId{{topicIdPartition={TOPIC_ID}:foo-0, "
        f"id={SEGMENT_ID}}}, customMetadata=Optional[CustomMetadata{{4 bytes}}], state=COPY_SEGMENT_FINISHED, "
        "eventTimestampMs=0, brokerId=0}")
    segment = metadata_record(RL[0], 0, {"remoteLogSegmentId": {"topicIdPartition": TIP, "id": SEGMENT_ID},
                                         "endOffset": 9, "segmentLeaderEpochs": [{"leaderEpoch": 2, "offset": 5},
                                                                                 {"leaderEpoch": 1, "offset": 0}]})
    assert d.decode(2, None, segment)[1] == (
        f"RemoteLogSegmentMetadata{{remoteLogSegmentId=RemoteLogSegmentId{{topicIdPartition={TOPIC_ID}:foo-0, "
        f"id={SEGMENT_ID}}}, startOffset=0, endOffset=9, brokerId=0, maxTimestampMs=0, eventTimestampMs=0, "
        "segmentLeaderEpochs={1=0, 2=5}, segmentSizeInBytes=0, customMetadata=Optional.empty, "
        "state=COPY_SEGMENT_STARTED, txnIdxEmpty=false}")
    # Before 4.0 (KIP-1058) the segment metadata had no transaction-index flag.
    assert RemoteLogMetadataDecoder((3, 9)).decode(2, None, segment)[1].endswith(
        "customMetadata=Optional.empty, state=COPY_SEGMENT_STARTED}")
    # The decoder is new in 3.9 (KAFKA-16228): older dialects read 3.9's records.
    assert RemoteLogMetadataDecoder((2, 8)).decode(0, None, delete) == d.decode(0, None, delete)
    assert RemoteLogMetadataDecoder((3, 0)).decode(2, None, segment) == RemoteLogMetadataDecoder((3, 9)).decode(
        2, None, segment)


def test_remote_log_metadata_corruption() -> None:
    assert RemoteLogMetadataDecoder().decode(3, None, b"corrupted") == (None, (
        "Error at offset 3, skipping. Could not deserialize metadata record due to unknown frame version 99"
        "(only frame version 1 is supported)"))


def test_metadata_record_versions_a_release_cannot_read() -> None:
    # AbstractApiMessageSerde wraps the generated read()'s "Can't read version N" as "Failed to deserialize ...".
    topic = metadata_record(MD[2], 0, {"name": "t", "topicId": TOPIC_ID})
    assert topic[:3] == b"\x01\x02\x00"  # frame version 1, api key 2 (TopicRecord), version 0
    future = topic[:2] + b"\x05" + topic[3:]
    assert ClusterMetadataDecoder().decode(4, None, future) == (
        None, "Error at 4, skipping. Failed to deserialize record with type 2")
    # RegisterBrokerRecord v4 (CordonedLogDirs) is new in 4.3: 4.2 cannot read it.
    broker = metadata_record(MD[0], 4, {"brokerId": 1, "incarnationId": TOPIC_ID, "cordonedLogDirs": [TOPIC_ID]})
    assert '"cordonedLogDirs":["Uj5wn_FqTXirEASvVZRY1w"]' in ClusterMetadataDecoder((4, 3)).decode(0, None, broker)[1]
    assert ClusterMetadataDecoder((4, 2)).decode(0, None, broker) == (
        None, "Error at 0, skipping. Failed to deserialize record with type 0")


def test_metadata_versions_of_3x_releases() -> None:
    # PartitionRecord reads 0 up to 3.6 and 0-2 from 3.7 (the apache/kafka JSON at those tags).
    partition = metadata_record(MD[3], 1, {"partitionId": 0, "topicId": TOPIC_ID, "replicas": [1], "isr": [1]})
    assert ClusterMetadataDecoder((3, 6)).decode(7, None, partition) == (
        None, "Error at 7, skipping. Failed to deserialize record with type 3")
    assert '"type":"PARTITION_RECORD","version":1' in ClusterMetadataDecoder((3, 7)).decode(7, None, partition)[1]
    # 2.8 (KRaft preview) read frame version 0 only, and had no BrokerRegistrationChangeRecord (17) at all.
    change = metadata_record(MD[17], 0, {"brokerId": 1})
    assert ClusterMetadataDecoder((2, 8)).decode(0, None, change) == (
        None, "Error at 0, skipping. Could not deserialize metadata record due to unknown frame version 1"
              "(only frame version 0 is supported)")
    change = b"\x00" + change[1:]   # the same record in the preview's frame version 0
    assert ClusterMetadataDecoder((2, 8)).decode(0, None, change) == (
        None, "Error at 0, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 17")


def test_metadata_tag_written_as_a_string() -> None:
    # BrokerRegistrationChangeRecord's LogDirs had "tag": "2" (a JSON string) in 3.7-4.0; Kafka reads it as 2.
    dirs = ["AAAAAAAAAAAAAAAAAAAAAQ", TOPIC_ID]
    change = metadata_record(tables.metadata((3, 7))[17], 2, {"brokerId": 1, "logDirs": dirs})
    assert ('"logDirs":["AAAAAAAAAAAAAAAAAAAAAQ","Uj5wn_FqTXirEASvVZRY1w"]'
            in ClusterMetadataDecoder((3, 7)).decode(0, None, change)[1])


def test_transaction_log_value_versions_of_3x_releases() -> None:
    # TransactionLogValue is "0" up to 3.4 and "0-1" (flexible) from 3.5 (the apache/kafka JSON at those tags).
    key = coordinator_key(TXN_KEY, 0, {"transactionalId": "txnId"})
    v1 = coordinator_value(TXN_VALUE, 1, {"producerId": 7, "transactionStatus": 1, "transactionPartitions": []})
    assert TransactionLogDecoder((3, 5)).decode(0, key, v1)[1].startswith("producerId:7,")
    with pytest.raises(InvalidRecordError, match="Unknown version 1 from the transaction log message value"):
        TransactionLogDecoder((3, 4)).decode(0, key, v1)
