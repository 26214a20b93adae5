"""Validation rules, one module per part of the spec; each check returns a message or None (the caller adds the path)."""
