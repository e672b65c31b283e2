"""``kdump partition-for``: Utils.abs(String.hashCode) % partitions."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from kdump.cli.partition_for import kafka_utils_abs, partition_for
from kdump.render.kafka_maps import java_string_hash


def plain_java_hash(s: str) -> int:
    """Written out independently: h = 31*h + c over UTF-16 code units, wrapped to a signed 32-bit int."""
    units = []
    for ch in s:
        cp = ord(ch)
        if cp > 0xFFFF:
            cp -= 0x10000
            units += [0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)]
        else:
            units.append(cp)
    h = 0
    for u in units:
        h = (h * 31 + u) % (2 ** 32)
    return h - 2 ** 32 if h > 2 ** 31 - 1 else h


def cli_partition(key: str, partitions: int = 50) -> int:
    result = CliRunner().invoke(partition_for, [f"--group={key}", "--partitions", str(partitions)])
    assert result.exit_code == 0, result.output
    return int(result.stdout.rsplit("-", 1)[1])


def expected_partition(s: str, n: int) -> int:
    h = plain_java_hash(s)
    return (0 if h == -2 ** 31 else abs(h)) % n


# Publicly documented Java String.hashCode values: "hello" -> 99162322 and "Aa"/"BB" -> 2112 appear in
# many Java tutorials; "polygenelubricants" is the well-known string whose hashCode is Integer.MIN_VALUE.
@pytest.mark.parametrize(("text", "hash_code"), [
    ("", 0), ("hello", 99162322), ("Aa", 2112), ("BB", 2112), ("polygenelubricants", -2 ** 31),
    ("\ud800", 0xD800),   # a one-char String's hashCode is the char; a lone surrogate is one UTF-16 unit
])
def test_known_hash_codes(text: str, hash_code: int) -> None:
    assert java_string_hash(text) == hash_code


def test_min_value_maps_to_partition_zero() -> None:
    # Utils.abs(Integer.MIN_VALUE) == 0; a `& 0x7fffffff` would also give 0, Math.abs would stay negative.
    assert cli_partition("polygenelubricants") == 0


def test_utils_abs_is_not_a_mask() -> None:
    h = java_string_hash("my-txn")
    assert h < 0
    assert kafka_utils_abs(h) == -h != (h & 0x7FFFFFFF)
    assert cli_partition("my-txn") == (-h) % 50


@given(st.text(max_size=30), st.integers(1, 200))
def test_against_independent_implementation(text: str, partitions: int) -> None:
    assert java_string_hash(text) == plain_java_hash(text)
    assert cli_partition(text, partitions) == expected_partition(text, partitions)


@pytest.mark.parametrize("group", ["test-group", "console-consumer-12345", "grüppe-😀", "orders.v2"])
def test_cli_group(group: str) -> None:
    result = CliRunner().invoke(partition_for, ["--group", group])
    assert result.exit_code == 0
    assert result.stdout == f"__consumer_offsets-{expected_partition(group, 50)}\n"


def test_cli_transactional_id_json_and_partitions() -> None:
    result = CliRunner().invoke(partition_for, ["--transactional-id", "my-txn", "--partitions",
                                                                "7", "--json"])
    obj = json.loads(result.stdout)
    assert obj == {"type": "partitionFor", "transactionalId": "my-txn", "topic": "__transaction_state",
                   "partitions": 7, "hashCode": plain_java_hash("my-txn"),
                   "partition": expected_partition("my-txn", 7)}


def test_cli_needs_exactly_one_id() -> None:
    assert CliRunner().invoke(partition_for, []).exit_code == 2
    assert CliRunner().invoke(partition_for, ["--group", "a", "--transactional-id", "b"]).exit_code == 2
