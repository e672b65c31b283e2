"""``kdump.words``: kdump's own count phrases in correct English ("1 partition", "2 batches")."""

from __future__ import annotations

import pytest

from kdump.words import counted


@pytest.mark.parametrize(("n", "noun", "expected"), [
    (1, "partition", "1 partition"), (0, "partition", "0 partitions"), (2, "segment", "2 segments"),
    (1, "batch", "1 batch"), (3, "batch", "3 batches"), (1, "entry", "1 entry"), (5, "entry", "5 entries"),
    (2, "key", "2 keys"), (2, "complete batch", "2 complete batches"), (2, ".txnindex entry", "2 .txnindex entries"),
    (1, "unreadable path", "1 unreadable path"), (0, "error", "0 errors")])
def test_counted(n: int, noun: str, expected: str) -> None:
    assert counted(n, noun) == expected
