"""--escape: control characters as escapes, a backslash doubled, everything else untouched."""

from __future__ import annotations

import pytest

from kdump.render.decoders import escape_text, escaped, escaped_pair, string_decoder


@pytest.mark.parametrize(("text", "expected"), [
    ("plain café 日本 🙂", "plain café 日本 🙂"),
    ("a\nb\rc\td", "a\\nb\\rc\\td"),
    ("\x00\x1b[31m\x7f", "\\x00\\x1b[31m\\x7f"),
    ("next\x85line\u2028sep\u2029", "next\\x85line\\u2028sep\\u2029"),
    ("back\\slash \\n", "back\\\\slash \\\\n"),
])
def test_escape_text(text: str, expected: str) -> None:
    assert escape_text(text) == expected
    assert "\n" not in escape_text(text) and len(escape_text(text).splitlines()) <= 1


def test_escaped_decoders() -> None:
    assert escaped(string_decoder)(b"k\n1") == "k\\n1"
    pair = escaped_pair(lambda offset, key, value: (f"{offset}\n", None))
    assert pair(7, b"k", None) == ("7\\n", None)
