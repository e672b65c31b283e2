"""Times as people type them and as kdump shows them: one parser, one formatter for every command.

Input (``parse_time_input``): epoch milliseconds (Kafka's unit), ISO-8601 (``2024-05-01T12:00:00Z``,
``+02:00`` offsets, fractional seconds, a date alone is midnight UTC, no zone means UTC) or a time
relative to now (``now``, ``-1h``, ``-30m``, ``-2d``, ``-45s``, ``+10m``).

Output (``format_timestamp``): ``epoch`` is the number Kafka's tools print, ``iso`` an ISO-8601 instant
with milliseconds (``2024-05-01T12:00:00.123Z``, or ``+02:00`` style in a chosen zone), ``both`` the
number followed by the instant in brackets. Kafka writes -1 (``RecordBatch.NO_TIMESTAMP``) where a
record has no time and a negative or corrupt value can be anything, so negative times, and times no
calendar can show, stay raw numbers in every format.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Literal, get_args

from kdump.errors import UsageError

TimeFormat = Literal["epoch", "iso", "both"]
TIME_FORMATS: tuple[TimeFormat, ...] = get_args(TimeFormat)

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_ONE_MS = datetime.timedelta(milliseconds=1)
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_RELATIVE = re.compile(r"([+-])(\d+)(ms|s|m|h|d|w)")
_EPOCH_MS = re.compile(r"-?\d+")

TIME_INPUT_HELP = ("epoch milliseconds, ISO-8601 (2024-05-01T12:00:00Z, +02:00 offsets, a date alone is "
                   "midnight UTC) or relative to now (now, -1h, -30m, -2d, -45s)")


def parse_time_input(text: str, now_ms: int) -> int:
    """Milliseconds since the epoch for what a person typed; ``now_ms`` anchors relative times."""
    value = text.strip()
    if _EPOCH_MS.fullmatch(value):
        return int(value)
    if value.lower() == "now":
        return now_ms
    relative = _RELATIVE.fullmatch(value.lower())
    if relative is not None:
        sign, amount, unit = relative.groups()
        delta = int(amount) * _UNIT_MS[unit]
        return now_ms - delta if sign == "-" else now_ms + delta
    try:
        when = datetime.datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{text!r} is not a time: give {TIME_INPUT_HELP}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    # Whole milliseconds by integer arithmetic, rounding down as Java's Instant.toEpochMilli does.
    return (when - _EPOCH) // _ONE_MS


def parse_time_zone(name: str) -> datetime.tzinfo:
    """An IANA zone (``Europe/Paris``, ``UTC``) for ``--tz``."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # here: 10 ms of every command's start-up

    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"{name!r} is not an IANA time zone name (such as UTC or Europe/Paris)") from None


def format_timestamp(ms: int, fmt: TimeFormat, tz: datetime.tzinfo | None = None) -> str:
    """``ms`` shown as ``fmt`` in zone ``tz`` (UTC when None); see the module doc for the forms."""
    if fmt == "epoch" or ms < 0:
        return str(ms)
    try:
        when = (_EPOCH + ms * _ONE_MS).astimezone(tz or datetime.UTC)
    except OverflowError:  # past the calendar's end
        return str(ms)
    # 2024-05-01T12:00:00.123Z, or the zone's offset (+02:00, with :SS when it has seconds) where it is not 0
    instant = when.isoformat(timespec="milliseconds")
    if when.utcoffset() == datetime.timedelta(0):
        instant = instant[:-len("+00:00")] + "Z"
    return instant if fmt == "iso" else f"{ms} ({instant})"


@dataclass(frozen=True)
class TimeStyle:
    """How a command shows times (``--time-format`` and ``--tz``), passed to renderers as one value."""

    fmt: TimeFormat = "epoch"
    tz: datetime.tzinfo | None = None

    def __call__(self, ms: int) -> str:
        return format_timestamp(ms, self.fmt, self.tz)


__all__ = ["TIME_FORMATS", "TIME_INPUT_HELP", "TimeFormat", "TimeStyle", "format_timestamp", "parse_time_input",
           "parse_time_zone"]
