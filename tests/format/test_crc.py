"""CRC-32C and CRC-32 vectors, and the crcmod fallback agreeing with the hardware path."""

from __future__ import annotations

import os
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from kdump.format.crc import crc32, crc32c


def test_check_values():
    # The standard check input "123456789" (CRC catalogue): CRC-32C 0xE3069283, CRC-32 0xCBF43926.
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32(b"123456789") == 0xCBF43926
    assert crc32c(memoryview(b"xx123456789")[2:]) == 0xE3069283


@given(st.binary(max_size=4096))
def test_crcmod_fallback_agrees(data):
    import crcmod.predefined

    assert crcmod.predefined.mkCrcFun("crc-32c")(data) == crc32c(data)


def test_forcing_crcmod_is_reported_and_correct():
    code = ("from kdump.format.crc import crc32c, CRC32C_IMPLEMENTATION, CRC32C_IS_SLOW;"
            "print(CRC32C_IMPLEMENTATION, CRC32C_IS_SLOW, crc32c(memoryview(b'123456789')) == 0xE3069283)")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "KDUMP_CRC32C": "crcmod"},
                         capture_output=True, text=True, check=True).stdout
    # With a compiler present (CI installs gcc-built wheels) crcmod uses its C extension.
    assert out.startswith("crcmod (") and out.rstrip().endswith("True")
    import crcmod.predefined  # noqa: F401 - loads the crcmod.crcmod submodule

    assert ("False" in out) == bool(sys.modules["crcmod.crcmod"]._usingExtension)
