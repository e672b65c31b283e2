"""The generic message-protocol reader/writer, the schema tables and the Jackson-style JSON."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdump.errors import FormatError
from kdump.format.messages import definitions, tables
from kdump.format.messages.encode import uvarint, write_message
from kdump.format.messages.protocol import Reader, Uuid, read_message
from kdump.format.messages.schema import MessageSchema, Versions
from kdump.render.dialect import LATEST_RELEASE
from kdump.render.kafka_json import java_double, quote, render


def message(valid: str, flexible: str, *fields: dict) -> MessageSchema:
    """A message definition written as Kafka's JSON, read by the parser kdump reads Kafka's files with."""
    return definitions.parse(json.dumps({"name": "T", "validVersions": valid, "flexibleVersions": flexible,
                                         "fields": list(fields)}))


def field(name: str, kind: str, versions: str = "0+", **more: object) -> dict:
    return {"name": name, "type": kind, "versions": versions, **more}


# A synthetic schema exercising every primitive: version 0 classic, version 1 flexible (with tags).
PRIMS = message(
    "0-1", "1+",
    field("I8", "int8"),
    field("I16", "int16"),
    field("I32", "int32"),
    field("I64", "int64"),
    field("U16", "uint16"),
    field("D", "float64"),
    field("B", "bool"),
    field("S", "string"),
    field("NS", "string", nullableVersions="0+"),
    field("Raw", "bytes"),
    field("NRaw", "bytes", nullableVersions="0+"),
    field("Id", "uuid"),
    field("Ints", "[]int32"),
    field("Strs", "[]string", nullableVersions="0+"),
    field("Items", "[]Item", fields=[field("K", "string"), field("V", "int64")]),
    field("Opt", "Opt", nullableVersions="0+", fields=[field("X", "int16")]),
    field("Tagged", "int64", "1+", tag=0, taggedVersions="1+", default="-1"),
    field("TaggedStr", "string", "1+", tag=1, taggedVersions="1+", nullableVersions="1+"),
    field("TaggedOpt", "TaggedOpt", "1+", tag=2, taggedVersions="1+", nullableVersions="1+",
          fields=[field("Y", "int32")]),
)

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
values = st.fixed_dictionaries({
    "I8": st.integers(-128, 127),
    "I16": st.integers(-(2**15), 2**15 - 1),
    "I32": st.integers(-(2**31), 2**31 - 1),
    "I64": st.integers(-(2**63), 2**63 - 1),
    "U16": st.integers(0, 2**16 - 1),
    "D": st.floats(allow_nan=False),
    "B": st.booleans(),
    "S": text,
    "NS": st.none() | text,
    "Raw": st.binary(max_size=20),
    "NRaw": st.none() | st.binary(max_size=20),
    "Id": st.binary(min_size=16, max_size=16).map(Uuid),
    "Ints": st.lists(st.integers(-(2**31), 2**31 - 1), max_size=5),
    "Strs": st.none() | st.lists(text, max_size=3),
    "Items": st.lists(st.fixed_dictionaries({"K": text, "V": st.integers(-(2**63), 2**63 - 1)}), max_size=3),
    "Opt": st.none() | st.fixed_dictionaries({"X": st.integers(-(2**15), 2**15 - 1)}),
    "Tagged": st.integers(-(2**63), 2**63 - 1),
    "TaggedStr": st.none() | text,
    "TaggedOpt": st.none() | st.fixed_dictionaries({"Y": st.integers(-(2**31), 2**31 - 1)}),
})


@settings(max_examples=150, deadline=None)
@given(values, st.sampled_from([0, 1]))
def test_round_trip_every_primitive(vals: dict, version: int) -> None:
    raw = write_message(PRIMS, vals, version)
    data = read_message(PRIMS, raw, version)
    plain = data.to_plain()
    for name, value in vals.items():
        if name.startswith("Tagged") and version == 0:
            continue  # not in version 0: the reader leaves the default
        assert plain[name] == value, name
    assert write_message(PRIMS, data, version) == raw


@given(st.integers(0, 2**32 - 1))
def test_uvarint_round_trip(value: int) -> None:
    r = Reader(uvarint(value))
    got = r.uvarint()
    assert got & 0xFFFFFFFF == value and r.remaining() == 0


@pytest.mark.parametrize("value, encoded", [(0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x01"),
                                            (300, b"\xac\x02"), (-1, b"\xff\xff\xff\xff\x0f")])
def test_uvarint_vectors(value: int, encoded: bytes) -> None:
    assert uvarint(value) == encoded
    assert Reader(encoded).uvarint() == value


def test_flexible_encoding_layout() -> None:
    schema = message("0", "0+", field("Name", "string"), field("Tag", "int32", tag=3, taggedVersions="0+"))
    assert write_message(schema, {"Name": "ab"}, 0) == b"\x03ab\x00"
    assert write_message(schema, {"Name": "ab", "Tag": 7}, 0) == b"\x03ab\x01\x03\x04\x00\x00\x00\x07"
    data = read_message(schema, b"\x03ab\x02\x03\x04\x00\x00\x00\x07\x09\x02zz", 0)  # + unknown tag 9
    assert data["Tag"] == 7 and data.unknown_tags == ((9, b"zz"),)
    assert render(data) == '{"name":"ab","tag":7}'
    assert render(read_message(schema, b"\x03ab\x00", 0)) == '{"name":"ab"}'  # default tagged field omitted


def test_nullable_struct_markers() -> None:
    """MessageDataGenerator.generateStructReader: a nullable struct's marker is a byte (-1 null, 1 present),
    but an unsigned varint (0 null, 1 present) in a tagged field, whose size counts the marker."""
    inner = [field("Y", "int16")]
    schema = message("0", "0+", field("Opt", "Opt", nullableVersions="0+", fields=inner),
                     field("Tagged", "Tagged", tag=0, taggedVersions="0+", nullableVersions="0+", fields=inner))
    assert write_message(schema, {"Opt": None, "Tagged": None}, 0) == b"\xff" + b"\x01" + b"\x00\x01\x00"
    assert write_message(schema, {"Opt": {"Y": 2}, "Tagged": {"Y": 3}}, 0) == (
        b"\x01\x00\x02\x00" + b"\x01" + b"\x00\x04\x01\x00\x03\x00")
    # No "default": the empty struct is the default, so it is neither written nor printed; a null is both.
    assert write_message(schema, {"Opt": None}, 0) == b"\xff\x00"
    assert render(read_message(schema, b"\xff\x00", 0)) == '{"opt":null}'
    assert render(read_message(schema, b"\xff\x01\x00\x01\x00", 0)) == '{"opt":null,"tagged":null}'
    assert render(read_message(schema, b"\xff\x01\x00\x04\x01\x00\x03\x00", 0)) == '{"opt":null,"tagged":{"y":3}}'


def test_classic_encoding_layout() -> None:
    schema = message("0", "none", field("S", "string", nullableVersions="0+"), field("A", "[]int16"))
    assert write_message(schema, {"S": None, "A": [1]}, 0) == b"\xff\xff\x00\x00\x00\x01\x00\x01"
    assert render(read_message(schema, b"\xff\xff\x00\x00\x00\x01\x00\x01", 0)) == '{"s":null,"a":[1]}'


@pytest.mark.parametrize("schema, raw, message", [
    (message("0", "0+", field("StateBatches", "[]int32")), b"\x00",
     "non-nullable field stateBatches was serialized as null"),
    (message("0", "none", field("Name", "string")), b"\xff\xff",
     "non-nullable field name was serialized as null"),
    (message("0", "0+", field("Data", "bytes")), b"\x00", "non-nullable field data was serialized as null"),
    (message("0", "0+", field("Name", "string")), uvarint(0x8001),
     "string field name had invalid length 32768"),
    (message("0", "0+", field("Data", "bytes")), b"\x05ab",
     "Error reading byte array of 4 byte(s): only 2 byte(s) available"),
    (message("0", "none", field("Ids", "[]int64")), b"\x00\x00\x00\x09\x00",
     "Tried to allocate a collection of size 9, but there are only 1 bytes remaining."),
    (message("0", "0+"), b"\xff\xff\xff\xff\xff",
     "Varint is too long, the most significant bit in the 5th byte is set, converted value: ffffffff"),
    (message("0", "none", field("X", "int64")), b"\x00\x01", "null"),
])
def test_errors_use_kafkas_words(schema, raw: bytes, message: str) -> None:
    with pytest.raises(FormatError) as info:
        read_message(schema, raw, 0)
    assert info.value.reason == message


def test_versions_parse() -> None:
    assert 5 in Versions.parse("0+") and 2 not in Versions.parse("3") and 2 in Versions.parse("1-3")
    assert not any(v in Versions.parse("none") for v in range(3)) and Versions.parse("4+") == Versions(4, 0x7FFF)


SPEC_TYPE_NAMES = (
    "0 REGISTER_BROKER_RECORD, 1 UNREGISTER_BROKER_RECORD, 2 TOPIC_RECORD, 3 PARTITION_RECORD, 4 CONFIG_RECORD, "
    "5 PARTITION_CHANGE_RECORD, 7 FENCE_BROKER_RECORD, 8 UNFENCE_BROKER_RECORD, 9 REMOVE_TOPIC_RECORD, "
    "10 DELEGATION_TOKEN_RECORD, 11 USER_SCRAM_CREDENTIAL_RECORD, 12 FEATURE_LEVEL_RECORD, 14 CLIENT_QUOTA_RECORD, "
    "15 PRODUCER_IDS_RECORD, 17 BROKER_REGISTRATION_CHANGE_RECORD, 18 ACCESS_CONTROL_ENTRY_RECORD, "
    "19 REMOVE_ACCESS_CONTROL_ENTRY_RECORD, 20 NO_OP_RECORD, 21 ZK_MIGRATION_STATE_RECORD, "
    "22 REMOVE_USER_SCRAM_CREDENTIAL_RECORD, 23 BEGIN_TRANSACTION_RECORD, 24 END_TRANSACTION_RECORD, "
    "25 ABORT_TRANSACTION_RECORD, 26 REMOVE_DELEGATION_TOKEN_RECORD, 27 REGISTER_CONTROLLER_RECORD")


def test_metadata_type_names_match_spec_list() -> None:
    expected = {int(k): v for k, v in re.findall(r"(\d+) ([A-Z_]+)", SPEC_TYPE_NAMES)}
    assert {k: s.type_name for k, s in tables.metadata((4, 4)).items() if k <= 27} == expected


def test_every_table_round_trips_its_defaults() -> None:
    registries = (tables.group_coordinator((4, 0)), tables.group_coordinator((4, 4)), tables.share_state((4, 0)),
                  tables.share_state(LATEST_RELEASE), tables.transaction_log(LATEST_RELEASE))
    schemas = [s for registry in registries for kv in registry.values() for s in kv]
    schemas += [*tables.metadata((4, 4)).values(), *tables.remote_log(LATEST_RELEASE).values(), *tables.control(LATEST_RELEASE).values()]
    for schema in schemas:
        for version in range(schema.valid_versions.lo, min(schema.valid_versions.hi, 20) + 1):
            raw = write_message(schema, {}, version)
            data = read_message(schema, raw, version)
            assert write_message(schema, data, version) == raw, (schema.name, version)
            assert render(data).startswith("{")


def test_uuid_text() -> None:
    uid = Uuid.from_string("Uj5wn_FqTXirEASvVZRY1w")
    assert str(uid) == "Uj5wn_FqTXirEASvVZRY1w" and len(uid.raw) == 16
    assert str(Uuid.ZERO) == "AAAAAAAAAAAAAAAAAAAAAA"


@pytest.mark.parametrize("raw, out", [('a"b\\c', '"a\\"b\\\\c"'), ("\n\t\x01\x1f", '"\\n\\t\\u0001\\u001F"'),
                                      ("é/€", '"é/€"')])
def test_jackson_string_escaping(raw: str, out: str) -> None:
    assert quote(raw) == out


@pytest.mark.parametrize("value, out", [(1.0, "1.0"), (0.001, "0.001"), (1e7, "1.0E7"), (1.5e-4, "1.5E-4"),
                                        (123456.789, "123456.789"), (-0.0, "-0.0"), (float("inf"), "Infinity")])
def test_java_double(value: float, out: str) -> None:
    assert java_double(value) == out
