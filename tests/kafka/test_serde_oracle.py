"""kdump's message reader against bytes written by Kafka's own generated classes.

For every record type kdump decodes (coordinator keys and values of __consumer_offsets,
__transaction_state and __share_group_state, KRaft metadata records, remote-log metadata records,
KRaft control records, the consumer embedded protocol) and every valid version, tests/kafka/SerdeOracle.java
builds the message with a non-default value in every field of that version (tagged fields included),
writes it with Kafka's generated ``write`` and prints the JSON of Kafka's generated ``*JsonConverter``.
kdump must read those bytes to exactly that JSON, and consume all of them.

Needs java and mvn (the jars come from Maven Central through tests/kafka/fetch.sh into a cache outside
the repository). Without them the test is skipped, except with CI=true, where it fails.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kdump.format.messages import definitions
from kdump.format.messages.protocol import Reader, read_message
from kdump.format.messages.schema import Field, MessageSchema
from kdump.render.dialect import LATEST_RELEASE
from kdump.render.kafka_json import dumps, to_tree

HERE = Path(__file__).parent
RELEASE = "%d.%d.0" % LATEST_RELEASE

# kdump registry → the package of Kafka's generated classes for it.
PACKAGES = {
    "group": "org.apache.kafka.coordinator.group.generated",
    "transaction": "org.apache.kafka.coordinator.transaction.generated",
    "share": "org.apache.kafka.coordinator.share.generated",
    "metadata": "org.apache.kafka.common.metadata",
    "remote-log": "org.apache.kafka.server.log.remote.metadata.storage.generated",
    "clients": "org.apache.kafka.common.message",
}


def _kafka_lib() -> Path:
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if missing:
        reason = f"Kafka serde oracle needs {' and '.join(missing)} on PATH"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + " (CI=true: required)")
        pytest.skip(reason)
    fetched = subprocess.run([str(HERE / "fetch.sh"), RELEASE], capture_output=True, text=True, check=True)
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


def _requests() -> list[tuple[MessageSchema, int, str]]:
    requests = []
    for kind, package in PACKAGES.items():
        for schema in definitions.registry(kind, LATEST_RELEASE).values():
            for version in range(schema.valid_versions.lo, schema.valid_versions.hi + 1):
                counter = itertools.count(1)
                payload = json.dumps(_struct(schema.fields, version, counter), separators=(",", ":"))
                requests.append((schema, version, f"{package}.{schema.name} {version} {payload}"))
    return requests


def test_kdump_reads_what_kafka_writes() -> None:
    lib = _kafka_lib()
    requests = _requests()
    answers = subprocess.run(["java", "-cp", f"{lib}/*", str(HERE / "SerdeOracle.java")],
                             input="\n".join(line for _, _, line in requests) + "\n",
                             capture_output=True, text=True, check=True, timeout=600).stdout.splitlines()
    assert len(answers) == len(requests)
    checked = set()
    for (schema, version, line), answer in zip(requests, answers):
        assert not answer.startswith("ERROR"), (line, answer)
        hex_bytes, kafka_json = answer.split(" ", 1)
        raw = bytes.fromhex(hex_bytes)
        assert int.from_bytes(raw[:2], "big") == version
        reader = Reader(raw, 2)
        data = read_message(schema, reader, version)
        assert dumps(to_tree(data)) == kafka_json, (schema.name, version)
        assert reader.remaining() == 0, (schema.name, version)
        checked.add(schema.name)
    # Every record type of every registry was exercised (87 definitions of Kafka 4.3 + the two protocol ones).
    assert len(checked) == sum(len(definitions.registry(kind, LATEST_RELEASE)) for kind in PACKAGES)
