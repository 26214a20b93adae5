"""The C plain-file test (ignition/_plainscan.c `plain_file_list`) against the Python one it stands in for.

Its promise, as for the list tests in ignition/rules/plain.py: True only when `plain_file` holds for every
entry (a False just sends the list to the Python tests), so no verdict can change; and True on the shape a
rendered cluster holds by the ten thousand, or it saves nothing. Under `make test` (MCO_REQUIRE_TOOLS=1) the
module must have been built.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ignition.rules import plain
from ignition.rules.plain import plain_file
from tests.ignition.test_plain import FILES, GOOD_FILES, PATHS, SOURCES
from tests.ignition.test_plain_lists import (
    CLOSE_FILES,
    FILE_LISTS,
    MOSTLY_PLAIN,
    ODD_PATHS,
    ODD_SOURCES,
    ONE_ODD_MEMBER,
)
from tests.tools import built_module


def _built() -> ModuleType:
    return built_module("ignition._plainscan")


def test_plain_uses_the_built_test() -> None:
    assert plain._plainscan is _built()


B64 = st.text(st.sampled_from("AZaz09+/="), max_size=9)
SOURCE_TEXT = st.builds(lambda head, body: head + body, st.sampled_from(["data:,", "data:;base64,", "data:", ""]),
                        st.one_of(B64, st.text(st.sampled_from("a%0Gf:,;/.!~ \x7f\n\"\\#ä"), max_size=8)))
ENTRIES = st.one_of(FILES, GOOD_FILES, MOSTLY_PLAIN, CLOSE_FILES, ONE_ODD_MEMBER,
                    st.builds(lambda p, s: {"path": p, "contents": {"source": s}}, ODD_PATHS,
                              st.one_of(ODD_SOURCES, SOURCE_TEXT)),
                    st.builds(lambda p, s, m, o, c: {"path": p, "mode": m, "overwrite": o,
                                                     "contents": {"source": s, "compression": c}},
                              st.sampled_from(PATHS), st.sampled_from(SOURCES),
                              st.sampled_from([0, 420, 511, 512, -1, True, 2**64, None, 1.0]),
                              st.sampled_from([True, False, None, 1]), st.sampled_from(["", "gzip", "xz", None, 0])),
                    st.sampled_from([None, 1, "x", [], {}]))


@settings(max_examples=4000, deadline=None)
@given(st.one_of(st.lists(ENTRIES, max_size=6), FILE_LISTS))
def test_true_only_when_every_file_is_plain(entries: list[Any]) -> None:
    if _built().plain_file_list(entries):
        assert all(type(e) is dict and plain_file(e) for e in entries), entries


@pytest.mark.parametrize("entry", [
    {"path": "/etc/a", "mode": 420, "contents": {"source": "data:,v1.2%0A"}},
    {"path": "/etc/.x/b", "overwrite": True, "contents": {"source": "data:;base64,aGk=", "compression": "gzip"}},
    {"path": "/opt/a..b", "contents": {"source": ""}},
    {"path": "/etc/a", "overwrite": False, "contents": {"source": "data:,a:b,c;d=e?f@g~", "compression": ""}},
    {"path": "/a", "contents": {"source": "data:;base64,"}},
    {"path": "/a", "contents": {"source": "data:;base64,aGlq"}},
    {"path": "/a", "contents": {"source": "data:;base64,aA=="}},
])
def test_true_on_the_commonest_shape(entry: dict[str, Any]) -> None:
    assert plain_file(entry)
    assert _built().plain_file_list([entry] * 3)


@pytest.mark.parametrize("entry", [
    {"path": "/etc/a", "contents": {"source": "data:,x"}, "user": {"name": "core"}},  # owners: Python decides
    {"path": "/etc/a", "contents": {"source": "data:text/plain;charset=utf-8,x"}},   # a media type
    {"path": "/etc/a"}, {"path": "/etc/a", "contents": {}},                         # no source
    {"path": "/ä", "contents": {"source": "data:,x"}},                              # beyond ASCII
    {"contents": {"source": "data:,x"}}, {"path": None, "contents": {"source": "data:,x"}},  # no path
])
def test_false_leaves_the_rest_to_python(entry: dict[str, Any]) -> None:
    assert not _built().plain_file_list([entry])
    assert plain.plain_files([entry]) is plain_file(entry)


def test_odd_arguments_are_not_plain() -> None:
    built = _built()
    assert built.plain_file_list([]) is True
    assert built.plain_file_list(({"path": "/a", "contents": {"source": ""}},)) is False  # a tuple: not a JSON list
    assert built.plain_file_list("x") is False
