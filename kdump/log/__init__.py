"""The only layer that touches files: bounded reads of segments and indexes, lookups, log dirs, the writer."""
