"""The optional C accelerators and the switch that turns them off.

Two small extensions, built by setup.py when a C compiler is present: ``kdump.format._v2records``
(decoding v2 records) and ``kdump.render._v2lines`` (``--print-data-log`` lines). Each has a Python
reference beside it that gives the same results, and that runs whenever the extension is missing,
declines an input, or ``KDUMP_PURE_PYTHON=1`` is set (tests run both).
"""

from __future__ import annotations

import importlib
import os
from typing import Any


def load(module: str, name: str) -> Any | None:
    """``module.name`` from a built extension, or None when it is not built or turned off."""
    if os.environ.get("KDUMP_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError:  # built without a C compiler: the Python reference does the work
        return None
