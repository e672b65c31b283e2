"""The iteration order of the hash maps DumpLogSegments keeps its end-of-run summaries in.

Kafka prints "Mismatches in", "Non-consecutive offsets in" and the time-index summaries by walking a
hash map keyed by the file's absolute path, so the files come out in hash order, not in the order
they were dumped. That order is deterministic (String.hashCode) but differs by collection library:
Scala 2.12 ``mutable.HashMap`` (the kafka_2.12 tools of 2.x), Scala 2.13 ``mutable.HashMap`` (3.0-4.2)
and ``java.util.HashMap`` (the Java tool of 4.3+). Each is reproduced here from its insertion and
resize rules (all three start with 16 buckets and a 0.75 load factor).
"""

from __future__ import annotations

from collections.abc import Iterable

_MASK = 0xFFFFFFFF


def _int32(value: int) -> int:
    value &= _MASK
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_hash(text: str) -> int:
    """String.hashCode over UTF-16 code units."""
    h = 0
    data = text.encode("utf-16-be", errors="surrogatepass")  # a lone surrogate is one UTF-16 unit, as in Java
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & _MASK
    return _int32(h)


def _spread(h: int) -> int:
    """HashMap.hash / Scala 2.13 improveHash: h ^ (h >>> 16)."""
    return _int32(h ^ ((h & _MASK) >> 16))


def java_hash_map_order(keys: Iterable[str]) -> list[str]:
    """java.util.HashMap filled by computeIfAbsent (as the Java tool does): buckets ascending; that
    method puts a new key at the head of its bucket, so newest first inside one (a resize keeps it),
    and it resizes before an insert only once the map already holds more than the threshold."""
    ordered = list(dict.fromkeys(keys))
    capacity = 16
    while len(ordered) - 1 > capacity * 3 // 4:
        capacity *= 2
    position = {key: i for i, key in enumerate(ordered)}
    return sorted(ordered, key=lambda k: (_spread(java_string_hash(k)) & (capacity - 1), -position[k]))


def scala213_hash_map_order(keys: Iterable[str]) -> list[str]:
    """Scala 2.13 mutable.HashMap: buckets ascending; inside a bucket by hash (signed), then insertion."""
    ordered = list(dict.fromkeys(keys))
    capacity = 16
    size = 0
    for _ in ordered:  # grows before an insert that would reach the threshold
        if size + 1 >= int(capacity * 0.75):
            capacity *= 2
        size += 1
    return sorted(ordered, key=lambda k: (_spread(java_string_hash(k)) & (capacity - 1),
                                          _spread(java_string_hash(k))))


def _byteswap32(v: int) -> int:
    hc = (v * 0x9E3775CD) & _MASK
    hc = int.from_bytes(hc.to_bytes(4, "big"), "little")
    return (hc * 0x9E3775CD) & _MASK


# HashTable's seed is bitCount(length - 1) of the initial 16-bucket table; a resize does not renew it.
_SCALA212_SEED = 4


def _scala212_index(h: int, length: int) -> int:
    ones = length - 1
    i = _byteswap32(h)
    rotation = _SCALA212_SEED % 32
    rotated = ((i >> rotation) | (i << (32 - rotation))) & _MASK
    exponent = 32 - ones.bit_length()  # Integer.numberOfLeadingZeros(ones)
    return (rotated >> exponent) & ones


def scala212_hash_map_order(keys: Iterable[str]) -> list[str]:
    """Scala 2.12 mutable.HashMap (HashTable): new entries go to the front of their bucket, a resize
    re-adds from the last bucket down, and iteration runs from the last bucket to the first."""
    table: list[list[str]] = [[] for _ in range(16)]
    size = 0
    for key in dict.fromkeys(keys):
        table[_scala212_index(java_string_hash(key), len(table))].insert(0, key)
        size += 1
        if size > len(table) * 750 // 1000:
            old = table
            table = [[] for _ in range(2 * len(old))]
            for bucket in reversed(old):
                for entry in bucket:
                    table[_scala212_index(java_string_hash(entry), len(table))].insert(0, entry)
    return [key for bucket in reversed(table) for key in bucket]


def kafka_map_order(keys: Iterable[str], map_kind: str) -> list[str]:
    """The order a tool walks a summary map with these keys (``map_kind``: ``Dialect.summary_map_order``)."""
    orders = {"java": java_hash_map_order, "scala213": scala213_hash_map_order, "scala212": scala212_hash_map_order}
    return orders[map_kind](keys)
