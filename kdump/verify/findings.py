"""What a check found about one file: a ``Finding`` of ``kdump verify``, a ``LogFinding`` of ``summary``/``txn``."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Severity = Literal["error", "note"]
ERROR: Severity = "error"
NOTE: Severity = "note"


@dataclass(frozen=True, slots=True)
class Finding:
    """One line of ``kdump verify-index`` output.

    ``error``: a lookup relying on this file would read out of bounds or return the wrong data.
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


@dataclass(frozen=True, slots=True)
class LogFinding:
    """Something ``kdump summary``/``kdump txn`` reports: severity is "error", "warning" or "info"."""

    severity: str
    path: str
    offset: int | None
    text: str
