"""One exception hierarchy for kdump.

The format layer raises these with the byte position it was looking at; the log layer adds the
file name (``with_file``); the CLI turns any ``KdumpError`` into one ``Error: ...`` line and an exit
code. Low-level ``struct.error``/``IndexError``/``ValueError`` are converted at batch boundaries, so
nothing above the format layer ever sees them.
"""

from __future__ import annotations

import sys
from typing import TextIO


class KdumpError(Exception):
    """Base class: a problem with input data or arguments, described for a person."""

    def __init__(self, reason: str, *, path: str | None = None, position: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path
        self.position = position

    def with_file(self, path: str) -> KdumpError:
        """Name the file this error belongs to (the format layer does not know it)."""
        if self.path is None:
            self.path = path
        return self

    def __reduce__(self) -> tuple[object, ...]:
        # Worker processes (kdump.cli.parallel) send errors to the parent by pickling them; the
        # default rebuilds ``cls(*args)``, which subclasses with other constructors cannot take.
        return _rebuild, (type(self), self.args, self.__dict__)

    def __str__(self) -> str:
        where = []
        if self.path is not None:
            where.append(self.path)
        if self.position is not None:
            where.append(f"position {self.position}")
        return f"{': '.join(where)}: {self.reason}" if where else self.reason


def _rebuild(cls: type[KdumpError], args: tuple[object, ...], state: dict[str, object]) -> KdumpError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class FormatError(KdumpError):
    """Bytes that do not follow Kafka's on-disk format."""


class CorruptRecordError(FormatError):
    """Kafka's CorruptRecordException: framing is broken (size below the minimum, bad CRC on recovery)."""


class InvalidRecordError(FormatError):
    """Kafka's InvalidRecordException: a batch's records cannot be parsed."""


class CodecError(FormatError):
    """A compressed payload could not be decompressed, or the codec id is unknown."""


class IndexFormatError(FormatError):
    """An index file that fails Kafka's structural sanity check."""


class InputError(KdumpError):
    """A file that cannot be read at all: missing, a directory, no permission, wrong name."""


class UsageError(KdumpError):
    """Arguments that do not make sense together."""


class Interrupted(KdumpError):
    """The user stopped the run (SIGINT); the reason says what state it left behind."""


def error_line(problem: BaseException | str) -> str:
    """The one line kdump prints for a problem (without the newline)."""
    if isinstance(problem, OSError) and not isinstance(problem, KdumpError):
        reason = problem.strerror or type(problem).__name__
        return f"Error: {problem.filename}: {reason}" if problem.filename is not None else f"Error: {problem}"
    return f"Error: {problem}"


def write_error(problem: BaseException | str, *, err: TextIO | None = None, out: TextIO | None = None,
                traceback_of: BaseException | None = None) -> None:
    """Write ``problem`` as one ``Error:`` line on ``err`` (stderr), after ``traceback_of``'s traceback.

    ``out`` (stdout) is flushed first so the line comes after what was printed before the problem; if that
    flush raises something other than an ordinary I/O error (the CLI's guard of standard output), the
    line is still written and that exception raised afterwards.
    """
    err = err if err is not None else sys.stderr
    out = out if out is not None else sys.stdout
    deferred: BaseException | None = None
    try:
        out.flush()
    except (OSError, ValueError, AttributeError):
        pass
    except BaseException as failure:
        deferred = failure
    try:
        if traceback_of is not None:
            import traceback

            traceback.print_exception(traceback_of, file=err)
        err.write(error_line(problem) + "\n")
        err.flush()
    except (OSError, ValueError):
        pass  # stderr is gone too: the exit code is all that is left
    if deferred is not None:
        raise deferred
