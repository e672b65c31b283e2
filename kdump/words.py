"""Counts in kdump's own sentences: "1 partition", "2 partitions", "3 entries", "0 errors".

A leaf module every layer may import (like ``kdump.errors``). Only for lines kdump words itself:
lines that mimic Kafka's tools keep Kafka's wording byte for byte.
"""

from __future__ import annotations


def plural(noun: str) -> str:
    """English plural of the nouns kdump counts: batch -> batches, entry -> entries, file -> files."""
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "o", "u", ""):
        return noun[:-1] + "ies"
    return noun + "s"


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1 (the last word of ``noun`` takes the plural)."""
    return f"{n} {noun if n == 1 else plural(noun)}"


__all__ = ["counted", "plural"]
