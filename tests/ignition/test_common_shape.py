"""The common-shape route of `validate_dict` (ignition/common_shape.py) against the full route.

Its promise: on a config of the common shape (version, plain files and directories, units and dropins,
users with SSH keys, no duplicate) the very report the schema walk gives, entries in the same order and the same plain ids; on
anything else None, so the full route decides. Configs are generated in that shape and one step out of it.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ignition.common_shape import common_shape_report
from ignition.report import plain_covers
from ignition.rules.plain import plain_file
from ignition.validate import validate_dict
from ignition.versions import ACCEPTED_VERSIONS
from tests.ignition.test_plain_lists import DIRECTORY_LISTS, FILE_LISTS, MOSTLY_PLAIN

GOOD_UNIT = "[Unit]\nDescription=x\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"
UNIT_NAMES = ["a.service", "b.socket", "x@.service", "x@y.service", "a.conf", "noext", "", "a.service"]
UNIT_CONTENTS = [GOOD_UNIT, "[Unit]\nDescription=no install\n", "", "garbage", "[Unit\n", "[Service]\nA=b \\\n c\n"]
DROPIN_NAMES = ["10-a.conf", "20-b.conf", "10-a.conf", "x.txt", ""]
DROPINS = st.lists(st.one_of(
    st.fixed_dictionaries({"name": st.sampled_from(DROPIN_NAMES)}, optional={"contents": st.sampled_from(UNIT_CONTENTS)}),
    # one step out: a null, another type, an odd-cased key, no name
    st.fixed_dictionaries({"name": st.sampled_from(["10-a.conf", None, 1])}, optional={
        "contents": st.sampled_from([None, 1]), "Contents": st.just("[X]\n")}),
    st.sampled_from([None, 1, {}])), max_size=3)
PLAIN_UNIT = st.fixed_dictionaries({"name": st.sampled_from(UNIT_NAMES)}, optional={
    "contents": st.sampled_from(UNIT_CONTENTS), "enabled": st.booleans(), "mask": st.booleans(), "dropins": DROPINS})
UNITS: st.SearchStrategy[list[Any]] = st.one_of(st.lists(PLAIN_UNIT, max_size=4), st.lists(st.one_of(
    PLAIN_UNIT,
    # one step out of the shape: a null, another type, an odd-cased or unknown key, no name
    st.fixed_dictionaries({"name": st.sampled_from(UNIT_NAMES)}, optional={
        "contents": st.sampled_from([None, 1, GOOD_UNIT]), "enabled": st.sampled_from([None, 0, 1, "yes", True]),
        "mask": st.sampled_from([None, False]), "dropins": st.sampled_from([None, {}, "a.conf"]),
        "Enabled": st.just(True), "other": st.just(1)}),
    st.just({"contents": GOOD_UNIT}), st.sampled_from([None, 1, "x.service", []])), max_size=4))
# plain files and directories, some at a unit's own path (the systemd path conflict)
CLAIMING = st.lists(st.builds(lambda name, source: {"path": f"/etc/systemd/system/{name}", "contents": {"source": source}},
                              st.sampled_from(UNIT_NAMES), st.sampled_from(["data:,x", ""])), max_size=3)
STORAGE = st.one_of(
    st.fixed_dictionaries({}, optional={"files": FILE_LISTS, "directories": DIRECTORY_LISTS}),
    st.fixed_dictionaries({}, optional={"files": CLAIMING, "directories": st.builds(
        lambda d: [{"path": p["path"]} for p in d], CLAIMING)}),
    st.fixed_dictionaries({"files": st.lists(MOSTLY_PLAIN, max_size=6)}, optional={
        "links": st.just([{"path": "/etc/l", "target": "/x"}]), "Files": st.just([]),
        "disks": st.just([{"device": "/dev/sda"}])}),
    st.sampled_from([None, {}, [], {"files": None}, {"files": {}}]))
KEYS = st.lists(st.sampled_from(["ssh-ed25519 AAAA a", "ssh-rsa BBBB b", "ssh-ed25519 AAAA a "]), max_size=3)
USERS = st.lists(st.one_of(
    st.fixed_dictionaries({"name": st.sampled_from(["core", "admin", "core"])}, optional={"sshAuthorizedKeys": KEYS}),
    # one step out: another member, a null, a key of another type, no name
    st.fixed_dictionaries({"name": st.sampled_from(["core", "core", None, 1])}, optional={
        "sshAuthorizedKeys": st.sampled_from([None, [None], ["k", 1], "k", []]), "passwordHash": st.just("x"),
        "groups": st.just(["wheel"]), "SSHAuthorizedKeys": st.just(["k"])}),
    st.sampled_from([None, 1, {}])), max_size=3)
PASSWD = st.one_of(st.builds(lambda u: {"users": u}, USERS),
                   st.sampled_from([None, {}, {"users": None}, {"groups": [{"name": "g"}]}, {"users": [], "x": 1}]))
IGNITION_SECTIONS = st.one_of(st.just(None), st.sampled_from([
    {"version": "3.5.0", "timeouts": {}}, {"version": None}, {"Version": "3.5.0"}, {}, [],
    {"version": "3.5.0", "config": {"merge": [{"source": "data:,x"}, {"source": "data:,x"}]}}]))


def _config(draw: st.DrawFn) -> dict[str, Any]:
    version = draw(st.sampled_from(ACCEPTED_VERSIONS))
    config: dict[str, Any] = {"ignition": {"version": version}}
    odd_ignition = draw(IGNITION_SECTIONS)
    if odd_ignition is not None and draw(st.integers(0, 4)) == 0:
        config["ignition"] = odd_ignition
    if draw(st.booleans()):
        config["storage"] = draw(STORAGE)
    if draw(st.booleans()):
        config["systemd"] = draw(st.one_of(st.builds(lambda u: {"units": u}, UNITS),
                                           st.sampled_from([None, {}, {"units": None}, {"units": [], "x": 1}])))
    if draw(st.booleans()):
        config["passwd"] = draw(PASSWD)
    if draw(st.integers(0, 9)) == 0:
        config[draw(st.sampled_from(["kernelArguments", "Storage", "extra", "Passwd"]))] = {}
    return config


CONFIGS = st.composite(lambda draw: (draw(st.sampled_from(ACCEPTED_VERSIONS)), _config(draw)))()


def _report(config: dict[str, Any], version: str, **kwargs: Any) -> tuple[list[Any], frozenset[int]]:
    report = validate_dict(config, version=version, **kwargs)
    return [(e.severity, e.code, tuple(e.path), e.message) for e in report.entries], report.plain


@settings(max_examples=3000, deadline=None)
@given(case=CONFIGS)
def test_the_common_route_gives_the_full_routes_report(case: tuple[str, dict[str, Any]]) -> None:
    version, config = case
    before = copy.deepcopy(config)
    full = _report(config, version, per_entry=True)
    assert _report(config, version) == full
    assert _report(config, version, plain_ids=False)[0] == full[0]  # (ids left out, the same entries)
    # lists named whole: the same entries, and the same files and directories vouched for
    entries, by_lists = _report(config, version, plain_lists=True)
    assert entries == full[0]
    assert _vouched(config, by_lists) == _vouched(config, full[1])
    assert config == before  # neither route changes its input


def _vouched(config: dict[str, Any], plain: frozenset[int]) -> list[tuple[str, int | None]]:
    """Which storage entries `plain` vouches for, by list and position (whole lists first tried as such)."""
    storage = config.get("storage")
    out: list[tuple[str, int | None]] = []
    for name in ("files", "directories"):
        entries = storage.get(name) if isinstance(storage, dict) else None
        if not isinstance(entries, list):
            continue
        if entries and plain_covers(plain, entries):
            out.append((name, None))
        else:
            out += [(name, i) for i, entry in enumerate(entries) if id(entry) in plain]
    return out


_ONE_FILE = [{"path": "/a"}]


@pytest.mark.parametrize(("plain", "entries", "covered"), [
    (frozenset(), [], False),  # nothing vouched for
    (frozenset({id(_ONE_FILE)}), _ONE_FILE, True),  # the list by its own id
    (frozenset(map(id, _ONE_FILE)), _ONE_FILE, True),  # each entry by its id
    (frozenset({0}), _ONE_FILE, False),
    (frozenset({0}), [], True),  # an empty list: nothing to vouch for
])
def test_plain_covers(plain: frozenset[int], entries: list[Any], covered: bool) -> None:
    assert plain_covers(plain, entries) is covered
    assert plain_covers(list(plain), entries) is covered  # any collection of ids


_ELSEWHERE = {"path": "/etc/other", "contents": {"source": ""}}


@settings(max_examples=800, deadline=None)
@given(case=CONFIGS, data=st.data())
def test_entries_vouched_for_change_nothing(case: tuple[str, dict[str, Any]], data: st.DataObject) -> None:
    """`known_plain` naming some plain files (the renderer's trusted merged entries): the same report."""
    version, config = case
    storage = config.get("storage")
    files = storage.get("files") if isinstance(storage, dict) else None
    plain = [f for f in files if isinstance(f, dict) and plain_file(f)] if isinstance(files, list) else []
    vouched = data.draw(st.lists(st.sampled_from(plain), unique_by=id) if plain else st.just([]))
    known = {id(f) for f in vouched} | {id(_ELSEWHERE)}  # an id of an entry of another config is kept too
    assert _report(config, version, known_plain=known) == _report(config, version, per_entry=True, known_plain=known)


BENCH_LIKE: dict[str, Any] = {
    "ignition": {"version": "3.5.0"},
    "storage": {"files": [{"path": f"/etc/b/{j}.conf", "mode": 420, "contents": {"source": f"data:,v{j}%0A"}}
                          for j in range(20)], "directories": [{"path": "/etc/b", "mode": 493}]},
    "systemd": {"units": [{"name": "b.service", "enabled": True, "contents": GOOD_UNIT},
                          {"name": "c.service", "mask": True}]}}


def _with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    config = copy.deepcopy(BENCH_LIKE)
    target: Any = config
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return config


@pytest.mark.parametrize(("config", "taken"), [
    (BENCH_LIKE, True),
    ({"ignition": {"version": "3.5.0"}}, True),
    (_with(("systemd", "units", 0, "contents"), "[Unit]\n"), True),  # a warning: still this route
    (_with(("storage", "files", 1, "path"), "/etc/b/0.conf"), False),  # a duplicate: the full route names it
    (_with(("storage", "directories", 0, "path"), "/etc/b/0.conf"), False),  # one key space with files
    (_with(("systemd", "units", 1, "name"), "b.service"), False),
    (_with(("storage", "files", 0, "mode"), 0o4755), False),  # not plain
    (_with(("systemd", "units", 0, "dropins"), []), True),
    (_with(("systemd", "units", 0, "dropins"), [{"name": "10-a.conf", "contents": "[Service]\nA=b\n"}]), True),
    (_with(("systemd", "units", 0, "dropins"), [{"name": "10-a.conf"}, {"name": "10-a.conf"}]), False),
    (_with(("systemd", "units", 0, "dropins"), [{"name": "10-a.conf", "contents": None}]), False),
    (_with(("systemd", "units", 0, "dropins"), None), False),
    (_with(("systemd", "units", 0, "dropins"), [{"name": "10-a.conf", "Contents": "[X]\n"}]), False),  # Go reads it
    (_with(("systemd", "units", 0, "dropins"), [{"name": "10-a.conf", "x": 1}]), False),  # an unused key
    (_with(("systemd", "units", 0, "enabled"), None), False),
    (_with(("ignition", "timeouts"), {}), False),
    (_with(("passwd",), {"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 A", "ssh-rsa B"]}]}), True),
    (_with(("passwd",), {"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 A", "ssh-ed25519 A"]}]}), False),
    (_with(("passwd",), {"users": [{"name": "core"}, {"name": "core"}]}), False),
    (_with(("passwd",), {"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-rsa B", 1]}]}), False),
    (_with(("passwd",), {"users": [{"name": "core", "sshAuthorizedKeys": [None]}]}), False),
    (_with(("passwd",), {"users": [{"name": "core", "passwordHash": "x"}]}), False),
    (_with(("passwd",), {"groups": [{"name": "g"}]}), False),
    (_with(("storage", "links"), []), False),
])
def test_which_configs_take_the_common_route(config: dict[str, Any], taken: bool) -> None:
    assert (common_shape_report(config, "3.5.0", frozenset()) is not None) is taken
    assert _report(config, "3.5.0") == _report(config, "3.5.0", per_entry=True)


def test_a_path_conflict_with_a_unit_is_reported_on_the_common_route() -> None:
    config = _with(("storage", "files", 0, "path"), "/etc/systemd/system/b.service")
    report = common_shape_report(config, "3.5.0", frozenset())
    assert report is not None
    assert [(e.path, e.message) for e in report.entries] == [
        (("storage", "files", 0, "path"), "path conflicts with systemd unit or dropin")]


def test_a_list_replaced_by_a_later_key_lends_its_mark_to_no_other() -> None:
    """`Files` replaces `files` (Go matches keys case-insensitively): the whole-plain copy decode made first is
    dropped, and the next list built (here the users) used to take over its id and its "skip me" mark, hiding
    the repeated SSH key from the duplicate check (found by the hypothesis test above)."""
    config = {"ignition": {"version": "3.0.0"},
              "storage": {"files": [{"path": "/etc/a", "contents": {"source": "data:,x"}}], "Files": []},
              "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["k", "k"]}]}}
    entries = _report(config, "3.0.0")[0]
    assert ("error", "duplicate", ("passwd", "users", 0, "sshAuthorizedKeys", 1), "duplicate entry defined") in entries
    assert entries == _report(config, "3.0.0", per_entry=True)[0]
