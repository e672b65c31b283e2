"""Kafka message-protocol records: schema tables, one generic reader/writer, record envelopes.

``schema`` holds the table types, ``definitions`` reads Kafka's message JSON (``json/``) into them,
``tables`` the per-release registries, ``protocol`` the reader, ``encode`` the writer and envelope builders.
"""
