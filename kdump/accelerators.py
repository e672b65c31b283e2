"""The optional C accelerators and the switch that turns them off.

Two small extensions, built by setup.py when a C compiler is present: ``kdump.format._v2records``
(decoding v2 records) and ``kdump.render._v2lines`` (``--print-data-log`` lines). Each has a Python
reference beside it that gives the same results, and that runs whenever the extension is missing,
declines an input, or ``KDUMP_PURE_PYTHON=1`` is set (tests run both).

A missing extension is not silent: pip's ``-q`` hides the build warning of an install without a
compiler, and a ``--py-files`` zip cannot hold loadable extensions at all. ``load`` remembers why an
extension did not load; ``fallback_warning`` words it, and the CLI and Spark executors print it once.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
import zipimport

from kdump.format.layout import BATCH_FIELDS, RECORD_FIELDS

TYPE_CHECKING = False   # typing.TYPE_CHECKING without importing typing (10 ms of `kdump --version`)
if TYPE_CHECKING:
    from typing import Any, TextIO

# Every extension setup.py builds, and the tuple layouts it reads by slot: each exports the field names
# it was built for under these attribute names.
EXTENSIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "kdump.format._v2records": {"RECORD_FIELDS": RECORD_FIELDS, "BATCH_FIELDS": BATCH_FIELDS},
    "kdump.render._v2lines": {"RECORD_FIELDS": RECORD_FIELDS, "BATCH_FIELDS": BATCH_FIELDS},
}
# The two functions whose presence `kdump --version` reports: kdump.format.records and
# kdump.render.log_text load these, and kdump.cli.version asks the same without importing them.
RECORD_DECODE_FUNCTION = ("kdump.format._v2records", "decode")
BATCH_SCAN_FUNCTION = ("kdump.format._v2records", "scan")   # kdump.format.batch's shallow walk
BATCH_LINE_FUNCTION = ("kdump.render._v2lines", "batch_line")
_missing: dict[str, str] = {}   # extension module -> why it could not be imported
_warned = False


def pure_python_requested() -> bool:
    """``KDUMP_PURE_PYTHON`` set to anything but empty or ``0``."""
    return os.environ.get("KDUMP_PURE_PYTHON", "") not in ("", "0")


def load(module: str, name: str) -> Any | None:
    """``module.name`` from a built extension, or None when it is not built, turned off, or built for
    another tuple layout.

    The extensions read ``Record`` and ``Batch`` tuples by slot, so each exports the field names it was
    built for (``RECORD_FIELDS``, ``BATCH_FIELDS``); ``EXTENSIONS`` says which fields the Python code
    has now. A stale build (a field added or moved since) is refused with a warning.
    """
    if pure_python_requested():
        return None
    try:
        extension = importlib.import_module(module)
    except ImportError as err:  # built without a C compiler: the Python reference does the work
        _missing[module] = str(err)
        return None
    for attr, fields in EXTENSIONS[module].items():
        built = getattr(extension, attr, None)
        if built != fields:
            _missing[module] = f"built for {attr} {built}, not {fields}"
            warnings.warn(f"{module} was built for {attr} {built}, not {fields}; using the Python code instead "
                          f"(rebuild it: pip install -e .)", RuntimeWarning, stacklevel=2)
            return None
    return getattr(extension, name, None)   # None from a build older than the function


def implementation(function: object) -> str:
    """What a ``load`` result means for ``kdump --version``: "C extension" or "pure Python"."""
    return "C extension" if function is not None else "pure Python"


def imported_from_zip() -> bool:
    """kdump itself was imported from a zip (``--py-files kdump.zip``), where no extension can load."""
    package = sys.modules[__name__.rpartition(".")[0] or __name__]
    loader = getattr(getattr(package, "__spec__", None), "loader", None)
    return isinstance(loader, zipimport.zipimporter)


def missing() -> list[str]:
    """The extensions that cannot be imported in this process (empty under ``KDUMP_PURE_PYTHON=1``)."""
    for module in EXTENSIONS:
        if module not in _missing:
            load(module, "__name__")
    return sorted(_missing)


def status() -> str:
    """One line for ``kdump --version``: are the C accelerators loaded, and if not, why."""
    if pure_python_requested():
        return "C accelerators: off (KDUMP_PURE_PYTHON=1), pure Python"
    if not missing():
        return "C accelerators: loaded"
    return f"C accelerators: NOT loaded ({_reason()}), pure Python"


def fallback_warning() -> str | None:
    """The warning for a process running pure Python without asking to, or None.

    The extensions are CPython C-API modules, so only CPython is expected to have them.
    """
    if pure_python_requested() or sys.implementation.name != "cpython" or not missing():
        return None
    return (f"Warning: kdump's C accelerators are not loaded ({_reason()}): records are decoded and "
            f"printed by the pure-Python code (same results, slower). Set KDUMP_PURE_PYTHON=1 if this is intended.")


def warn_once(stream: TextIO | None = None, hint: str = "") -> bool:
    """Write ``fallback_warning`` (and ``hint``) to ``stream`` (stderr) the first time it applies in this process."""
    global _warned
    text = fallback_warning()
    if text is None or _warned:
        return False
    _warned = True
    if hint:
        text = f"{text} ({hint})"
    out = stream if stream is not None else sys.stderr
    try:
        out.write(text + "\n")
        out.flush()
    except (OSError, ValueError):
        pass  # stderr is gone: nothing else to tell
    return True


def _reason() -> str:
    if imported_from_zip():
        return "kdump is imported from a zip archive, which cannot load C extensions; install kdump instead"
    gone = missing()
    stale = [f"{module} {_missing[module]}" for module in gone if _missing[module].startswith("built for ")]
    if stale:
        return "; ".join(stale) + ": a stale build; reinstall kdump (pip install -e . in a checkout)"
    return (f"{', '.join(gone)} not built: kdump was installed without a C compiler; "
            "reinstall it with one, or from a wheel")
