"""Kafka's message JSON kept per release, and the registries built from it.

Expected values are Kafka's: the validVersions / fields of the JSON at the apache/kafka release tags
(checked against the tags, not against kdump's own files).
"""

from __future__ import annotations

import pytest

from kdump.format.messages import definitions, tables
from kdump.format.messages.schema import MAX_VERSION, NULL, Versions


def test_one_snapshot_per_minor_release() -> None:
    assert definitions.releases() == ((2, 8), (3, 0), (3, 1), (3, 2), (3, 3), (3, 4), (3, 5), (3, 6), (3, 7),
                                      (3, 8), (3, 9), (4, 0), (4, 1), (4, 2), (4, 3), (4, 4))
    assert definitions.snapshot((2, 2)) == (2, 8)  # no JSON before 2.8: the oldest kept one
    assert definitions.snapshot((3, 9)) == (3, 9) and definitions.snapshot((9, 0)) == (4, 4)


@pytest.mark.parametrize("api_key, versions", [
    # RegisterBrokerRecord, PartitionRecord, PartitionChangeRecord, BrokerRegistrationChangeRecord
    (0, {(3, 3): "0-1", (3, 4): "0-2", (3, 6): "0-2", (3, 7): "0-3", (4, 2): "0-3", (4, 3): "0-4"}),
    (3, {(3, 0): "0", (3, 6): "0", (3, 7): "0-2", (4, 3): "0-2"}),
    (5, {(3, 6): "0", (3, 7): "0-2"}),
    (17, {(3, 0): "0", (3, 3): "0-1", (3, 7): "0-2", (4, 3): "0-3"}),
])
def test_metadata_versions_per_release(api_key: int, versions: dict[tuple[int, int], str]) -> None:
    for release, text in versions.items():
        assert tables.metadata(release)[api_key].valid_versions == Versions.parse(text), release


def test_metadata_record_types_per_release() -> None:
    assert 6 in tables.metadata((3, 4)) and 6 not in tables.metadata((3, 5))  # AccessControlRecord
    assert [16 in tables.metadata(r) for r in ((2, 8), (3, 0), (3, 2), (3, 3))] == [False, True, True, False]
    assert max(tables.metadata((3, 9))) == 27 and max(tables.metadata((4, 3))) == 28
    assert max(tables.metadata((4, 4))) == 29


def _names(schema_fields: object) -> list[str]:
    return [f.name for f in schema_fields]  # type: ignore[attr-defined]


def test_fields_per_release() -> None:
    streams = {r: tables.group_coordinator(r)[17][1] for r in ((4, 1), (4, 3), (4, 4))}
    assert _names(streams[(4, 1)].fields) == ["Epoch", "MetadataHash"]
    assert _names(streams[(4, 3)].fields) == ["Epoch", "MetadataHash", "ValidatedTopologyEpoch",
                                              "LastAssignmentConfigs"]
    assert _names(streams[(4, 4)].fields)[-2:] == ["StoredDescriptionTopologyEpoch", "FailedDescriptionTopologyEpoch"]
    assert "topicId" not in _names(tables.group_coordinator((4, 0))[1][1].fields)
    assert "topicId" in _names(tables.group_coordinator((4, 1))[1][1].fields)
    assert "TxnIndexEmpty" not in _names(tables.remote_log((3, 9))[0].fields)
    assert "TxnIndexEmpty" in _names(tables.remote_log((4, 0))[0].fields)
    assert tables.transaction_log((3, 4))[0][1].valid_versions == Versions(0, 0)
    assert tables.transaction_log((3, 5))[0][1].valid_versions == Versions(0, 1)
    assert tables.group_coordinator((3, 4))[1][1].valid_versions == Versions(0, 3)  # OffsetCommitValue
    assert tables.group_coordinator((3, 5))[1][1].valid_versions == Versions(0, 4)
    # The 4.0 preview layout of the share-group state: uint16 SnapshotEpoch, no timestamps.
    snapshot_40 = tables.share_state((4, 0))[0][1]
    assert snapshot_40.fields[0].type == "uint16" and "CreateTimestamp" not in _names(snapshot_40.fields)
    assert tables.share_state((4, 1))[0][1].fields[0].type == "int32"


def test_coordinator_record_types() -> None:
    # Before 4.1 a key's valid versions were its record types; from 4.1 its apiKey is.
    assert sorted(tables.group_coordinator((2, 8))) == [0, 1, 2]
    assert tables.group_coordinator((4, 0))[0][0].name == "OffsetCommitKey"
    assert tables.group_coordinator((4, 1))[0][0].name == "LegacyOffsetCommitKey"
    assert sorted(tables.group_coordinator((3, 9), range(9))) == list(range(9))
    assert sorted(tables.share_state((4, 0))) == [0, 1] and sorted(tables.transaction_log((2, 8))) == [0]
    assert sorted(tables.control((3, 7))) == [2, 3, 4] and sorted(tables.control((3, 8))) == [2, 3, 4, 5, 6]


def test_parse_follows_kafka_field_rules() -> None:
    schema = definitions.parse("""
    // Licensed to the Apache Software Foundation (ASF) ...
    {
      "apiKey": 7, "type": "metadata", "name": "ExampleRecord", "validVersions": "0-2", "flexibleVersions": "1+",
      "fields": [
        { "name": "Ints", "type": "[]int32", "versions": "0+", "nullableVersions": "2+", "default": "null" },
        { "name": "Hex", "type": "int32", "versions": "0+", "default": "0x7fffffff" },
        { "name": "Minus", "type": "int64", "versions": "1+", "default": "-1", "ignorable": true },
        { "name": "Flag", "type": "bool", "versions": "0+", "default": "true" },
        { "name": "Voters", "type": "[]Voter", "versions": "0+" },
        { "name": "Tagged", "type": "int16", "taggedVersions": "1+", "tag": 0, "default": -1 },
        { "name": "Quoted", "type": "[]uuid", "versions": "2+", "taggedVersions": "2+", "tag": "2" }
      ],
      "commonStructs": [
        { "name": "Voter", "versions": "0+", "fields": [ { "name": "VoterId", "type": "int32", "versions": "0+" } ] }
      ]
    }""")
    assert (schema.name, schema.api_key, schema.valid_versions, schema.flexible_versions) == (
        "ExampleRecord", 7, Versions(0, 2), Versions(1, MAX_VERSION))
    ints, hex_, minus, flag, voters, tagged, quoted = schema.fields
    assert ints.default is NULL and ints.nullable_in(2) and not ints.nullable_in(1)
    assert (hex_.default, minus.default, flag.default) == (0x7FFFFFFF, -1, True)
    assert (voters.type, voters.struct_name, _names(voters.fields)) == ("[]struct", "Voter", ["VoterId"])
    # A field given only taggedVersions exists in exactly those versions (Kafka's FieldSpec).
    assert (tagged.versions, tagged.tag, tagged.tagged_in(1), tagged.default) == (Versions(1, MAX_VERSION), 0, True, -1)
    # Jackson reads a quoted number as the number: BrokerRegistrationChangeRecord 3.7-4.0 wrote "tag": "2".
    assert quoted.tag == 2 and quoted.tagged_in(2)
