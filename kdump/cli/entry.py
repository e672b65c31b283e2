"""The ``kdump`` console script and ``python -m kdump``: the command line, and Ctrl-C before it runs.

A Ctrl-C while the command line's modules are still being imported (the first tens of
milliseconds) would otherwise end in a KeyboardInterrupt traceback from inside an import; here it
ends as any other Ctrl-C does: one ``Error: interrupted`` line and exit 130. This module imports
nothing of its own, so the window before that ``try`` is the interpreter's start-up alone.
"""

import sys


def main() -> None:
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
