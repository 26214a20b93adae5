"""The rules' memo tables, and a way to empty them: benchmarks of a cold run call it.

Both are bounded LRU memos of pure functions of strings (ignition/rules/urls.py: source URLs,
ignition/rules/unitfile.py: unit texts), bounded in entries and in the length of what they keep; nothing
else in ignition/ keeps state between calls except the schema tables, one per spec version."""

from __future__ import annotations

from ignition.rules import unitfile, urls


def clear_caches() -> None:
    """Forget every memoised rule result, so the next validation does all of its work again."""
    urls.clear_cache()
    unitfile.clear_cache()
