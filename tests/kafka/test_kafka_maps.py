"""kdump.render.kafka_maps against the real collections: java.util.HashMap and the Scala library
(2.12 from the Kafka 2.2.2 jars, 2.13 from 3.9.2) iterate the same paths in the same order."""

from __future__ import annotations

import random
import subprocess
from collections.abc import Callable

import pytest
import real_kafka

from kdump.render import kafka_maps


def _groups() -> list[list[str]]:
    rng = random.Random(20261122)
    groups = []
    for size in list(range(1, 60)) * 2:  # crosses the 12-, 24- and 48-entry resizes
        paths = (f"/var/lib/kafka/t{rng.randint(0, 999)}-{rng.randint(0, 9)}/{rng.randint(0, 10**9):020d}.log"
                 for _ in range(size))
        groups.append(list(dict.fromkeys(paths)))
    return groups


@pytest.mark.parametrize(("release", "scala_order"), [
    ("2.2.2", kafka_maps.scala212_hash_map_order),
    ("3.9.2", kafka_maps.scala213_hash_map_order),
])
def test_hash_map_orders_match_the_jvm(release: str, scala_order: Callable[[list[str]], list[str]]) -> None:
    lib = real_kafka.kafka_lib(release)
    classes = real_kafka.compiled("MapOrder.java", f"{lib}/*")
    groups = _groups()
    stdin = "".join("\n".join(group) + "\n\n" for group in groups)
    lines = subprocess.run(["java", "-cp", f"{lib}/*:{classes}", "MapOrder"], input=stdin, capture_output=True,
                           text=True, check=True, timeout=300).stdout.splitlines()
    for i, group in enumerate(groups):
        assert lines[2 * i].split("\t")[1:] == kafka_maps.java_hash_map_order(group)
        assert lines[2 * i + 1].split("\t")[1:] == scala_order(group)
