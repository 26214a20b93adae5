"""The C scans (renderer/_scan.c) give what their Python versions give, which stay the reference.

`member_lines` against provenance `_python_lines` (the regex), `json_colons` against load `_python_colons`,
on texts built to sit at every edge of the patterns: near-miss members, whitespace of every kind `\\s` takes
in latin-1, escapes, stray quotes and backslashes at the end, digit runs of 18 to 20, `\\u003a` split or
doubled. Under `make test` (MCO_REQUIRE_TOOLS=1) the module must have been built: CI never tests only the
fallback.
"""

from __future__ import annotations

import json
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from renderer import load, provenance
from tests.tools import built_module


def _scan() -> ModuleType:
    return built_module("renderer._scan")


def test_the_modules_use_the_built_scans() -> None:
    built = _scan()
    assert provenance._scan is built and load._scan is built


SPACES = ["", " ", "\n", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", " \n "]
MEMBERS = st.builds("{}{}:{}\"{}{}".format, st.sampled_from(['"path"', '"name"', '"device"', '"pat"', 'name"',
                                                                '"paths"', '"Path"']),
                    st.sampled_from(SPACES), st.sampled_from(SPACES),
                    st.text(alphabet='ab/"\\\néü\xff', max_size=6), st.sampled_from(['"', "", '",', '"\n', "\\"]))
FRAGMENTS = st.one_of(MEMBERS, st.sampled_from(['"path"', '"name"', '"device"', ": ", ":", ' "', '"', "\\", '\\"',
                                                "\n", "\\n", "é", "\xa0", "\\/", "/etc", " ", "{", ",", '""']),
                      st.text(max_size=3))


@settings(max_examples=2000, deadline=None)
@given(st.lists(FRAGMENTS, max_size=30).map("".join))
def test_member_lines_on_any_text(text: str) -> None:
    table = _scan().member_lines(text)
    expected = provenance._python_lines(text)
    if table is None:  # only when the Python version must decide
        assert any(ord(c) > 0xFF for c in text) or "\\" in text
    else:
        assert table == expected  # (a lookup table: the order of its keys is not part of it)


def test_member_lines_on_manifests() -> None:
    scan = _scan()
    data = {"metadata": {"name": "50-x"}, "spec": {"config": {"storage": {"files": [
        {"path": "/etc/a", "contents": {"source": "data:,a"}}, {"path": "/etc/b"}, {"path": "/etc/a"}]},
        "systemd": {"units": [{"name": "a.service", "contents": "[Unit]\nDescription=a é\n",
                               "dropins": [{"name": "10-a.conf"}]}]}}}}
    for text in (json.dumps(data, indent=1, ensure_ascii=False), json.dumps(data),
                 json.dumps(data, separators=(",\n", " :\n  "))):
        assert scan.member_lines(text) == provenance._python_lines(text)
    many = {"storage": {"files": [{"path": f"/etc/f{i}", "mode": 420} for i in range(300)]}}
    assert scan.member_lines(json.dumps(many, indent=2)) == provenance._python_lines(json.dumps(many, indent=2))
    indented = json.dumps(data, indent=1)
    assert scan.member_lines(indented)["/etc/b"] == next(
        number for number, line in enumerate(indented.splitlines(), 1) if line.strip() == '"path": "/etc/b"')
    # what the Python version decides: escapes inside a value, text beyond latin-1
    assert scan.member_lines('{"path": "\\/etc\\/a"}') is None
    assert scan.member_lines('{"path": "/etc/\u20ac"}') is None
    assert scan.member_lines("") == {}
    with pytest.raises(TypeError):
        scan.member_lines(b'{"path": "/a"}')


BYTES = st.lists(st.one_of(
    st.sampled_from([b":", b"\\", b"\\u003a", b"\\u003A", b"\\u003", b"u003a", b"\\\\u003a", b'"', b" ", b"x",
                     b"0" * 18, b"1" * 19, b"9" * 20, b"12345678901234567", b"-", b"."]),
    st.binary(max_size=4)), max_size=20).map(b"".join)


@settings(max_examples=3000, deadline=None)
@given(BYTES, st.booleans())
def test_json_colons_as_python_counts(data: bytes, guard: bool) -> None:
    assert _scan().json_colons(data, guard) == load._python_colons(data, guard)


@pytest.mark.parametrize(("data", "guard", "expected"), [
    (b"", True, 0), (b"a:b:c", True, 2), (b"1" * 18 + b":", True, 1), (b"x" + b"1" * 19, True, -1),
    (b"1" * 19, False, 0), (b"\\u003a", True, -1), (b"\\u003A:", False, 1), (b"\\u003", True, 0),
    (bytearray(b"::"), True, 2), (memoryview(b":1:"), True, 2),
])
def test_json_colons_table(data: bytes, guard: bool, expected: int) -> None:
    assert _scan().json_colons(data, guard) == expected


def test_json_colons_wants_bytes_and_a_flag() -> None:
    scan = _scan()
    with pytest.raises(TypeError):
        scan.json_colons("text", True)
    with pytest.raises(TypeError):
        scan.json_colons(b"x")
