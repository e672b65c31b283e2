"""The only layer that touches files: read-only segment access over mmap, file naming, the writer."""
