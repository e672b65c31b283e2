"""Click glue for times (the rules live in ``kdump.render.times``): a parameter type for time inputs
and the ``--time-format`` / ``--tz`` pair every command that shows times attaches.

    @click.option("--start-time", type=TimeInput())
    @time_style_options()            # the command receives ``times: TimeStyle``
    def command(..., times: TimeStyle) -> None: ...
"""

from __future__ import annotations

import datetime
import functools
import time
from collections.abc import Callable
from typing import Any, TypeVar

import click

from kdump.errors import UsageError
from kdump.render.times import TIME_FORMATS, TimeFormat, TimeStyle, parse_time_input, parse_time_zone

F = TypeVar("F", bound=Callable[..., Any])


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class TimeInput(click.ParamType):
    """Epoch ms, ISO-8601 or relative (``-1h``) -> epoch milliseconds; a bad value is a usage error (2)."""

    name = "time"

    def __init__(self, clock: Callable[[], int] = now_ms) -> None:
        self.clock = clock

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_time_input(str(value), self.clock())
        except UsageError as err:
            self.fail(err.reason, param, ctx)


def _time_zone(ctx: click.Context, param: click.Parameter, value: str | None) -> datetime.tzinfo | None:
    try:
        return None if value is None else parse_time_zone(value)
    except UsageError as err:
        raise click.BadParameter(err.reason, ctx, param) from None


def time_style_options(default: TimeFormat | None = "epoch", *, default_text: str | None = None
                       ) -> Callable[[F], F]:
    """Add ``--time-format`` and ``--tz``; the command gets one ``times: TimeStyle`` argument instead.

    ``--tz`` alone implies ``--time-format iso`` (a zone only changes how instants are written).
    ``default=None``: a command whose outputs differ in their natural form gets ``times=None`` when
    neither option is given, and picks per output (``default_text`` says how, for --help).
    """

    def apply(func: F) -> F:
        @functools.wraps(func)
        def command(*args: Any, time_format: TimeFormat | None, tz: datetime.tzinfo | None, **kwargs: Any) -> Any:
            if time_format is None and tz is None and default is None:
                return func(*args, times=None, **kwargs)
            chosen: TimeFormat = time_format or ("iso" if tz is not None and default in (None, "epoch")
                                                 else default or "epoch")
            return func(*args, times=TimeStyle(chosen, tz), **kwargs)

        command = click.option(
            "--tz", callback=_time_zone, default=None, metavar="ZONE",
            help="Show times in this IANA time zone (Europe/Paris); default UTC. Implies --time-format iso "
                 "unless given.")(command)
        command = click.option(
            "--time-format", type=click.Choice(TIME_FORMATS), default=None,
            help=f"Show times as epoch milliseconds (as Kafka prints them), ISO-8601 or both "
                 f"[default: {default_text or default}].")(command)
        return command  # type: ignore[return-value]

    return apply


__all__ = ["TimeInput", "now_ms", "time_style_options"]
