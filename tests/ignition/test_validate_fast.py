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

from ignition.decode import CONTEXT_MISMATCH, _go_unused, decode
from ignition.report import path_str
from ignition.rules.caches import clear_caches
from ignition.rules.unitfile import _go_quote
from ignition.schema import Node, root
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


_WALKED = ("unused-key", "context-mismatch")
_NO_INSTALL = ('unit "', '" is enabled, but has no install section so enable does nothing')


def _requoted(entries: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The reference's entries with the unit name of a no-install warning in Go's %q (it printed it raw)."""
    out = []
    for sev, code, path, msg in entries:
        if code == "unit-no-install":
            name = msg[len(_NO_INSTALL[0]):-len(_NO_INSTALL[1])]
            msg = f"unit {_go_quote(name.encode('utf-8', 'surrogatepass'))}{_NO_INSTALL[1][1:]}"
        out.append((sev, code, path, msg))
    return out


def _odd(value: Any, node: Node) -> bool:
    """True when Go's unused-key walk (of the decoded config) differs from a walk of the JSON: an odd-cased
    key, a null on a struct value or list item (the old decoder walked the JSON)."""
    if node.kind == "object" and isinstance(value, dict):
        for key, val in value.items():
            f = node.fields.get(key)
            if f is None:
                if node.match(key) is not None:
                    return True
                continue
            if (val is None and f.node.kind == "object") or _odd(val, f.node):
                return True
    elif node.kind == "list" and isinstance(value, list) and node.item is not None and node.item.kind == "object":
        return any(v is None or _odd(v, node.item) for v in value)
    return False


def _walked(config: dict[str, Any], version: str, doc: Any, unused: list[Any]) -> tuple[list[Any], list[Any]]:
    """The unused keys and context-tree paths expected: the old decoder's, or Go's walk of its document."""
    if doc is None or not _odd(config, root(version)):
        return unused, []
    u: list[Any] = []
    c: list[Any] = []
    _go_unused(config, root(version), doc, (), version, u, c)
    return u, c


def _path_folded(m: Any) -> Any:
    """A type error is now located at the key as the document spells it (the old decoder used the field name)."""
    return None if m is None else (tuple(str(p).lower() for p in m[0]), *m[1:])


@settings(max_examples=2000, deadline=None)
@given(case=configs(), explicit=st.booleans())
def test_validate_dict_equals_the_reference(case: tuple[dict[str, Any], str], explicit: bool) -> None:
    config, version = case
    before = copy.deepcopy(config)
    clear_caches()
    expected = ref_validate.validate_dict(config, version=version if explicit else None)
    got = validate_dict(config, version=version if explicit else None)
    assert [e for e in _entries(got) if e[1] not in _WALKED] == _requoted(
        [e for e in _entries(expected) if e[1] not in _WALKED])
    ref = ref_decode.decode(copy.deepcopy(config), version)
    unused, context = _walked(config, version, ref.doc, ref.unused)
    assert [e for e in _entries(got) if e[1] in _WALKED] == (
        [("warning", "unused-key", p, f"unused key {p[-1]}") for p in unused]
        + [("warning", "context-mismatch", p, CONTEXT_MISMATCH.format(path_str(p))) for p in context]
        if ref.mismatch is None else [])
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
    unused, context = _walked(config, version, expected.doc, expected.unused)
    assert (got.doc, _path_folded(_mismatch(got.mismatch)), got.accepted) == (
        expected.doc, _path_folded(_mismatch(expected.mismatch)), expected.accepted)
    if got.mismatch is None:
        assert (got.unused, got.context) == (unused, context)
    assert config == before
    for lst in ((got.doc or {}).get("storage") or {}).values():
        if isinstance(lst, list) and id(lst) in got.whole:  # a list passed whole holds accepted items only
            assert all(id(item) in got.accepted for item in lst)
