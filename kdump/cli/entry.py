"""The ``kdump`` console script and ``python -m kdump``: the command line, and Ctrl-C before it runs.

A Ctrl-C while the command line's modules are still being imported (the first tens of
milliseconds) would otherwise end in a KeyboardInterrupt traceback from inside an import; here it
ends as any other Ctrl-C does: one ``Error: interrupted`` line and exit 130. This module imports
nothing of its own, so the window before that ``try`` is the interpreter's start-up alone.

The cyclic garbage collector is off while the command's modules are imported: click, typing and
kdump's modules allocate enough objects to set off collections that find nothing to free, and
``imports_done`` then freezes what was imported (Python's ``gc.freeze``: never traversed again, by
those collections nor by the one at exit). Together 10-20 ms of every command, a fifth of a small
run's start-up (benchmarks/bench_startup.py; measured side by side: a one-batch dump's imports 124
ms with the collector on, 101 ms with it held off, on a 2-core machine).
"""

import gc
import sys

_holding_collector = False   # main turned the collector off, and imports_done has not turned it on


def imports_done() -> None:
    """The running command's modules are imported (kdump.cli.main calls this): collect from here on."""
    global _holding_collector
    if _holding_collector:
        _holding_collector = False
        gc.freeze()
        gc.enable()


def main() -> None:
    global _holding_collector
    _holding_collector = gc.isenabled()
    gc.disable()
    try:
        if sys.argv[1:] == ["--version"]:   # the commonest probe, answered before click is imported
            from kdump.cli.version import version_lines

            sys.stdout.write("".join(f"{line}\n" for line in version_lines()))
            sys.stdout.flush()
            return
        from kdump.cli.main import main as run

        run()   # exits through kdump.cli.boundary, which handles a Ctrl-C from here on
    except KeyboardInterrupt:
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            sys.stderr.write("Error: interrupted\n")
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):
            pass
        sys.exit(130)   # ExitCode.INTERRUPTED, not imported: the import may be what was interrupted
    finally:
        if _holding_collector:   # a run that imported no command (--help, an error): as it was
            _holding_collector = False
            gc.enable()
