"""Schema table types for Kafka's message-protocol records.

Kafka describes every coordinator record, KRaft metadata record and control record with a JSON
schema (``*/src/main/resources/common/message/*.json``); its generator turns those into Java
classes. kdump reads the same files (``definitions``, kept per release in ``json/``) into these
small frozen tables and drives one generic reader, writer and JSON renderer from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field as dc_field
from enum import Enum
from typing import Any

MAX_VERSION = 0x7FFF
_WORD_START = re.compile(r"(?<=[^A-Z])(?=[A-Z])")  # a capital after anything but a capital

PRIMITIVES = frozenset(
    {"int8", "int16", "int32", "int64", "uint16", "uint32", "float64", "bool", "string", "bytes", "uuid"}
)


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive version range; ``lo > hi`` is the empty range (Kafka's ``"none"``)."""

    lo: int
    hi: int

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        if text is None or text == "none" or text == "":
            return NONE
        if text.endswith("+"):
            return cls(int(text[:-1]), MAX_VERSION)
        if "-" in text:
            lo, hi = text.split("-", 1)
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.lo <= version <= self.hi


NONE = Versions(1, 0)


@dataclass(frozen=True, slots=True)
class Field:
    """One schema field. ``type`` is a primitive name, ``"struct"``, ``"[]<primitive>"`` or ``"[]struct"``."""

    name: str
    type: str
    versions: Versions
    nullable_versions: Versions = NONE
    tag: int | None = None
    tagged_versions: Versions = NONE
    default: Any = None  # None means "the type's natural default"; see ``default_value``
    fields: tuple[Field, ...] = ()
    struct_name: str = ""

    @property
    def json_name(self) -> str:
        """Kafka's camelCase name: the schema name with its first letter lower-cased."""
        return self.name[:1].lower() + self.name[1:]

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:]

    @property
    def is_struct(self) -> bool:
        return self.type == "struct"

    def nullable_in(self, version: int) -> bool:
        return version in self.nullable_versions

    def tagged_in(self, version: int) -> bool:
        return self.tag is not None and version in self.tagged_versions


@dataclass(frozen=True, slots=True)
class MessageSchema:
    """A whole message: its name, record type / api key, version ranges and fields."""

    name: str
    api_key: int | None
    valid_versions: Versions
    flexible_versions: Versions
    fields: tuple[Field, ...] = dc_field(default=())

    def flexible(self, version: int) -> bool:
        return version in self.flexible_versions

    @property
    def type_name(self) -> str:
        """``TopicRecord`` → ``TOPIC_RECORD``: an underscore before each capital that follows a
        lower-case letter (Kafka's generator rule, so ``KRaft`` stays ``KRAFT``)."""
        return _WORD_START.sub("_", self.name).upper()


class _Null(Enum):
    """Marker for a schema ``"default": "null"`` (distinct from "no default given"); an enum member stays
    one object through copies and pickling, so ``is NULL`` holds everywhere."""

    NULL = "NULL"

    def __repr__(self) -> str:
        return "NULL"


NULL = _Null.NULL
