"""The plain-entry fast path (ignition/rules/plain.py) against the full route it skips.

Its promise: an entry it accepts decodes to itself and draws no entry from any per-entry rule, in every
spec version; and validating with the fast path gives exactly the entries the full route gives.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ignition.decode import CONTEXT_MISMATCH, decode
from ignition.report import path_str
from ignition.rules.dataurls import PLAIN_DATA_URL, check_data_url
from ignition.rules.plain import plain_directory, plain_file
from ignition.rules.urls import check_url
from ignition.validate import validate_dict, validate_normalized
from ignition.versions import ACCEPTED_VERSIONS

PATHS = ["/etc/a", "/etc/x\n/y", "/a\n", "/etc/./a", "/etc//a", "/etc/a/", "etc/a", "/", "/.a", "/..", "/a/..", "/a/..b", "", "/a b",
         "/ä/ö", "/etc/systemd/system/x.service", "/a/.", "/..a/b", "//a", "/a\x00b"]
SOURCES = ["data:,x", "data:,a%20b", "data:,%zz", "data:,%2", "data:;base64,aGk=", "data:;base64,aGk",
           "data:;base64,aGk=\n", "data:text/plain;charset=utf-8,x", "data:text/plain;charset=utf-8;base64,aGk=",
           "data:,#", "data:,a\nb", "data:,a\ndata:,b", "data:,a\n", "https://example.com/x", "", "data:/x", "DATA:,x", "data:,a b", "data:x,y",
           "data:;base64,a GkK", "data:application/octet-stream;base64,", "data:,ä", "data:;charset=x=y,z",
           "data:,\x7f", "tftp://h/x", "s3://b/k", "data:;base64,====", "data:,%0A%0a"]
OWNERS: list[Any] = [{}, {"id": 0}, {"name": "core"}, {"id": 1, "name": "x"}, {"id": None}, {"name": None},
                     {"ID": 3}, {"name": ""}, {"id": 2**63}, {"id": True}, {"name": 5}, None, "core"]
MODES: list[Any] = [0, 420, 0o644, 0o777, 0o1000, 0o4755, 0o7777, 0o10000, -1, True, "420", 2**64, 1.5, None]
SCALAR: list[Any] = [None, True, False, 1, "x"]


def _maybe(options: list[Any]) -> st.SearchStrategy[Any]:
    return st.sampled_from(options)


CONTENTS = st.one_of(
    st.none(), st.just({}), st.sampled_from(["x", 5, []]),
    st.fixed_dictionaries({}, optional={
        "source": _maybe(SOURCES + [None, 3]), "compression": _maybe(["", "gzip", "xz", None, 5]),
        "verification": _maybe([{}, {"hash": "sha512-" + "a" * 128}, {"hash": "x"}]),
        "httpHeaders": _maybe([[], [{"name": "a", "value": "b"}], [None]]), "Source": _maybe(SOURCES[:3]),
        "other": _maybe(SCALAR)}))
NODE = {"path": _maybe(PATHS + [None, 7]), "mode": _maybe(MODES), "overwrite": _maybe(SCALAR),
        "user": _maybe(OWNERS), "group": _maybe(OWNERS), "Path": _maybe(PATHS[:2]), "unknown": _maybe(SCALAR)}
FILES = st.fixed_dictionaries({}, optional={
    **NODE, "contents": CONTENTS, "append": _maybe([[], [{"source": "data:,x"}], None])})
DIRECTORIES = st.fixed_dictionaries({}, optional=NODE)


def _near_plain(base: st.SearchStrategy[dict[str, Any]], other: st.SearchStrategy[dict[str, Any]],
                ) -> st.SearchStrategy[dict[str, Any]]:
    """Plain-looking entries with at most one member taken from the wild strategy (most are accepted)."""
    def mix(entry: dict[str, Any], wild: dict[str, Any], key: str | None) -> dict[str, Any]:
        if key is not None and key in wild:
            entry = {**entry, key: wild[key]}
        return entry
    keys = st.one_of(st.none(), st.sampled_from(sorted(set(NODE) | {"contents", "append"})))
    return st.builds(mix, base, other, keys)


GOOD_FILES = st.fixed_dictionaries({"path": _maybe(["/etc/a", "/etc/.x/b", "/ä", "/opt/a..b"])}, optional={
    "mode": _maybe([0, 420, 0o755, 0o777]), "overwrite": st.booleans(), "user": _maybe([{"id": 0}, {"name": "c"}]),
    "group": _maybe([{"name": ""}]), "contents": st.fixed_dictionaries({}, optional={
        "source": _maybe(["data:,x", "data:;base64,aGk=", "", "data:text/plain;charset=utf-8,a%20b"]),
        "compression": _maybe(["", "gzip"])})})
FILES = st.one_of(FILES, _near_plain(GOOD_FILES, FILES))
DIRECTORIES = st.one_of(DIRECTORIES, _near_plain(GOOD_FILES.map(
    lambda e: {k: v for k, v in e.items() if k != "contents"}), DIRECTORIES))


def _reference(config: dict[str, Any], version: str) -> list[tuple[str, tuple[Any, ...], str]]:
    """The full route: decode without the fast path, then every rule on every entry."""
    decoded = decode(copy.deepcopy(config), version)
    if decoded.mismatch is not None:
        return [("error", decoded.mismatch.path, decoded.mismatch.message())]
    entries = [(e.severity, tuple(e.path), e.message) for e in validate_normalized(decoded.doc or {}, version)]
    return entries + [("warning", p, f"unused key {p[-1]}") for p in decoded.unused] + [
        ("warning", p, CONTEXT_MISMATCH.format(path_str(p))) for p in decoded.context]


def _fast(config: dict[str, Any], version: str) -> list[tuple[str, tuple[Any, ...], str]]:
    return [(e.severity, tuple(e.path), e.message) for e in validate_dict(config, version=version)]


@settings(max_examples=1500, deadline=None)
@given(entry=FILES, version=st.sampled_from(ACCEPTED_VERSIONS))
def test_an_accepted_file_decodes_to_itself_and_passes_every_rule(entry: dict[str, Any], version: str) -> None:
    config = {"ignition": {"version": version}, "storage": {"files": [entry]}}
    if plain_file(entry):
        decoded = decode(copy.deepcopy(config), version)
        assert decoded.mismatch is None and not decoded.unused
        assert decoded.doc is not None and decoded.doc["storage"]["files"] == [entry]
        assert _reference(config, version) == []
    assert _fast(config, version) == _reference(config, version)


@settings(max_examples=800, deadline=None)
@given(entry=DIRECTORIES, version=st.sampled_from(ACCEPTED_VERSIONS))
def test_an_accepted_directory_decodes_to_itself_and_passes_every_rule(entry: dict[str, Any], version: str) -> None:
    config = {"ignition": {"version": version}, "storage": {"directories": [entry]}}
    if plain_directory(entry):
        assert _reference(config, version) == []
    assert _fast(config, version) == _reference(config, version)


@settings(max_examples=500, deadline=None)
@given(files=st.lists(FILES, max_size=6), dirs=st.lists(DIRECTORIES, max_size=3),
       version=st.sampled_from(ACCEPTED_VERSIONS))
def test_whole_configs_get_the_same_entries(files: list[Any], dirs: list[Any], version: str) -> None:
    """Duplicates across files and directories, and links, still see the entries the fast path took."""
    config = {"ignition": {"version": version}, "storage": {
        "files": files, "directories": dirs, "links": [{"path": "/etc", "target": "/x"}] if len(files) > 4 else []},
        "systemd": {"units": [{"name": "x.service", "contents": "[Unit]\n"}]}}
    assert _fast(config, version) == _reference(config, version)


@settings(max_examples=1000, deadline=None)
@given(source=st.one_of(st.sampled_from(SOURCES), st.builds(
    lambda head, body: head + body, st.sampled_from(["data:,", "data:;base64,", "data:text/plain;a=b,", "data:"]),
    st.text(st.sampled_from(list("aA0+/=%2Fz ;,:#?\n\x7fé")), max_size=10))))
def test_the_plain_data_url_pattern_only_admits_valid_urls(source: str) -> None:
    if PLAIN_DATA_URL.fullmatch(source):
        assert check_data_url(source) is None
        for version in ACCEPTED_VERSIONS:
            assert check_url(source, version) is None


@pytest.mark.parametrize(("entry", "plain"), [
    ({"path": "/etc/a", "mode": 420, "overwrite": True, "contents": {"source": "data:,x"}}, True),
    ({"path": "/etc/a", "contents": {"source": "data:;base64,aGk=", "compression": "gzip"}}, True),
    ({"path": "/etc/a", "user": {"name": "core"}, "group": {"id": 0}}, True),
    ({"path": "/etc/a", "overwrite": True}, False),                      # overwrite without a source: an error
    ({"path": "/etc/a", "mode": 0o4755, "contents": {"source": "data:,x"}}, False),  # a warning before 3.6
    ({"path": "/etc/a/", "contents": {"source": "data:,x"}}, False),
    ({"path": "/etc/a", "contents": {"source": "https://x/y"}}, False),  # left to the full URL rules
    ({"path": "/etc/a", "Mode": 420}, False),                           # odd case: an unused-key warning
    ({"path": "/etc/a", "mode": None}, False),                          # null: decode drops it
])
def test_table(entry: dict[str, Any], plain: bool) -> None:
    assert plain_file(entry) is plain
