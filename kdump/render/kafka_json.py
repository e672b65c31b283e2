"""Render read messages as Kafka's generated ``*JsonConverter`` + Jackson ``toString()`` print them.

Two steps: ``to_tree`` turns a ``MessageData`` into an ordered tree of plain Python values (dicts
keep schema order, bytes are already base64 text, uuids Kafka text, doubles a ``JavaDouble``), so
callers can splice in sub-trees as Kafka's dump tool does; ``dumps`` prints a tree as Jackson's
compact JSON.
"""

from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from kdump.format.messages.protocol import MessageData, Uuid, is_default
from kdump.format.messages.schema import Field

Tree = Any  # dict[str, Tree] | list[Tree] | str | int | bool | None | JavaDouble


@dataclass(frozen=True, slots=True)
class JavaDouble:
    """A float64 value, printed with Java's ``Double.toString`` rules."""

    value: float

    def __str__(self) -> str:
        return java_double(self.value)


def java_double(d: float) -> str:
    """Java ``Double.toString``: plain decimal in [1e-3, 1e7), else ``d.dddE±n``; shortest digits."""
    if math.isnan(d):
        return "NaN"
    if math.isinf(d):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0:
        return "-0.0" if math.copysign(1.0, d) < 0 else "0.0"
    sign = "-" if d < 0 else ""
    digits, exp = _shortest_digits(abs(d))
    if 1e-3 <= abs(d) < 1e7:
        point = exp + 1  # digits before the decimal point
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{sign}{digits}{'0' * (point - len(digits))}.0"
        return f"{sign}{digits[:point]}.{digits[point:]}"
    mantissa = digits[0] + "." + (digits[1:] or "0")
    return f"{sign}{mantissa}E{exp}"


def _shortest_digits(d: float) -> tuple[str, int]:
    """Shortest round-trip digits of ``d`` (> 0) and its decimal exponent (scientific notation)."""
    _sign, digit_tuple, exponent = Decimal(repr(d)).as_tuple()
    digits = "".join(map(str, digit_tuple))
    exp = len(digits) + int(exponent) - 1
    return digits.rstrip("0") or "0", exp


def to_tree(data: MessageData) -> dict[str, Tree]:
    """The JSON object Kafka's converter writes for ``data`` at ``data.version``."""
    node: dict[str, Tree] = {}
    version = data.version
    for f in data.present():
        value = data.values[f.name]
        if f.tagged_in(version) and is_default(f, value, version):
            continue
        node[f.json_name] = _value_tree(f, value)
    return node


def _value_tree(f: Field, value: Any) -> Tree:
    if value is None:
        return None
    if f.is_struct:
        return to_tree(value)
    if f.is_array:
        if f.element_type == "struct":
            return [to_tree(v) for v in value]
        return [_scalar_tree(f.element_type, v) for v in value]
    return _scalar_tree(f.type, value)


def _scalar_tree(kind: str, value: Any) -> Tree:
    if value is None:
        return None
    if kind == "bytes":
        return base64.b64encode(bytes(value)).decode("ascii")
    if kind == "uuid":
        return str(value if isinstance(value, Uuid) else Uuid(bytes(value)))
    if kind == "float64":
        return JavaDouble(float(value))
    return value


def dumps(tree: Tree) -> str:
    """Jackson's compact serialisation of a tree."""
    if tree is None:
        return "null"
    if tree is True:
        return "true"
    if tree is False:
        return "false"
    if isinstance(tree, str):
        return quote(tree)
    if isinstance(tree, (int, JavaDouble)):
        return str(tree)
    if isinstance(tree, float):
        return java_double(tree)
    if isinstance(tree, dict):
        return "{" + ",".join(f"{quote(k)}:{dumps(v)}" for k, v in tree.items()) + "}"
    if isinstance(tree, list):
        return "[" + ",".join(dumps(v) for v in tree) + "]"
    raise TypeError(f"cannot render {type(tree).__name__} as JSON")


def render(data: MessageData) -> str:
    """``dumps(to_tree(data))``."""
    return dumps(to_tree(data))


_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_TO_ESCAPE = re.compile('["\\\\\x00-\x1f]')


def quote(text: str) -> str:
    """A JSON string as Jackson writes it: ``"``, ``\\`` and control characters escaped, the rest as is."""
    return '"' + _TO_ESCAPE.sub(_escape, text) + '"'


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    return _SHORT_ESCAPES.get(char) or f"\\u{ord(char):04X}"
