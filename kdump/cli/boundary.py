"""The one error boundary every kdump command runs inside.

Whatever a command raises ends as at most one ``Error: ...`` line on stderr and an exit code from
``ExitCode``: a ``KdumpError`` gives its own message (``UsageError`` exits 2, others the command's
``error_exit``), an ``OSError`` on an input or output *file* the same, Ctrl-C 130, anything else
one "internal error" line and 70. ``--traceback`` adds the Python traceback before the line.

Standard output gets its own policy, because a failure there is not the command's fault: the
process's stdout is wrapped (``_GuardedStdout``) so a failed write raises ``OutputFailed``, which no
``except Exception`` in a command can swallow. A closed pipe (``kdump ... | head``) ends the run
silently with 141, as a program killed by SIGPIPE; a full disk, an I/O error or a closed stdout is
one line and 74.
"""

from __future__ import annotations

import errno
import io
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

import click

from kdump.cli.exit_codes import ExitCode
from kdump.errors import Interrupted, KdumpError, UsageError, write_error
from kdump.log.interrupts import SignalInterrupt

_PASS_THROUGH = (click.exceptions.Exit, click.ClickException, click.Abort)


class OutputFailed(BaseException):
    """Writing standard output failed; a BaseException so per-file ``except Exception`` handlers let it by."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(cause.strerror or str(cause))
        self.cause = cause


TRACEBACK_HELP = "Show the Python traceback before an error line (debugging; every command takes it)."
_TRACEBACK = "kdump.traceback"   # ctx.meta key (meta is shared by a context and its subcommands')


class _CtrlCWhileParsing(BaseException):
    """Ctrl-C while click parses the command line or runs an eager option (--version): carried past
    click's own handler, which would print an empty line before kdump's one line."""


def _traceback_requested(ctx: click.Context | None) -> bool:
    """--traceback given to this command or to one it is a subcommand of."""
    if ctx is not None and ctx.meta.get(_TRACEBACK):
        return True
    while ctx is not None and not ctx.params.get("traceback"):
        ctx = ctx.parent
    return ctx is not None


def _remember_traceback(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[_TRACEBACK] = True


class ErrorBoundary(click.Command):
    """Mixed into kdump's command and group classes; ``error_exit`` is the command's code for a
    ``KdumpError`` that is not a usage error (1 where the command writes or dumps, 2 where it reads).

    Every command takes ``--traceback`` (the internal-error line asks for it): one that does not
    declare it gets an option that only the boundary reads."""

    def __init__(self, *args: Any, error_exit: ExitCode = ExitCode.UNREADABLE, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.error_exit = error_exit
        if not any(param.name == "traceback" for param in self.params):
            self.params.append(click.Option(["--traceback"], is_flag=True, expose_value=False, is_eager=True,
                                            callback=_remember_traceback, help=TRACEBACK_HELP))

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except KeyboardInterrupt:
            raise _CtrlCWhileParsing from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _PASS_THROUGH:
            raise
        except SignalInterrupt as err:  # a writer stopped by SIGINT/SIGTERM/SIGHUP (kdump.log.atomic cleaned up)
            what = f"{err.completed} was complete" if err.completed else "nothing was written"
            self._fail(ctx, Interrupted(f"interrupted by {err.signal_name}; {what}"), err.exit_code)
        except KeyboardInterrupt:
            self._fail(ctx, Interrupted("interrupted"), ExitCode.INTERRUPTED)
        except Interrupted as err:
            self._fail(ctx, err, ExitCode.INTERRUPTED)
        except UsageError as err:
            self._fail(ctx, err, ExitCode.USAGE)
        except (KdumpError, OSError) as err:
            self._fail(ctx, err, self.error_exit)
        except Exception as err:  # a bug in kdump: still one line
            self._fail(ctx, err, ExitCode.INTERNAL)

    @staticmethod
    def _fail(ctx: click.Context, err: BaseException, code: int) -> None:
        message: BaseException | str = err
        if code is ExitCode.INTERNAL:
            message = f"internal error {type(err).__name__}: {err} (rerun with --traceback and report it)"
        if code >= ExitCode.INTERRUPTED:   # Ctrl-C or a signal: the line is written once, whatever follows
            _STATE.interrupt_reported = True
        write_error(message, traceback_of=err if _traceback_requested(ctx) else None)
        ctx.exit(code)

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        sys.exit(run_standalone(lambda: super(ErrorBoundary, self).main(args, prog_name, complete_var,
                                                                         standalone_mode=False, **extra)))


class KdumpCommand(ErrorBoundary, click.Command):
    """A kdump subcommand: ``@click.command(..., cls=KdumpCommand, error_exit=...)``."""


class KdumpGroup(ErrorBoundary, click.Group):
    """A kdump command group; its subcommands are ``KdumpCommand`` unless they say otherwise."""

    command_class = KdumpCommand


class _State:
    interrupt_reported = False   # "Error: interrupted" (or a signal's line) was written
    own_process = False          # running as the kdump process (not in a test runner's CliRunner)


_STATE = _State()


def report_interrupt() -> int:
    """Ctrl-C: one ``Error: interrupted`` line however many times and wherever it arrived (a command,
    click's parsing, the final flush), then 130. Later Ctrl-Cs are ignored: the run is ending."""
    ignore_sigint()
    if not _STATE.interrupt_reported:
        _STATE.interrupt_reported = True
        write_error("interrupted")
    return ExitCode.INTERRUPTED


def ignore_sigint() -> None:
    """Let what remains (writing the last line, flushing, the interpreter's exit) finish undisturbed."""
    if not _STATE.own_process:
        return
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):   # not the main thread: nothing to protect here
        pass


def run_standalone(call: Callable[[], Any]) -> int:
    """Run click's non-standalone ``main`` and turn every way it can end into an exit code.

    Once the code is known, SIGINT is ignored: a Ctrl-C during the teardown (the last flush, workers
    being reaped, the interpreter's exit) can neither print a traceback nor lose the run's last line.
    """
    _STATE.interrupt_reported = False
    _STATE.own_process = sys.stdout is sys.__stdout__
    if sys.stdout is None:  # started with stdout closed (`kdump ... >&-`)
        write_error("standard output is closed")
        return ExitCode.OUTPUT
    try:
        _guard_stdout()
        try:
            result = call()
            code = result if isinstance(result, int) else ExitCode.OK
        except click.ClickException as err:
            err.show()
            code = err.exit_code
        except (click.Abort, KeyboardInterrupt, _CtrlCWhileParsing):
            code = report_interrupt()
        if code == ExitCode.INTERRUPTED:
            report_interrupt()   # the command wrote its line already, or it was lost to a second Ctrl-C
        sys.stdout.flush()
        ignore_sigint()
    except OutputFailed as failure:
        code = _output_failed(failure)
    except (KeyboardInterrupt, _CtrlCWhileParsing):
        code = report_interrupt()
    ignore_sigint()
    return int(code)


def _output_failed(failure: OutputFailed) -> ExitCode:
    if failure.cause.errno == errno.EPIPE:
        return ExitCode.BROKEN_PIPE  # the reader has all it wanted: no message, as `cat` does
    write_error(f"standard output: {failure}")
    return ExitCode.OUTPUT


class _GuardedStdout(io.RawIOBase):
    """File descriptor 1 for a buffered text stream: a failed write raises ``OutputFailed`` once,
    later writes (the interpreter's final flush) are dropped so nothing more is reported."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self.failed: OSError | None = None

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: Any) -> int:
        if self.failed is not None:
            return len(data)
        try:
            return os.write(self._fd, data)
        except OSError as err:
            self.failed = err
            raise OutputFailed(err) from None


def _guard_stdout() -> None:
    """Put the process's own stdout behind ``_GuardedStdout`` (not a test runner's capture)."""
    stdout = sys.stdout
    if stdout is not sys.__stdout__ or not isinstance(stdout, io.TextIOWrapper):
        return
    try:
        fd = stdout.fileno()
        stdout.flush()
    except (OSError, ValueError):
        return
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(_GuardedStdout(fd)), encoding=stdout.encoding,
                                  errors=stdout.errors, line_buffering=stdout.line_buffering)
