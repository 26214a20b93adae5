"""Ignition spec 3.0-3.6: typed parse, validation with JSON paths, merge, translation, canonical JSON, data URLs.

The foundation: imports nothing of ours."""
