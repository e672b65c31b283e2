"""Checks over what a broker left on disk, each yielding ``Finding`` objects (no printing here)."""
