"""CRC-32C (v2 batches, producer snapshots) and CRC-32 (legacy v0/v1 messages).

CRC-32C is the hot path of every shallow scan. Measured with
benchmarks/bench_crc.py: the ``crc32c`` package uses the CPU's CRC
instruction (6-12 GB/s) and reads memoryview/mmap slices without copying; crcmod's C extension
is 15-20x slower; crcmod's pure-Python fallback is ~1000x slower. So: ``crc32c`` first, crcmod
(a declared dependency, kept working) as fallback. crcmod silently installs its pure-Python
version when no compiler is present; we detect that and say so in ``CRC32C_IMPLEMENTATION`` so
the CLI can warn instead of falling back silently.

Set ``KDUMP_CRC32C=crcmod`` to force the crcmod implementation (tests compare both).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import zlib
from collections.abc import Callable
from types import ModuleType

Buffer = bytes | bytearray | memoryview


def _crcmod_crc32c() -> tuple[Callable[..., int], str]:
    import sys

    import crcmod.predefined

    fun = crcmod.predefined.mkCrcFun("crc-32c")
    # The flag lives in the crcmod.crcmod submodule, whose name the package shadows with re-exports.
    fast = bool(getattr(sys.modules["crcmod.crcmod"], "_usingExtension", False))
    label = "crcmod (C extension)" if fast else "crcmod (pure Python, slow)"

    def crc(data: Buffer, value: int = 0) -> int:
        # crcmod's C extension wants an object with the buffer protocol; memoryviews work,
        # the pure-Python version iterates bytes, so hand it bytes.
        return int(fun(data if fast else bytes(data), value))

    return crc, label


def _crc32c_extension() -> ModuleType:
    """The ``crc32c`` package's C extension, without the package's ``__init__``: that one imports
    ``importlib.metadata`` for its version string and its command-line module, together 30-40 ms of
    every kdump command's start-up. The extension (crc32c 2.x, ``crc32c/_crc32c*.so``) stands alone."""
    package = importlib.util.find_spec("crc32c")
    if package is None or not package.submodule_search_locations:
        raise ImportError("the crc32c package is not installed")
    for folder in package.submodule_search_locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, "_crc32c" + suffix)
            if os.path.exists(path):
                spec = importlib.util.spec_from_file_location("crc32c._crc32c", path)
                assert spec is not None and spec.loader is not None
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                return module
    import crc32c  # another layout: the package as it is

    return crc32c


def _select() -> tuple[Callable[..., int], str]:
    if os.environ.get("KDUMP_CRC32C", "").lower() != "crcmod":
        try:
            _hw = _crc32c_extension()
            if getattr(_hw, "hardware_based", True):
                return _hw.crc32c, "crc32c (hardware)"
        except ImportError:
            pass
    return _crcmod_crc32c()


crc32c, CRC32C_IMPLEMENTATION = _select()
"""``crc32c(data, value=0) -> int``: CRC-32C (Castagnoli) of a bytes-like object; pass the CRC of the
bytes before ``data`` as ``value`` to continue it (an entry too large to hold is checked in pieces)."""

CRC32C_IS_SLOW = CRC32C_IMPLEMENTATION.endswith("slow)")


def crc32(data: Buffer, value: int = 0) -> int:
    """CRC-32 (IEEE, zlib's) used by legacy v0/v1 messages; ``value`` continues an earlier CRC."""
    return zlib.crc32(data, value) & 0xFFFFFFFF
