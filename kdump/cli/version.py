"""``kdump --version``'s lines: the release, and which CRC-32C and C accelerators this install uses.

Imports no click, and none of the modules that use the accelerators: ``kdump.cli.entry`` answers a
lone ``--version`` with these lines before the command line's modules are imported, and
``accelerators.load`` makes the same choice here that ``kdump.format.records`` (v2 records) and
``kdump.render.log_text`` (dump lines) make when they are imported.
"""

from __future__ import annotations

from kdump import __version__


def version_lines() -> list[str]:
    from kdump import accelerators
    from kdump.format.crc import CRC32C_IMPLEMENTATION

    records = accelerators.implementation(accelerators.load(*accelerators.RECORD_DECODE_FUNCTION))
    lines = accelerators.implementation(accelerators.load(*accelerators.BATCH_LINE_FUNCTION))
    return [f"kdump {__version__} (reproduces kafka-dump-log output of Kafka 2.2 to 4.4)",
            f"CRC-32C: {CRC32C_IMPLEMENTATION}; v2 records: {records}; dump lines: {lines}",
            accelerators.status()]


__all__ = ["version_lines"]
