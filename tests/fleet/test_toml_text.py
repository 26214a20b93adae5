"""fleet/toml_text.py: TOML basic strings that a TOML reader (tomllib, as bootc's) reads back exactly, in the
escapes BurntSushi/toml writes."""

from __future__ import annotations

import tomllib

import pytest

from fleet.toml_text import toml_string

TEXTS = ["", "plain", 'say "hi"', "C:\\path", "tab\there\nnew line", "bell\x07 del\x7f nul\x00", "café ✓",
         "\b\f\r"]


@pytest.mark.parametrize("text", TEXTS)
def test_read_back_exactly(text: str) -> None:
    assert tomllib.loads(f"k = {toml_string(text)}")["k"] == text


def test_the_encoders_escapes() -> None:
    assert toml_string('a"b\\c\td') == '"a\\"b\\\\c\\td"'
    # BurntSushi/toml encode.go dblQuotedReplacer: lower-case hex digits (`\u001b`, `\u007f`)
    assert toml_string("\x01\x0b\x1b\x7f") == '"\\u0001\\u000b\\u001b\\u007f"'
