"""Typing stub of the C file merge (renderer/_foldfiles.c); merge_mc._merge_batched_files_py is the reference."""

from collections.abc import Callable
from typing import Any

def merge_files(batched: list[dict[str, Any]], items: list[Any], index: dict[Any, Any],
                made_final: dict[Any, dict[str, Any]], unfinished: list[dict[str, Any]],
                merged_into: Callable[[Any], None], reset_copy: Callable[[dict[str, Any]], dict[str, Any]],
                /) -> None: ...
