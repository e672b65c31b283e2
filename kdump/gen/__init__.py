"""``kdump gen``: log dirs written as brokers would leave them, for fixtures, tests and benchmarks.

``generator`` writes one broker's log.dirs (every codec and magic, transactions, rolled and live
segments, the broker's checkpoint files); ``cluster_generator`` writes several brokers' replicas of one
topic, agreeing or diverging as a scenario asks. Both write through ``kdump.log.writer`` and take the
files a broker keeps beside its segments from ``kdump.broker.broker_files``: this package sits above
``kdump.broker``, and nothing below the CLI imports it.
"""
