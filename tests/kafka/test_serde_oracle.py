"""kdump's readers and decoders against bytes written by Kafka's own generated classes.

For every record type kdump decodes (coordinator keys and values of __consumer_offsets,
__transaction_state and __share_group_state, KRaft metadata records, remote-log metadata records,
KRaft control records, the consumer embedded protocol) and every valid version, tests/kafka/SerdeOracle.java
builds the message with a non-default value in every field of that version (tagged fields included),
writes it with Kafka's generated ``write`` and prints the JSON of Kafka's generated ``*JsonConverter``.
kdump must read those bytes to exactly that JSON and consume all of them; its coordinator decoders must
print Kafka's key and value JSON in the dump tool's envelopes.

The releases are patch releases of minor lines whose x.y.0 JSON kdump keeps, so this also checks that
the patch releases read and write the same. Needs java and mvn (the jars come from Maven Central
through tests/kafka/fetch.sh into a cache outside the repository). Without them the test is skipped,
except with CI=true, where it fails.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kdump.format.messages import definitions
from kdump.format.messages.protocol import Reader, read_message
from kdump.format.messages.schema import Field, MessageSchema
from kdump.render.dialect import LATEST_RELEASE, dialect_of
from kdump.render.internal_topics import OffsetsDecoder, ShareGroupStateDecoder, TransactionLogDecoder
from kdump.render.kafka_json import dumps, to_tree

HERE = Path(__file__).parent
# The latest release (every record type kdump decodes), 4.0 (the share-group preview layouts, keys
# versioned by record type) and 3.9 (the last 3.x line).
RELEASES = ("%d.%d.0" % LATEST_RELEASE, "4.0.2", "3.9.2")

# kdump registry → the package of Kafka's generated classes for it.
PACKAGES = {
    "group": "org.apache.kafka.coordinator.group.generated",
    "transaction": "org.apache.kafka.coordinator.transaction.generated",
    "share": "org.apache.kafka.coordinator.share.generated",
    "metadata": "org.apache.kafka.common.metadata",
    "remote-log": "org.apache.kafka.server.log.remote.metadata.storage.generated",
    "clients": "org.apache.kafka.common.message",
}
DECODERS = {"group": OffsetsDecoder, "transaction": TransactionLogDecoder, "share": ShareGroupStateDecoder}


def _kafka_lib(release: str) -> Path:
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if missing:
        reason = f"Kafka serde oracle needs {' and '.join(missing)} on PATH"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + " (CI=true: required)")
        pytest.skip(reason)
    fetched = subprocess.run([str(HERE / "fetch.sh"), release], capture_output=True, text=True, check=True)
    return Path(fetched.stdout.strip())


def _sample(kind: str, n: int, default: Any) -> Any:
    """A value of primitive ``kind`` that differs from ``default`` (and from its neighbours)."""
    if kind == "bool":
        return not default
    if kind == "string":
        return f"s{n}"
    if kind == "bytes":
        return base64.b64encode(bytes([n % 256, 1, 2])).decode()
    if kind == "uuid":
        return base64.urlsafe_b64encode(bytes([n % 256] * 8 + [7] * 8)).decode().rstrip("=")
    if kind == "float64":
        return n + 0.5
    base = default if isinstance(default, int) else 0
    return base + 1 + n % 100


def _field_value(f: Field, version: int, counter: Iterator[int]) -> Any:
    if f.is_array:
        return [_element(f, version, counter) for _ in range(2)]
    return _element(f, version, counter)


def _element(f: Field, version: int, counter: Iterator[int]) -> Any:
    if f.is_struct or f.type == "[]struct":
        return _struct(f.fields, version, counter)
    kind = f.element_type if f.is_array else f.type
    default = None if f.is_array or not isinstance(f.default, (int, bool)) else f.default
    return _sample(kind, next(counter), default)


def _struct(fields: tuple[Field, ...], version: int, counter: Iterator[int]) -> dict[str, Any]:
    return {f.json_name: _field_value(f, version, counter) for f in fields if version in f.versions}


def _line(package: str, schema: MessageSchema, version: int | str) -> str:
    at = 0 if version == "key" else int(version)
    payload = json.dumps(_struct(schema.fields, at, itertools.count(1)), separators=(",", ":"))
    return f"{package}.{schema.name} {version} {payload}"


def _key_version(key: MessageSchema, record_type: int) -> int | str:
    """How the release's serde frames a key: 4.1+ ``coordinator-key`` by apiKey, older ones by
    writing the key at the version that is its record type."""
    return "key" if key.api_key is not None else record_type


@pytest.fixture(scope="module", params=RELEASES)
def oracle(request: pytest.FixtureRequest) -> tuple[tuple[int, int], dict[str, str]]:
    """(release, Kafka's answer to each request line) for every message, version and coordinator key."""
    lib = _kafka_lib(request.param)
    release = definitions.snapshot(tuple(int(p) for p in request.param.split(".")[:2]))  # type: ignore[arg-type]
    lines = []
    for kind, package in PACKAGES.items():
        for schema in definitions.registry(kind, release).values():
            lines += [_line(package, schema, v) for v in range(schema.valid_versions.lo, schema.valid_versions.hi + 1)]
        if kind in DECODERS and definitions.registry(kind, release):
            for record_type, (key, _) in DECODERS[kind](release).registry.items():
                lines.append(_line(package, key, _key_version(key, record_type)))
    lines = list(dict.fromkeys(lines))
    run = subprocess.run(["java", "-cp", f"{lib}/*", str(HERE / "SerdeOracle.java")],
                         input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    answers = run.stdout.splitlines()
    assert len(answers) == len(lines)
    return release, dict(zip(lines, answers, strict=True))


def _bytes_and_json(answer: str) -> tuple[bytes, str]:
    assert not answer.startswith(("ERROR", "NO-CONVERTER")), answer
    hex_bytes, kafka_json = answer.split(" ", 1)
    return bytes.fromhex(hex_bytes), kafka_json


def test_kdump_reads_what_kafka_writes(oracle: tuple[tuple[int, int], dict[str, str]]) -> None:
    release, answers = oracle
    checked = set()
    for kind, package in PACKAGES.items():
        for name, schema in definitions.registry(kind, release).items():
            for version in range(schema.valid_versions.lo, schema.valid_versions.hi + 1):
                raw, kafka_json = _bytes_and_json(answers[_line(package, schema, version)])
                assert int.from_bytes(raw[:2], "big") == version
                reader = Reader(raw, 2)
                data = read_message(schema, reader, version)
                assert dumps(to_tree(data)) == kafka_json, (name, version)
                assert reader.remaining() == 0, (name, version)
            checked.add((kind, name))
    assert len(checked) == sum(len(definitions.registry(kind, release)) for kind in PACKAGES)


# Kafka 4.4 (KAFKA-20712): DumpLogSegments prints a transaction's status by its TransactionState name
# (transaction-coordinator/src/main/java/org/apache/kafka/coordinator/transaction/TransactionState.java),
# where the generated JSON converter SerdeOracle runs keeps the id.
_TXN_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
               "PrepareEpochFence")


def _as_dumped(kind: str, release: tuple[int, int], value_json: str) -> str:
    if kind != "transaction" or not dialect_of(release).transaction_status_names:
        return value_json
    # An id without a state (the oracle's values count up) prints as a JSON string.
    return re.sub(r'"transactionStatus":(\d+)', lambda m: '"transactionStatus":"%s"' % (
        _TXN_STATES[int(m[1])] if int(m[1]) < len(_TXN_STATES) else m[1]), value_json)


def test_coordinator_decoders_print_kafka_json(oracle: tuple[tuple[int, int], dict[str, str]]) -> None:
    release, answers = oracle
    checked = []
    for kind, decoder_class in DECODERS.items():
        decoder = decoder_class(release)
        if kind == "transaction" and not dialect_of(release).transaction_log_json:
            continue  # that release prints transaction records as strings, not as Kafka's JSON
        if not definitions.registry(kind, release):
            continue  # that release has no such records (3.9: share groups); kdump reads a newer one's
        envelope = decoder.value_envelope()
        package = PACKAGES[kind]
        for record_type, (key, value) in decoder.registry.items():
            key_raw, key_json = _bytes_and_json(answers[_line(package, key, _key_version(key, record_type))])
            assert int.from_bytes(key_raw[:2], "big") == record_type
            key_text = '{"type":"%d","data":%s}' % (record_type, key_json)
            for version in range(value.valid_versions.lo, value.valid_versions.hi + 1):
                value_raw, value_json = _bytes_and_json(answers[_line(package, value, version)])
                assert decoder.decode(5, key_raw, value_raw) == (
                    key_text, '{"%s":"%d","data":%s}' % (envelope, version, _as_dumped(kind, release, value_json))), (
                    kind, record_type, version)
            assert decoder.decode(5, key_raw, None) == (key_text, "<DELETE>")
            checked.append((kind, record_type))
    # 3.9: the 9 group types; 4.0: 17 group + 2 share; 4.3 and 4.4: 22 group + 2 share + 1 transaction.
    assert len(checked) == {(3, 9): 9, (4, 0): 19, (4, 3): 25, (4, 4): 25}[release]
