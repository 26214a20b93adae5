"""The rules' memo tables (pure functions of strings), and a way to empty them: benchmarks of a cold run call it."""

from __future__ import annotations

from ignition.rules import unitfile, urls


def clear_caches() -> None:
    """Forget every memoised rule result, so the next validation does all of its work again."""
    urls.clear_cache()
    unitfile.clear_cache()
