"""Kafka's on-disk formats: bytes or memoryviews in, model objects out.

Nothing in this package opens a file, prints, or imports click/rich. Every parser takes a buffer
and a position and reports errors as ``kdump.errors.FormatError`` subclasses carrying the byte
position; the ``log`` layer adds the file name.
"""
