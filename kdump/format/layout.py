"""The field order of ``Record`` and ``Batch``, which the C extensions read by slot.

Here rather than only on the namedtuples so that ``kdump --version`` can say whether the extensions
match this install without importing the format and render modules (about 30 ms of its start-up).
``records.py`` and ``batch.py`` check their classes against these tuples when they are imported, so
a field added to one place and not the other fails at once rather than feeding the C code a wrong slot.
"""

RECORD_FIELDS = ("offset", "timestamp", "key", "value", "headers", "sequence", "legacy_crc", "legacy_valid")
BATCH_FIELDS = ("position", "base_offset", "last_offset", "size", "magic", "crc", "attributes",
                "partition_leader_epoch", "base_timestamp", "max_timestamp", "producer_id", "producer_epoch",
                "base_sequence", "records_count", "is_valid")


def check_fields(cls: type, fields: tuple[str, ...]) -> None:
    """Raise when the namedtuple ``cls`` no longer has ``fields`` in this order."""
    actual = getattr(cls, "_fields", None)
    if actual != fields:
        raise TypeError(f"{cls.__qualname__} has fields {actual}, but kdump.format.layout says {fields}: "
                        "change both together (the C extensions read these tuples by slot)")
