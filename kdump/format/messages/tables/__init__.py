"""Registries over Kafka's message definitions: which schema belongs to which record type / api key, per release.

Every schema comes from the JSON of the release asked for (``definitions``), so a release's registry
holds exactly the record types, versions and fields that release defines: an older release lacks
the tagged fields added later (it skips them when reading, so it never prints them), the 4.0
share-group layouts are 4.0's own, and a metadata record's valid versions are that release's.
"""

from __future__ import annotations

from functools import cache

from kdump.format.messages import definitions
from kdump.format.messages.schema import MessageSchema

KeyValue = tuple[MessageSchema, MessageSchema]
Release = tuple[int, int]

# ControlRecordType id → the definition of its value (the ids are the tool's, not in the JSON).
_CONTROL_NAMES = {2: "LeaderChangeMessage", 3: "SnapshotHeaderRecord", 4: "SnapshotFooterRecord",
                  5: "KRaftVersionRecord", 6: "VotersRecord"}


def _coordinator(kind: str, release: Release) -> dict[int, KeyValue]:
    """Record type → key / value of one coordinator's definitions.

    From 4.1 each key is a ``coordinator-key`` whose ``apiKey`` is the record type; before that the
    key's valid versions were its record types (OffsetCommitKey "0-1", GroupMetadataKey "2", …).
    """
    schemas = definitions.registry(kind, release)
    out: dict[int, KeyValue] = {}
    for name, key in schemas.items():
        value = schemas.get(name[:-3] + "Value") if name.endswith("Key") else None
        if value is None:
            continue
        types = [key.api_key] if key.api_key is not None else range(key.valid_versions.lo, key.valid_versions.hi + 1)
        for record_type in types:
            out[record_type] = (key, value)
    return dict(sorted(out.items()))


@cache
def group_coordinator(release: Release, known_types: range | None = None) -> dict[int, KeyValue]:
    """``__consumer_offsets`` records as ``release`` defines them, limited to ``known_types`` (before 4.1
    the serde's switch was written by hand and knew fewer types than the release's JSON defined)."""
    registry = _coordinator("group", release)
    return {t: kv for t, kv in registry.items() if known_types is None or t in known_types}


@cache
def share_state(release: Release) -> dict[int, KeyValue]:
    """``__share_group_state`` records (ShareSnapshot 0, ShareUpdate 1) as ``release`` defines them."""
    return _coordinator("share", release)


@cache
def transaction_log(release: Release) -> dict[int, KeyValue]:
    """``__transaction_state`` records (one type, 0) as ``release`` defines them."""
    return _coordinator("transaction", release)


def _by_api_key(kind: str, release: Release) -> dict[int, MessageSchema]:
    found = {s.api_key: s for s in definitions.registry(kind, release).values() if s.api_key is not None}
    return dict(sorted(found.items()))


@cache
def metadata(release: Release) -> dict[int, MessageSchema]:
    """MetadataRecordType of ``release``: api key → record, at the versions that release reads."""
    return _by_api_key("metadata", release)


@cache
def remote_log(release: Release) -> dict[int, MessageSchema]:
    """RemoteLogMetadataSerde of ``release``: api key → record."""
    return _by_api_key("remote-log", release)


@cache
def control(release: Release) -> dict[int, MessageSchema]:
    """ControlRecordType id → value definition, for the KRaft control records ``release`` defines."""
    clients = definitions.registry("clients", release)
    return {type_id: clients[name] for type_id, name in _CONTROL_NAMES.items() if name in clients}


def consumer_protocol(release: Release) -> tuple[MessageSchema, MessageSchema]:
    """The consumer embedded protocol (subscription, assignment) of ``release``."""
    clients = definitions.registry("clients", release)
    return clients["ConsumerProtocolSubscription"], clients["ConsumerProtocolAssignment"]


def key_version(schema: MessageSchema, record_type: int) -> int:
    """The version a coordinator key struct is read at.

    Up to Kafka 4.0 the key schemas were versioned by record type (``ConsumerGroupMetadataKey`` was
    "version 3"); from 4.1 every key is version 0 and carries its record type as ``apiKey``. Either
    way the key has the same fields (Kafka reads it at the record type, and its generated reader
    ignores the version when the fields exist in every valid version).
    """
    return record_type if record_type in schema.valid_versions else 0
