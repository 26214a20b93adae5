"""The validator with its fast paths (whole-list plain tests, Decoded.whole, the gated per-config rules,
check_dups' present-member walk, check_units' template shortcut, decode's member table) against the frozen
copy of the validator before them (tests/ignition/reference): same entries in the same order, same
`Report.plain`, same normalized document, for generated configs of every spec version.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ignition.decode import decode
from ignition.rules.caches import clear_caches
from ignition.validate import plain_list_tests, plain_tests, validate_dict
from ignition.versions import ACCEPTED_VERSIONS
from tests.ignition.reference import decode as ref_decode
from tests.ignition.reference import validate as ref_validate
from tests.ignition.test_plain_lists import DIRECTORY_LISTS, FILE_LISTS

UNIT_NAMES = ["a.service", "a@.service", "a@b.service", "a@b.socket", "x.conf", "b", "a.d/x.service", "a@.service\n",
              "@.service", "a@b@c.service", ""]
UNIT_CONTENTS = [None, "", "[Unit]\n", "[Unit]\nA=b\n", "[Service]\nX=y\n", "[Unit]\nA=b\n[Install]\nWantedBy=x\n", "[Install]\n", "bad", "[Unit\n", "A=b\n"]
UNIT: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries({"name": st.sampled_from(UNIT_NAMES + [None])}, optional={
    "enabled": st.sampled_from([True, False, None, "yes"]), "mask": st.booleans(),
    "contents": st.sampled_from(UNIT_CONTENTS + [3]),
    "dropins": st.lists(st.fixed_dictionaries({"name": st.sampled_from(["a.conf", "b.conf", "x", None])},
                                              optional={"contents": st.sampled_from(UNIT_CONTENTS)}), max_size=3)})
UNITS: st.SearchStrategy[list[dict[str, Any]]] = st.lists(
    st.one_of(UNIT, UNIT, UNIT, UNIT.map(lambda u: {**u, "Name": "c.service"})), max_size=4)
LINKS = st.lists(st.fixed_dictionaries({"path": st.sampled_from(["/etc", "/etc/a", "/etc/systemd/system/a.service", "/l", "x"])},
                                       optional={"target": st.sampled_from(["/etc/d", "/x", "", "d"]), "hard": st.booleans()}),
                 max_size=3)
IGNITION: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries({}, optional={
    "config": st.sampled_from([{}, {"merge": [{"source": "data:,"}, {"source": "data:,"}]}, {"replace": {"source": "x"}}]),
    "security": st.sampled_from([{}, {"tls": {"certificateAuthorities": [{"source": "data:,"}, {"source": "data:,"}]}}]),
    "proxy": st.sampled_from([{}, {"httpProxy": "ftp://x", "noProxy": ["a", "a"]}, {"httpsProxy": "http://p"}]),
    "timeouts": st.sampled_from([{}, {"httpTotal": 5}, {"httpTotal": "5"}]),
    "Config": st.just({}), "other": st.just(1)})
STORAGE_REST: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries({}, optional={
    "links": LINKS,
    "disks": st.sampled_from([[], [{"device": "/dev/sda", "partitions": [{"number": 1}, {"number": 1}, {"label": "a"}]}],
                              [{"device": "/dev/sda"}, {"device": "/dev/sda"}]]),
    "filesystems": st.sampled_from([[], [{"device": "/dev/sda", "format": "xfs", "path": "/var"}], [{"device": "x"}]]),
    "raid": st.sampled_from([[], [{"name": "r", "level": "raid1", "devices": ["/dev/a", "/dev/a"]}],
                             [{"name": "", "level": "bogus"}]]),
    "luks": st.sampled_from([[], [{"name": "l", "device": "/dev/x"}, {"name": "l"}]]),
})


@st.composite
def configs(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    version = draw(st.sampled_from(ACCEPTED_VERSIONS))
    config: dict[str, Any] = {"ignition": {"version": version, **draw(IGNITION)}}
    storage: dict[str, Any] = {**draw(STORAGE_REST)}
    if draw(st.booleans()):
        storage["files"] = draw(FILE_LISTS)
    if draw(st.booleans()):
        storage["directories"] = draw(DIRECTORY_LISTS)
    conflict = draw(st.sampled_from(["", "/etc/systemd/system/a.service", "/etc/systemd/system/a.service.d/a.conf"]))
    if conflict:  # a node at a unit's or dropin's path (a conflict when that one has contents)
        kind = draw(st.sampled_from(["files", "directories", "links"]))
        storage[kind] = [*(storage.get(kind) or []), {"path": conflict}]
    empty_storage: bool = draw(st.booleans())
    if storage or empty_storage:
        config["storage"] = storage
    if conflict or draw(st.booleans()):
        units = draw(UNITS)
        if conflict and draw(st.booleans()):  # the unit and dropin at those paths, with contents
            units += [{"name": "a.service", "contents": "[Unit]\n", "dropins": [{"name": "a.conf", "contents": "x"}]}]
        if draw(st.booleans()):  # an enabled instance of a template without [Install]
            units += [{"name": "a@.service", "contents": draw(st.sampled_from(UNIT_CONTENTS))},
                      {"name": "a@b.service", "enabled": True}]
        config["systemd"] = {"units": draw(st.permutations(units))}
    extras: list[dict[str, Any]] = [
        {}, {"kernelArguments": {"shouldExist": ["a", "a"], "shouldNotExist": ["a"]}},
        {"passwd": {"users": [{"name": "core"}, {"name": "core"}]}}, {"Storage": {}},
        {"systemd": None}, {"storage": None}, {"storage": {"files": None}}]
    extra = draw(st.sampled_from(extras))
    return {**config, **extra}, version


def _entries(report: Any) -> list[tuple[Any, ...]]:
    return [(e.severity, e.code, tuple(e.path), e.message) for e in report.entries]


@settings(max_examples=2000, deadline=None)
@given(case=configs(), explicit=st.booleans())
def test_validate_dict_equals_the_reference(case: tuple[dict[str, Any], str], explicit: bool) -> None:
    config, version = case
    before = copy.deepcopy(config)
    clear_caches()
    expected = ref_validate.validate_dict(config, version=version if explicit else None)
    got = validate_dict(config, version=version if explicit else None)
    assert _entries(got) == _entries(expected)
    assert got.plain == expected.plain
    assert config == before


def _mismatch(m: Any) -> tuple[Any, ...] | None:
    """A TypeMismatch's fields (the two modules' classes differ; their contents must not)."""
    return None if m is None else (m.path, m.json_kind, m.go_struct, m.field_path, m.go_type, m.literal, m.message())


@settings(max_examples=1000, deadline=None)
@given(case=configs())
def test_decode_equals_the_reference(case: tuple[dict[str, Any], str]) -> None:
    """The normalized document, the type error and the unused keys are the old decoder's."""
    config, version = case
    before = copy.deepcopy(config)
    expected = ref_decode.decode(config, version, accept=plain_tests(version))
    got = decode(config, version, accept=plain_tests(version), accept_lists=plain_list_tests(version))
    assert (got.doc, _mismatch(got.mismatch), got.unused, got.accepted) == (
        expected.doc, _mismatch(expected.mismatch), expected.unused, expected.accepted)
    assert config == before
    for lst in ((got.doc or {}).get("storage") or {}).values():
        if isinstance(lst, list) and id(lst) in got.whole:  # a list passed whole holds accepted items only
            assert all(id(item) in got.accepted for item in lst)
