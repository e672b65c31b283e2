"""The inputs diffed against the real DumpLogSegments: which files, with which options, in which releases.

Files are the committed fixtures plus segments built here with kafka-python (an independent encoder)
whose keys, values and header keys are malformed UTF-8, so the StringDecoder rules are exercised.
"""

from __future__ import annotations

import functools
import gzip
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]
    first: tuple[int, int] = (2, 2)   # the oldest release that has every option used
    last: tuple[int, int] = (99, 0)

    def applies_to(self, release: str) -> bool:
        major_minor = tuple(int(part) for part in release.split(".")[:2])
        return self.first <= major_minor <= self.last


LOG_OPTIONS: tuple[tuple[tuple[str, ...], tuple[int, int]], ...] = (
    ((), (2, 2)),
    (("--deep-iteration",), (2, 2)),
    (("--print-data-log",), (2, 2)),
    (("--print-data-log", "--skip-record-metadata"), (2, 8)),
    (("--deep-iteration", "--skip-record-metadata"), (2, 8)),
    (("--max-bytes", "1500"), (3, 3)),
    (("--key-decoder-class", "kafka.serializer.StringDecoder",
      "--value-decoder-class", "kafka.serializer.StringDecoder"), (2, 2)),
    (("--key-decoder-class", "kafka.serializer.IntegerDecoder"), (2, 2)),
    (("--key-decoder-class", "org.apache.kafka.tools.api.IntegerDecoder",
      "--value-decoder-class", "org.apache.kafka.tools.api.StringDecoder"), (2, 2)),
    (("--value-decoder-class", "kafka.serializer.LongDecoder"), (2, 2)),
    (("--value-decoder-class", "com.example.NoSuchDecoder"), (2, 2)),
)
INDEX_OPTIONS: tuple[tuple[str, ...], ...] = (
    (), ("--verify-index-only",), ("--index-sanity-check",), ("--value-decoder-class", "com.example.NoSuchDecoder"))


def _build(builder: Any) -> bytes:
    """``builder.build()`` of a kafka-python batch builder, with gzip's header time fixed at 0: the same
    inputs every session, so the real tool's outcomes can be cached by their hash (real_kafka._cached)."""
    import kafka.codec

    fixed = SimpleNamespace(GzipFile=functools.partial(gzip.GzipFile, mtime=0))
    real = kafka.codec.gzip
    kafka.codec.gzip = fixed  # type: ignore[assignment]
    try:
        return bytes(builder.build())
    finally:
        kafka.codec.gzip = real


def _files(paths: list[Path]) -> str:
    return ",".join(str(path) for path in paths)


def partition_cases(directory: Path, label: str = "") -> list[Case]:
    label = label or f"{directory.parent.name}/{directory.name}"
    files = sorted(directory.iterdir())
    logs = [f for f in files if f.suffix == ".log"]
    indexes = [f for f in files if f.suffix in (".index", ".timeindex")]
    states = [f for f in files if f.suffix in (".snapshot", ".txnindex")]
    others = [f for f in files if f not in logs + indexes + states]
    cases: list[Case] = []
    if logs:
        for options, first in LOG_OPTIONS:
            cases.append(Case(f"{label} logs {' '.join(options)}".strip(), ("--files", _files(logs), *options),
                              first=first))
    if indexes:
        for options in INDEX_OPTIONS:
            cases.append(Case(f"{label} indexes {' '.join(options)}".strip(),
                              ("--files", _files(indexes), *options)))
    if states:
        cases.append(Case(f"{label} snapshots+txnindex", ("--files", _files(states))))
    for other in others:
        cases.append(Case(f"{label}/{other.name}", ("--files", str(other))))
    return cases


def fixture_cases(fixtures: Path) -> list[Case]:
    """Cases over a copy of fixtures/ at ``fixtures`` (the real tool may rewrite what it dumps)."""
    cases: list[Case] = []
    for group in ("logdirs", "corrupt-index"):
        root = fixtures / group
        for entry in sorted(root.iterdir()):
            if entry.is_dir():
                cases.extend(partition_cases(entry))
            elif group == "logdirs":
                cases.append(Case(f"{group}/{entry.name}", ("--files", str(entry))))
    return cases


# The partitions of fixtures/real-groups/<release>/logs compared, with the decoder of each (its first release).
GROUP_PARTITIONS: tuple[tuple[str, str, tuple[int, int]], ...] = (
    ("__consumer_offsets-0", "--offsets-decoder", (2, 2)),
    ("__share_group_state-0", "--share-group-state-decoder", (4, 0)),
)


def real_group_cases(fixtures: Path) -> list[Case]:
    """The __consumer_offsets and __share_group_state a real 4.x broker wrote for every kind of group
    (fixtures/real-groups, tests/kafka/make_real_fixtures.py --groups): every file of the partitions as
    ``partition_cases`` dumps them, and the logs with their decoder, with and without record metadata."""
    cases: list[Case] = []
    for release_dir in sorted((fixtures / "real-groups").iterdir()):
        for name, decoder, first in GROUP_PARTITIONS:
            directory = release_dir / "logs" / name
            cases.extend(partition_cases(directory, f"real-groups/{release_dir.name}/{name}"))
            logs = _files(sorted(directory.glob("*.log")))
            for options in ((decoder,), (decoder, "--skip-record-metadata")):
                cases.append(Case(f"real-groups/{release_dir.name}/{name} logs {' '.join(options)}",
                                  ("--files", logs, *options), first=max(first, (2, 8)) if len(options) > 1 else first))
    return cases


# Keys, values and header keys that Java's and Python's UTF-8 decoders replace differently: a
# surrogate (ED A0 80), overlong forms, truncated sequences, stray continuation bytes, > U+10FFFF.
MALFORMED_UTF8: tuple[bytes, ...] = (
    b"\xed\xa0\x80", b"a\xed\xa0\x80b", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xf0\x80\x80\xaf", b"\xf4\x90\x80\x80",
    b"\xe2\x82", b"\xe2\x82x", b"\xf0\x9f\x98", b"\x80\x80", b"\xff\xfe", b"caf\xc3", b"\xc3\x28",
    b"\xf8\x88\x80\x80\x80", b"\xed\xbf\xbf\xed\xa0\x80", b"ok \xf0\x9f\x99\x82",
)


def _kafka_python_log(magic: int, compression: int) -> bytes:
    """A segment built by kafka-python's encoders: one record per malformed string, as key and value
    (kafka-python takes header keys as str, so they stay valid UTF-8)."""
    from kafka.record.default_records import DefaultRecordBatchBuilder
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    out = bytearray()
    offset = 0
    for start in range(0, len(MALFORMED_UTF8), 4):
        chunk = MALFORMED_UTF8[start:start + 4]
        if magic == 2:
            builder = DefaultRecordBatchBuilder(magic=2, compression_type=compression, is_transactional=False,
                                                producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                                batch_size=1 << 20)
            for i, text in enumerate(chunk):
                builder.append(i, timestamp=1700000000000 + offset + i, key=text, value=b"v" + text + b"." * 64,
                               headers=[(text.decode("latin-1"), b"h")])
            batch = bytearray(_build(builder))
            batch[0:8] = offset.to_bytes(8, "big")  # base offset
        else:
            builder = LegacyRecordBatchBuilder(magic=magic, compression_type=compression, batch_size=1 << 20)
            for i, text in enumerate(chunk):
                builder.append(i if compression and magic == 1 else offset + i, timestamp=1700000000000 + i if magic else None,
                               key=text, value=b"v" + text + b"." * 64)
            batch = bytearray(_build(builder))
            if compression:  # the wrapper carries the last inner offset
                batch[0:8] = (offset + len(chunk) - 1).to_bytes(8, "big")
        out += batch
        offset += len(chunk)
    return bytes(out)


def generated_cases(root: Path) -> list[Case]:
    """Segments with malformed UTF-8 in every magic, uncompressed and gzip, under ``root``."""
    cases: list[Case] = []
    for magic in (0, 1, 2):
        for compression, codec in ((0, "none"), (1, "gzip")):
            directory = root / f"utf8-v{magic}-{codec}-0"
            directory.mkdir(parents=True, exist_ok=True)
            log = directory / "00000000000000000000.log"
            log.write_bytes(_kafka_python_log(magic, compression))
            label = f"generated/{directory.name}"
            for options, first, last in (
                    (("--print-data-log",), (2, 2), (99, 0)),
                    (("--print-data-log", "--skip-record-metadata"), (2, 8), (99, 0)),
                    # keys shorter than 4 bytes: the decoder fails in the middle of a record line
                    (("--key-decoder-class", "kafka.serializer.IntegerDecoder"), (2, 2), (3, 9)),
                    (("--key-decoder-class", "org.apache.kafka.tools.api.IntegerDecoder"), (3, 8), (99, 0))):
                cases.append(Case(f"{label} {' '.join(options)}", ("--files", str(log), *options),
                                  first=first, last=last))
    return cases


# One unit of a large value: malformed and multi-byte UTF-8 (an odd length, so the 1 MiB pieces a
# large value is decoded in end at every position of it, inside characters and malformed sequences).
LARGE_VALUE_UNIT = b"".join(MALFORMED_UTF8) + "é€😀 ".encode() + b"\xe2\x82"


LARGE_FILLER = b"kdump filler, well-formed ASCII. " * ((14 << 20) // 33 + 1)


def large_value_cases(root: Path) -> list[Case]:
    """Batches (by kafka-python; uncompressed, gzip, zstd) holding a 3 MiB value, too large for kdump to hold whole
    while it prints: it decodes the value piece by piece, and must print Kafka's line all the same."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    value = (LARGE_VALUE_UNIT * ((3 << 20) // len(LARGE_VALUE_UNIT) + 1))[:(3 << 20) + 1]
    cases: list[Case] = []
    for compression, codec in ((0, "none"), (1, "gzip"), (4, "zstd")):
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=compression, is_transactional=False,
                                            producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
        builder.append(0, timestamp=1700000000000, key=b"big", value=value, headers=[("h\u00e9", b"x")])
        builder.append(1, timestamp=1700000000001, key=None, value=value[7:], headers=[])
        builder.append(2, timestamp=1700000000002, key=b"small", value=b"after", headers=[])
        directory = root / f"large-value-{codec}-0"
        directory.mkdir(parents=True, exist_ok=True)
        log = directory / "00000000000000000000.log"
        log.write_bytes(bytes(_build(builder)))
        for options, first in ((("--print-data-log",), (2, 2)), (("--print-data-log", "--skip-record-metadata"), (2, 8))):
            cases.append(Case(f"generated/{directory.name} {' '.join(options)}", ("--files", str(log), *options),
                              first=first))
    # An uncompressed batch past the 16 MiB kdump reads whole (log.batches.MAX_HELD_ENTRY_BYTES): its
    # records are read from the file a window at a time. In a damaged copy the last record claims 63
    # bytes where 16 are left: Kafka prints the records before it, then its iterator fails.
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
    builder.append(0, timestamp=1700000000000, key=b"big", value=value, headers=[])
    builder.append(1, timestamp=1700000000001, key=b"k", value=b"small", headers=[("h", b"v")])
    # The filler that takes the batch past 16 MiB is ASCII: the malformed 3 MiB value before it
    # already crosses the pieces, and 14 MiB more of it would cost ~3 s of decoding per release and option.
    builder.append(2, timestamp=1700000000001, key=None, value=LARGE_FILLER[:14 << 20], headers=[])
    builder.append(3, timestamp=1700000000002, key=b"small", value=b"after", headers=[])   # 16 bytes + 1
    healthy = bytes(_build(builder))
    directory = root / "oversized-plain-0"
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / "00000000000000000000.log"
    log.write_bytes(healthy)
    damaged = directory / "00000000000000000004.log"
    damaged.write_bytes(healthy[:-17] + b"\x7e" + healthy[-16:])
    for path, options in ((log, ("--deep-iteration",)), (log, ("--print-data-log",)),
                          (damaged, ("--deep-iteration",)), (damaged, ("--print-data-log",))):
        cases.append(Case(f"generated/{directory.name}/{path.name} {' '.join(options)}",
                          ("--files", str(path), *options)))
    return cases


def odd_file_cases(root: Path) -> list[Case]:
    """Files Kafka's tool crashes on or reports specially, derived from fixtures under ``root``."""
    directory = root / "odd-0"
    directory.mkdir(parents=True, exist_ok=True)
    cases: list[Case] = []

    no_dot = directory / "notes"
    no_dot.write_text("not a Kafka file\n")
    cases.append(Case("odd/notes (no dot)", ("--files", str(no_dot))))

    snapshot = (FIXTURES / "logdirs" / "txn-0" / "00000000000000000027.snapshot").read_bytes()
    bad_crc = directory / "00000000000000000001.snapshot"
    bad_crc.write_bytes(snapshot[:-1] + bytes([snapshot[-1] ^ 0xFF]))
    short = directory / "00000000000000000002.snapshot"
    short.write_bytes(snapshot[:9])
    negative = directory / "00000000000000000003.snapshot"
    negative.write_bytes(b"\x00\x01" + b"\x00" * 4 + b"\xff\xff\xff\xff")  # version 1, crc, count -1
    oversized = directory / "00000000000000000004.snapshot"
    oversized.write_bytes(b"\x00\x01" + b"\x00" * 4 + (1000).to_bytes(4, "big") + b"\x00" * 20)
    for path in (bad_crc, short, negative, oversized):
        cases.append(Case(f"odd/{path.name}", ("--files", str(path))))

    # An uncompressed batch whose second record claims more bytes than it has: Kafka prints the first
    # record, then its record iterator fails.
    log = bytearray((FIXTURES / "logdirs" / "plain-0" / "00000000000000000000.log").read_bytes())
    first_batch = int.from_bytes(log[8:12], "big") + 12
    broken = directory / "00000000000000000000.log"
    records_start = 61  # after the v2 batch header
    assert log[records_start] < 0x80  # a one-byte zigzag varint length
    second = records_start + 1 + (log[records_start] >> 1)
    log[second] = 0x7E  # the second record's length varint: 63
    broken.write_bytes(bytes(log[:first_batch]))
    for options in ((), ("--deep-iteration",), ("--print-data-log",)):
        cases.append(Case(f"odd/broken-record.log {' '.join(options)}".strip(), ("--files", str(broken), *options)))

    missing = directory / "00000000000000000099.log"
    cases.append(Case("odd/missing.log", ("--files", str(missing))))
    return cases


def usage_cases() -> list[Case]:
    """Bad command lines: Kafka prints its usage (or joptsimple's exception) and exits 1."""
    return [Case("usage: no options", ()), Case("usage: --files without a value", ("--files",)),
            Case("usage: unknown option", ("--files", "x.log", "--bogus"))]


def _v2_segment(records: list[tuple[bytes | None, bytes | None]]) -> bytes:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for i, (key, value) in enumerate(records):
        builder.append(i, timestamp=1700000000000 + i, key=key, value=value, headers=[])
    return bytes(_build(builder))


def internal_topic_cases(root: Path) -> list[Case]:
    """Segments of __consumer_offsets, __transaction_state and __cluster_metadata (payloads from
    kdump's schema encoder, batches from kafka-python), dumped with their topic's decoder."""
    from kdump.format.messages import tables
    from kdump.format.messages.encode import coordinator_key, coordinator_value, metadata_record
    from kdump.render.dialect import LATEST_RELEASE

    gc = tables.group_coordinator(LATEST_RELEASE)
    offsets = [
        (coordinator_key(gc[1][0], 1, {"group": "g", "topic": "t", "partition": 0}),
         coordinator_value(gc[1][1], 1, {"offset": 42, "metadata": "m", "commitTimestamp": 1700000000000,
                                         "expireTimestamp": -1})),
        (coordinator_key(gc[1][0], 1, {"group": "g", "topic": "t", "partition": 1}),
         coordinator_value(gc[1][1], 3, {"offset": 7, "leaderEpoch": 2, "metadata": "",
                                         "commitTimestamp": 1700000000001})),
        (coordinator_key(gc[2][0], 2, {"group": "g"}),
         coordinator_value(gc[2][1], 3, {"protocolType": "consumer", "generation": 1, "protocol": "range",
                                         "leader": None, "currentStateTimestamp": -1, "members": []})),
        (coordinator_key(gc[1][0], 1, {"group": "g", "topic": "t", "partition": 1}), None),
    ]
    txn_key, txn_value = tables.transaction_log(LATEST_RELEASE)[0]
    transactions = [
        (coordinator_key(txn_key, 0, {"TransactionalId": "tx"}),
         coordinator_value(txn_value, 0, {"ProducerId": 5, "ProducerEpoch": 1, "TransactionTimeoutMs": 60000,
                                          "TransactionStatus": 0, "TransactionPartitions": [],
                                          "TransactionLastUpdateTimestampMs": 1700000000000,
                                          "TransactionStartTimestampMs": -1})),
        (coordinator_key(txn_key, 0, {"TransactionalId": "tx"}), None),
    ]
    md = tables.metadata(LATEST_RELEASE)
    metadata = [(None, metadata_record(md[2], 0, {"name": "t", "topicId": "Uj5wn_FqTXirEASvVZRY1w"}))]

    cases: list[Case] = []
    for topic, records, flag, first in (("__consumer_offsets-0", offsets, "--offsets-decoder", (2, 2)),
                                        ("__transaction_state-0", transactions, "--transaction-log-decoder", (2, 2)),
                                        ("__cluster_metadata-0", metadata, "--cluster-metadata-decoder", (2, 8))):
        directory = root / topic
        directory.mkdir(parents=True, exist_ok=True)
        log = directory / "00000000000000000000.log"
        log.write_bytes(_v2_segment(records))
        for options in ((flag,), (flag, "--skip-record-metadata")):
            cases.append(Case(f"{topic} {' '.join(options)}", ("--files", str(log), *options),
                              first=max(first, (2, 8)) if "--skip-record-metadata" in options else first))
    return cases
