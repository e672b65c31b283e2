"""The optional C accelerators and the switch that turns them off.

Two small extensions, built by setup.py when a C compiler is present: ``kdump.format._v2records``
(decoding v2 records) and ``kdump.render._v2lines`` (``--print-data-log`` lines). Each has a Python
reference beside it that gives the same results, and that runs whenever the extension is missing,
declines an input, or ``KDUMP_PURE_PYTHON=1`` is set (tests run both).
"""

from __future__ import annotations

import importlib
import os
import warnings
from typing import Any


def load(module: str, name: str, **layouts: tuple[str, ...]) -> Any | None:
    """``module.name`` from a built extension, or None when it is not built or turned off.

    ``layouts`` maps a field-name tuple the extension exports (``RECORD_FIELDS=Record._fields``) to
    the namedtuple fields the Python code has now: the C code reads those tuples by slot, so an
    extension built for another layout is refused, with a warning, and the Python reference runs.
    """
    if os.environ.get("KDUMP_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        extension = importlib.import_module(module)
    except ImportError:  # built without a C compiler: the Python reference does the work
        return None
    for attr, fields in layouts.items():
        built = getattr(extension, attr, None)
        if built != fields:
            warnings.warn(f"{module} was built for {attr} {built}, not {fields}; using the Python code instead "
                          f"(rebuild it: pip install -e .)", RuntimeWarning, stacklevel=2)
            return None
    return getattr(extension, name)
