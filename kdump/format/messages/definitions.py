"""Kafka's message-definition JSON (kept in ``json/``, one folder per release) read into schema tables.

The files are Kafka's own, copied from the released jars by ``tests/kafka/import_message_json.py``;
``json/index.json`` says which folder holds each schema of each release. A schema is parsed the first
time a decoder asks for it, so a dump that decodes no internal topic reads none of them.
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from kdump.format.messages.schema import NULL, PRIMITIVES, Field, MessageSchema, Versions

Release = tuple[int, int]
_INT_TYPES = frozenset({"int8", "int16", "int32", "int64", "uint16", "uint32"})


_FOLDER = Path(__file__).with_name("json")


def _read_text(*parts: str) -> str:
    return _FOLDER.joinpath(*parts).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _index() -> dict[Release, dict[str, dict[str, str]]]:
    raw: dict[str, dict[str, dict[str, str]]] = json.loads(_read_text("index.json"))
    return {_release(name): registries for name, registries in raw.items()}


def _release(text: str) -> Release:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def releases() -> tuple[Release, ...]:
    """The releases whose definitions are kept, oldest first."""
    return tuple(sorted(_index()))


def snapshot(release: Release) -> Release:
    """The kept release whose definitions ``release`` has: the newest one not after it (the oldest
    kept one for anything older)."""
    kept = releases()
    return max((r for r in kept if r <= release), default=kept[0])


def registry(kind: str, release: Release) -> dict[str, MessageSchema]:
    """Every schema of one registry (``group``, ``transaction``, ``share``, ``metadata``, ``remote-log``,
    ``clients``) as ``release`` defines it, by file name."""
    folders = _index()[snapshot(release)].get(kind, {})
    return {name: _load(folder, name) for name, folder in folders.items()}


@cache
def _load(folder: str, name: str) -> MessageSchema:
    return parse(_read_text(folder, f"{name}.json"))


def parse(text: str) -> MessageSchema:
    """One message definition (Kafka allows ``//`` comment lines, used for the licence header)."""
    spec: dict[str, Any] = json.loads("\n".join(
        line for line in text.splitlines() if not line.lstrip().startswith("//")))
    common = {s["name"]: s for s in spec.get("commonStructs", ())}
    return MessageSchema(
        name=spec["name"],
        api_key=_int(spec.get("apiKey")),
        valid_versions=Versions.parse(spec["validVersions"]),
        flexible_versions=Versions.parse(spec.get("flexibleVersions", "none")),
        fields=tuple(_field(f, common) for f in spec["fields"]),
    )


def _field(spec: dict[str, Any], common: dict[str, dict[str, Any]]) -> Field:
    kind: str = spec["type"]
    element = kind[2:] if kind.startswith("[]") else kind
    struct_name = ""
    children: tuple[Field, ...] = ()
    if element not in PRIMITIVES:
        struct_name = element
        members = spec.get("fields") or common[element]["fields"]
        children = tuple(_field(f, common) for f in members)
        kind = "[]struct" if kind.startswith("[]") else "struct"
    return Field(
        name=spec["name"],
        type=kind,
        # Kafka's FieldSpec: a field given only taggedVersions exists in exactly those versions.
        versions=Versions.parse(spec.get("versions", spec.get("taggedVersions"))),
        nullable_versions=Versions.parse(spec.get("nullableVersions")),
        tag=_int(spec.get("tag")),
        tagged_versions=Versions.parse(spec.get("taggedVersions")),
        default=_default(spec.get("default"), kind),
        fields=children,
        struct_name=struct_name,
    )


def _int(value: Any) -> int | None:
    """A number Kafka's JSON may write as a string (``"tag": "2"`` in BrokerRegistrationChangeRecord 3.7-4.0)."""
    return None if value is None else int(value)


def _default(value: Any, kind: str) -> Any:
    """A schema ``default`` as the value it stands for (None: the type's natural default)."""
    if not isinstance(value, str):  # absent, or written as a JSON number / boolean
        return value
    text = str(value).strip()
    if text == "null":
        return NULL
    if kind in _INT_TYPES:
        negative = text.startswith("-")
        digits = text.lstrip("-")
        number = int(digits, 16) if digits.lower().startswith("0x") else int(digits)
        return -number if negative else number
    if kind == "bool":
        return text == "true"
    if kind == "float64":
        return float(text)
    return text if kind == "string" and text else None
