"""Time input and output. Expected instants were checked with GNU date
(``date -u -d 2024-05-01T12:00:00Z +%s%3N``; ``TZ=Europe/Paris date -d @1714564800.123 +%FT%T.%3N%:z``)."""

from __future__ import annotations

import datetime
from zoneinfo import ZoneInfo

import pytest

from kdump.errors import UsageError
from kdump.render.times import TimeStyle, format_timestamp, parse_time_input, parse_time_zone

NOW = 1_714_564_800_000  # 2024-05-01T12:00:00Z


@pytest.mark.parametrize(("text", "expected"), [
    ("1714564800123", 1714564800123),
    ("0", 0),
    ("-1", -1),
    ("  1714564800000 ", 1714564800000),
    ("2024-05-01T12:00:00Z", 1714564800000),
    ("2024-05-01T12:00:00.123Z", 1714564800123),
    ("2024-05-01T12:00:00.123+02:00", 1714557600123),
    ("2024-05-01T12:00:00-05:30", 1714584600000),
    ("2024-05-01T12:00:00.5Z", 1714564800500),
    ("2024-05-01T12:00:00.123456789Z", 1714564800123),   # sub-millisecond digits dropped
    ("2024-05-01", 1714521600000),                         # a date alone: midnight UTC
    ("2024-05-01T12:00:00", 1714564800000),                # no zone: UTC
    ("2024-05-01 12:00:00Z", 1714564800000),
    ("1969-12-31T23:59:59.999Z", -1),                      # rounds down, as Instant.toEpochMilli
    ("now", NOW),
    ("NOW", NOW),
    ("-1h", NOW - 3_600_000),
    ("-30m", NOW - 1_800_000),
    ("-2d", NOW - 2 * 86_400_000),
    ("-45s", NOW - 45_000),
    ("-250ms", NOW - 250),
    ("-1w", NOW - 7 * 86_400_000),
    ("+10m", NOW + 600_000),
])
def test_parse_time_input(text: str, expected: int) -> None:
    assert parse_time_input(text, NOW) == expected


@pytest.mark.parametrize("text", ["", "yesterday", "1h", "-1y", "12:00", "2024-13-01", "1.5", "- 1h",
                                  "2024-05-01T25:00:00Z", "now-1h"])
def test_parse_time_input_rejects(text: str) -> None:
    with pytest.raises(UsageError, match="is not a time: give epoch milliseconds, ISO-8601"):
        parse_time_input(text, NOW)


def test_format_epoch_is_the_raw_number() -> None:
    assert format_timestamp(1714564800123, "epoch", None) == "1714564800123"
    assert format_timestamp(1714564800123, "epoch", ZoneInfo("Europe/Paris")) == "1714564800123"


def test_format_iso_utc_and_zones() -> None:
    assert format_timestamp(1714564800123, "iso", None) == "2024-05-01T12:00:00.123Z"
    assert format_timestamp(0, "iso", None) == "1970-01-01T00:00:00.000Z"
    assert format_timestamp(1714564800123, "iso", ZoneInfo("Europe/Paris")) == "2024-05-01T14:00:00.123+02:00"
    assert format_timestamp(1704067200000, "iso", ZoneInfo("America/New_York")) == "2023-12-31T19:00:00.000-05:00"
    assert format_timestamp(1714564800000, "iso", ZoneInfo("Asia/Kolkata")) == "2024-05-01T17:30:00.000+05:30"
    assert format_timestamp(1714564800000, "iso", ZoneInfo("UTC")) == "2024-05-01T12:00:00.000Z"


def test_format_both() -> None:
    assert format_timestamp(1714564800123, "both", None) == "1714564800123 (2024-05-01T12:00:00.123Z)"
    assert format_timestamp(1714564800123, "both", datetime.timezone(datetime.timedelta(hours=2))) == \
        "1714564800123 (2024-05-01T14:00:00.123+02:00)"


@pytest.mark.parametrize("fmt", ["epoch", "iso", "both"])
@pytest.mark.parametrize("ms", [-1, -2, -9223372036854775808, 9223372036854775807, 253402300800000])
def test_no_timestamp_and_out_of_calendar_stay_raw(fmt: str, ms: int) -> None:
    assert format_timestamp(ms, fmt, None) == str(ms)  # type: ignore[arg-type]


def test_round_trip_iso() -> None:
    for ms in (0, 1, 999, 1714564800123, 253402300799999):
        assert parse_time_input(format_timestamp(ms, "iso", ZoneInfo("Pacific/Chatham")), NOW) == ms


def test_time_style_and_zones() -> None:
    assert TimeStyle()(5) == "5"
    assert TimeStyle("iso", parse_time_zone("Europe/Paris"))(1714564800123) == "2024-05-01T14:00:00.123+02:00"
    with pytest.raises(UsageError, match="'Mars/Olympus' is not an IANA time zone"):
        parse_time_zone("Mars/Olympus")
    with pytest.raises(UsageError, match="is not an IANA time zone"):
        parse_time_zone("../etc/passwd")
