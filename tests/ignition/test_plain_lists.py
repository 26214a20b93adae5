"""The whole-list plain tests (ignition/rules/plain.py `files_together`, `directories_together`, and `plain_files`,
`plain_directories` which use them on lists of more than four) against the
per-entry ones, and validation with them against validation without them (`validate_dict(per_entry=True)`).

Their promise: True only when the per-entry test holds for every entry (a False just sends decode to the
per-entry test), so verdicts never change; and True on the common shape, or the speed-up is gone.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ignition.rules.plain import (
    directories_together,
    files_together,
    plain_directories,
    plain_directory,
    plain_file,
    plain_files,
)
from ignition.validate import validate_dict
from ignition.versions import ACCEPTED_VERSIONS
from tests.ignition.test_plain import DIRECTORIES, FILES, GOOD_FILES, PATHS, SOURCES

# plain-looking values, including the ones the list tests look at most closely (separators, dots, escapes)
GOOD_PATHS = ["/etc/a", "/etc/.x/b", "/home/core/.ssh/authorized_keys", "/ä", "/opt/a..b", "/a\x00b", "/x y",
              "/etc/..a", "/etc/a.", "/a/.b/..c/...", "/%"]
GOOD_SOURCES = ["data:,x", "", "data:,v1.2%0A", "data:,%41%2f", "data:;base64,aGk=", "data:,a:b,c;d=e?f@g~",
                "data:text/plain;charset=utf-8,a%20b", "data:application/octet-stream;base64,",
                "data:,", "data:,data:,x", "data:,%4", "data:,%%41", "data:,%4G", "data:,ä", "data:,a b"]
WILD_PATHS = PATHS + ["/a\n/b", "/a/\n", "\n/a", "/a\n", "/a\n..", "/..\n/a", "/a/.\n", "/a\n\n/b"]
WILD_SOURCES = SOURCES + ["data:,a\n", "\ndata:,a", "data:,a\n\ndata:,b", "data:,%0\nA", "data:,%\n41", "data:,\n"]


def _file(path: str, source: Any, extra: dict[str, Any]) -> dict[str, Any]:
    return {"path": path, **extra, "contents": {"source": source, **extra.get("contents", {})}}


EXTRAS = st.fixed_dictionaries({}, optional={
    "mode": st.sampled_from([0, 420, 0o644, 0o777, 0o1000, -1, True, False, None, 1.0, "420", 2**64]),
    "overwrite": st.sampled_from([True, False, None, 0, 1]),
    "user": st.sampled_from([{"id": 0}, {"name": "core"}, {"id": 1, "name": "x"}, {"id": True}, None, {}]),
    "group": st.sampled_from([{"name": ""}, {"id": 2**63}, {"id": -(2**63)}, {"ID": 1}, "wheel"]),
    "contents": st.fixed_dictionaries({}, optional={
        "compression": st.sampled_from(["", "gzip", "xz", None, 0, False, ["gzip"]]),
        "verification": st.just({})}),
    "unknown": st.just(1),
})
# entries that are plain with few exceptions: the list test answers both ways
CLOSE_FILES = st.builds(_file, st.sampled_from(GOOD_PATHS + WILD_PATHS[:6] + [None, 5]),
                        st.sampled_from(GOOD_SOURCES + WILD_SOURCES + [None, 3]),
                        st.one_of(st.just({}), EXTRAS))
MOSTLY_PLAIN = st.builds(_file, st.sampled_from(GOOD_PATHS), st.sampled_from(GOOD_SOURCES), st.just({}))
ONE_ODD_MEMBER = st.one_of(
    st.builds(lambda k, v: {"path": "/etc/a", "contents": {"source": "data:,x"}, k: v},
              st.sampled_from(["mode", "overwrite", "user", "group", "append", "Path", "unknown", "contents"]),
              st.sampled_from([None, True, 0, 0o644, -1, 0o1000, "x", {}, [], {"id": 0}, {"name": "a", "id": 1},
                               {"source": "data:,y"}, {"source": None}, {"Source": "data:,y"}])),
    st.builds(lambda k, v: {"path": "/etc/a", "contents": {"source": "data:,x", k: v}},
              st.sampled_from(["compression", "verification", "httpHeaders", "source", "Source", "other"]),
              st.sampled_from([None, "", "gzip", "xz", 0, {}, [], "data:,y", "http://x/y"])))
# made-up strings from the characters the list tests treat specially (separator, slash, dot, escapes)
ODD_PATHS = st.one_of(st.sampled_from(GOOD_PATHS + WILD_PATHS), st.text(st.sampled_from("/.\na"), max_size=7))
ODD_SOURCES = st.one_of(st.sampled_from(GOOD_SOURCES + WILD_SOURCES), st.builds(
    lambda head, body: head + body, st.sampled_from(["data:,", "", "data:;base64,", "\ndata:,", "data:,x\n"]),
    st.text(st.sampled_from("a%0G\n.:,;/d"), max_size=8)))
FILE_LISTS = st.one_of(
    st.lists(st.one_of(MOSTLY_PLAIN, GOOD_FILES), max_size=12),
    st.lists(st.one_of(MOSTLY_PLAIN, MOSTLY_PLAIN, CLOSE_FILES), max_size=12),
    st.lists(st.one_of(MOSTLY_PLAIN, ONE_ODD_MEMBER), min_size=1, max_size=4),
    st.lists(ONE_ODD_MEMBER, min_size=1, max_size=2),
    st.lists(st.one_of(MOSTLY_PLAIN, FILES, st.sampled_from([None, 1, "x", []])), max_size=8),
    # one member varied at a time, the others plain: its test alone decides
    st.lists(st.builds(_file, ODD_PATHS, st.just("data:,x"), st.just({})), min_size=1, max_size=6),
    st.lists(st.builds(_file, st.just("/etc/a"), ODD_SOURCES, st.just({})), min_size=1, max_size=6),
)
DIRECTORY_LISTS = st.one_of(
    st.lists(st.builds(lambda p, e: {"path": p, **{k: v for k, v in e.items() if k != "contents"}},
                       st.one_of(ODD_PATHS, st.none()), st.one_of(st.just({}), EXTRAS)), max_size=10),
    st.lists(st.builds(lambda p: {"path": p}, ODD_PATHS), min_size=1, max_size=6),
    st.lists(st.one_of(DIRECTORIES, st.just({"path": "/etc/d"}), st.none()), max_size=6),
)


def _newline_free(entry: dict[str, Any]) -> bool:
    contents = entry.get("contents")
    strings = [entry.get("path"), contents.get("source") if isinstance(contents, dict) else None]
    return not any(isinstance(s, str) and "\n" in s for s in strings)


@settings(max_examples=3000, deadline=None)
@given(entries=FILE_LISTS)
def test_the_file_list_test_is_true_only_when_every_file_is_plain(entries: list[Any]) -> None:
    every = all(type(e) is dict and plain_file(e) for e in entries)
    assert plain_files(entries) is (every if len(entries) <= 4 else files_together(entries))  # short: one by one
    if files_together(entries):
        assert every
    elif every:
        # a False on plain files is allowed only where the list test defers on purpose
        assert not all(_newline_free(e) and type(e.get("contents")) is dict and "source" in e["contents"]
                       for e in entries), entries


@settings(max_examples=1500, deadline=None)
@given(entries=DIRECTORY_LISTS)
def test_the_directory_list_test_is_true_only_when_every_directory_is_plain(entries: list[Any]) -> None:
    every = all(type(e) is dict and plain_directory(e) for e in entries)
    assert plain_directories(entries) is (every if len(entries) <= 4 else directories_together(entries))
    if directories_together(entries):
        assert every
    elif every:
        assert not all(_newline_free(e) for e in entries), entries


def _entries(config: dict[str, Any], version: str, per_entry: bool) -> tuple[list[Any], frozenset[int] | None]:
    report = validate_dict(config, version=version, per_entry=per_entry)
    return [(e.severity, e.code, tuple(e.path), e.message) for e in report.entries], report.plain


@settings(max_examples=1000, deadline=None)
@given(files=FILE_LISTS, dirs=DIRECTORY_LISTS, version=st.sampled_from(ACCEPTED_VERSIONS),
       unit=st.sampled_from(["x.service", "a.service", "b.conf"]), links=st.booleans())
def test_validation_with_list_tests_equals_validation_without(files: list[Any], dirs: list[Any], version: str,
                                                              unit: str, links: bool) -> None:
    """Same entries in the same order, and the same plain ids (the list tests pass the same entries)."""
    config: dict[str, Any] = {"ignition": {"version": version}, "storage": {"files": files, "directories": dirs},
              "systemd": {"units": [{"name": unit, "contents": "[Unit]\n", "dropins": [{"name": "a.conf", "contents": "x"}]}]}}
    if links:
        config["storage"]["links"] = [{"path": "/etc", "target": "/x"}, {"path": "/etc/systemd/system/x.service"}]
    before = copy.deepcopy(config)
    assert _entries(config, version, False) == _entries(config, version, True)
    assert config == before  # neither route changes its input


@settings(max_examples=800, deadline=None)
@given(files=FILE_LISTS, version=st.sampled_from(ACCEPTED_VERSIONS), data=st.data())
def test_entries_the_caller_vouches_for_change_nothing(files: list[Any], version: str, data: st.DataObject) -> None:
    """`known_plain` naming some plain files (the renderer's trusted merged entries): the list test sees only
    the others, and the report is the same as without it."""
    config: dict[str, Any] = {"ignition": {"version": version}, "storage": {"files": files}}
    plain = [f for f in files if isinstance(f, dict) and plain_file(f)]
    vouched = data.draw(st.lists(st.sampled_from(plain), unique_by=id) if plain else st.just([]))
    report = validate_dict(config, version=version, known_plain={id(f) for f in vouched})
    assert _entries(config, version, False) == (
        [(e.severity, e.code, tuple(e.path), e.message) for e in report.entries], report.plain)


def test_the_common_shape_takes_the_list_route() -> None:
    """A bench-like list of files is accepted whole (and a single odd file sends it down the per-entry route)."""
    files = [{"path": f"/etc/bench/{j}/file.conf", "mode": 0o644, "overwrite": True,
              "contents": {"source": f"data:,v{j}%0A", "compression": ""}} for j in range(20)]
    files.append({"path": "/home/core/.ssh/authorized_keys", "user": {"name": "core"}, "contents": {"source": ""}})
    assert plain_files(files)
    assert not plain_files([*files, {"path": "/etc/a", "mode": True, "contents": {"source": ""}}])
    assert not plain_files([*files, {"path": "/etc/a", "contents": {"source": "data:,a\ndata:,b"}}])
    assert not plain_files([*files, {"path": "/etc/a\n", "contents": {"source": ""}}])  # plain, but deferred
    assert plain_file({"path": "/etc/a\n", "contents": {"source": ""}})
    odds: tuple[Any, ...] = ([], {}, ["gzip"], None, 0, False)
    for odd in odds:  # unhashable or not a str: refused, not a TypeError
        assert not plain_files([*files, {"path": "/etc/b", "contents": {"source": "", "compression": odd}}])
        assert plain_files([*files, {"path": "/etc/b", "mode": odd, "contents": {"source": ""}}]) is (odd == 0 and odd is not False)
    assert directories_together([{"path": "/etc/a"}, {"path": "/var/.b", "mode": 0o755, "group": {"id": 0}}])
    assert not directories_together([{"path": "/etc/a"}, {"path": "/var/./b"}])
