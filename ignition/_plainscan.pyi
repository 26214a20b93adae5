"""Typing stub of the C plain-file test (ignition/_plainscan.c); ignition/rules/plain.py holds the reference."""

from typing import Any

def plain_file_list(entries: list[Any], /) -> bool: ...
