"""What a check found about one file or partition: the one finding type of every command (`verify`, `verify-index`,
`summary`, `txn`, `replicas`). It sits below every layer, beside kdump.errors, so the broker model reports in it too."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Severity = Literal["error", "warning", "note"]
ERROR: Severity = "error"
WARNING: Severity = "warning"
NOTE: Severity = "note"


@dataclass(frozen=True, slots=True)
class Finding:
    """One line of ``kdump verify``/``verify-index`` output, or a finding of ``summary`` and ``txn``.

    ``error``: a lookup relying on this file would read out of bounds or return the wrong data.
    ``warning``: ``summary`` and ``txn`` only: the partition works, but not as its files claim (a
    hanging transaction, a checkpoint past the log end).
    ``note``: true and worth knowing, but a broker's lookups still work (padding, follower layouts,
    places where Kafka's own dump tool would report a mismatch).
    """

    severity: Severity
    check: str                    # short stable name of the rule, e.g. "offset-position-not-batch"
    file: str
    text: str                     # what is wrong
    entry: int | None = None      # slot number in the index file
    offset: int | None = None
    position: int | None = None
    timestamp: int | None = None
    log_says: str | None = None   # what the log holds there

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
