"""The C accelerators read ``Record`` and ``Batch`` tuples by slot, so each exports the field names it
was built for (``RECORD_FIELDS``, ``BATCH_FIELDS``); an extension built for another layout (a stale
build after a field was added or moved) is refused, with a warning, and the Python reference runs."""

from __future__ import annotations

import sys
import warnings
from typing import Any

from kdump.accelerators import load


def load_checked(module: str, name: str, **layouts: tuple[str, ...]) -> Any | None:
    """``accelerators.load(module, name)``, or None when the extension's exported ``layouts`` (attribute ->
    field names) differ from the namedtuples' fields the Python code has now."""
    found = load(module, name)
    if found is None:
        return None
    extension = sys.modules[module]
    for attr, fields in layouts.items():
        built = getattr(extension, attr, None)
        if built != fields:
            warnings.warn(f"{module} was built for {attr} {built}, not {fields}; using the Python code instead "
                          f"(rebuild it: pip install -e .)", RuntimeWarning, stacklevel=2)
            return None
    return found
