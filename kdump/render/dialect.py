"""Which Kafka's output to reproduce: ``--kafka-version`` mapped to the small set of text differences.

Default is Kafka 4.3, the first release with the Java tool (J); 3.3-4.2 is the Scala tool (S) most
deployed brokers ship. The boundaries come from diffing DumpLogSegments.scala at every release tag
(docs/dialects-research.md) and the spec (§2.2, §2.7, §2.9).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kdump.errors import UsageError

DEFAULT_KAFKA_VERSION = "4.3"
OLDEST_SUPPORTED = (2, 2)


@dataclass(frozen=True, slots=True)
class Dialect:
    version: tuple[int, int, int]

    @property
    def major_minor(self) -> tuple[int, int]:
        return self.version[0], self.version[1]

    @property
    def label(self) -> str:
        return ".".join(str(part) for part in self.version)

    @property
    def decoders_created_per_file(self) -> bool:
        """2.2 created the key/value decoders once, before the first file; 2.3+ for every .log file."""
        return self.major_minor >= (2, 3)

    @property
    def is_java(self) -> bool:
        """4.3+: org.apache.kafka.tools.DumpLogSegments (Java port)."""
        return self.major_minor >= (4, 3)

    @property
    def log_header(self) -> str:
        return "Log starting offset: " if self.major_minor >= (3, 3) else "Starting offset: "

    @property
    def upper_codec_names(self) -> bool:
        return self.major_minor < (3, 0)

    @property
    def has_delete_horizon(self) -> bool:
        return self.major_minor >= (3, 2)

    @property
    def has_max_bytes(self) -> bool:
        return self.major_minor >= (3, 3)

    @property
    def size_field_names(self) -> tuple[str, str]:
        return ("keySize", "valueSize") if self.major_minor >= (2, 8) else ("keysize", "valuesize")

    @property
    def superset_record_line(self) -> bool:
        """2.8.x (KAFKA-6181, never reverted on the 2.8 branch) repeated batch fields on every record line."""
        return self.major_minor == (2, 8)

    @property
    def key_printed_for_null_value(self) -> bool:
        """Before 2.4 (KAFKA-8745) a record with a null value printed neither key nor payload."""
        return self.major_minor >= (2, 4)

    @property
    def legacy_crc_brace(self) -> bool:
        """S 3.0-4.2 printed ``isValid: true crc: 123}`` (stray brace); J fixed it."""
        return (3, 0) <= self.major_minor < (4, 3)

    @property
    def legacy_record_crc_first(self) -> bool:
        """2.2-2.8 printed legacy record validity as `` crc: C isvalid: B``."""
        return self.major_minor < (3, 0)

    def control_type_name(self, type_id: int) -> str:
        """ControlRecordType's constant for ``type_id`` in that Kafka (the numbering moved in 3.0)."""
        if type_id in (0, 1):
            return ("ABORT", "COMMIT")[type_id]
        if self.major_minor < (2, 7):
            names: dict[int, str] = {}
        elif self.major_minor < (3, 0):
            names = {2: "QUORUM_REASSIGNMENT", 3: "LEADER_CHANGE"}
        elif self.major_minor < (3, 8):
            names = {2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER"}
        else:
            names = {2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER", 5: "KRAFT_VERSION",
                     6: "KRAFT_VOTERS"}
        return names.get(type_id, "UNKNOWN")

    @property
    def leader_change_json(self) -> bool:
        return self.major_minor >= (4, 1)

    @property
    def snapshot_control_json(self) -> bool:
        return self.major_minor >= (3, 3)

    @property
    def kraft_control_json(self) -> bool:
        return self.major_minor >= (3, 8)

    @property
    def keyless_payload_bar(self) -> bool:
        """With --skip-record-metadata and no key, J prints ``| payload: X``; S prints `` payload: X``."""
        return self.is_java

    @property
    def non_consecutive_from_minus_one(self) -> bool:
        """J compares the first record against -1 (reports ``-1 is followed by N``)."""
        return self.is_java

    @property
    def non_consecutive_ascending(self) -> bool:
        return self.is_java

    @property
    def non_consecutive_header(self) -> str:
        return "Non-consecutive offsets in :" if self.major_minor < (2, 3) else "Non-consecutive offsets in "

    @property
    def ignores_names_without_dot(self) -> bool:
        """4.3 says ``Ignoring unknown file`` for a name without a dot; older tools crash on it."""
        return self.is_java

    @property
    def generated_snapshot_reader(self) -> bool:
        """4.0+ read producer snapshots with a generated message class (its own schema-error texts)."""
        return self.major_minor >= (4, 0)

    @property
    def snapshot_optional_long(self) -> bool:
        """3.5+ print currentTxnFirstOffset as OptionalLong[...]; older as Scala Some(...)/None."""
        return self.major_minor >= (3, 5)


_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")


def parse_kafka_version(text: str) -> Dialect:
    match = _VERSION.match(text.strip())
    if not match:
        raise UsageError(f"--kafka-version must look like 3.9 or 2.8.1, not {text!r}")
    version = (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))
    if version[:2] < OLDEST_SUPPORTED:
        raise UsageError(f"--kafka-version {text}: kdump reproduces Kafka 2.2 and later")
    return Dialect(version)
