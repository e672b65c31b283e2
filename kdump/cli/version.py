"""``kdump --version``'s lines: the release, and which CRC-32C and C accelerators this install uses.

Imports no click: ``kdump.cli.entry`` answers a lone ``--version`` with these lines before the
command line's modules are imported (the three modules asked below are the ones whose choice is shown).
"""

from __future__ import annotations

from kdump import __version__


def version_lines() -> list[str]:
    from kdump import accelerators
    from kdump.format.crc import CRC32C_IMPLEMENTATION
    from kdump.format.records import RECORD_DECODER
    from kdump.render.log_text import LINE_FORMATTER

    return [f"kdump {__version__} (reproduces kafka-dump-log output of Kafka 2.2 to 4.4)",
            f"CRC-32C: {CRC32C_IMPLEMENTATION}; v2 records: {RECORD_DECODER}; dump lines: {LINE_FORMATTER}",
            accelerators.status()]


__all__ = ["version_lines"]
