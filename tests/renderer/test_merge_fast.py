"""The merge's fast path (adopting copies of plain entries, trusting them in the result) changes nothing.

Against the plain route on the same MachineConfigs: the same merged spec, the same problems for the merged
result, inputs left untouched, and every trusted result entry really is plain.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ignition.rules.plain import plain_directory, plain_file
from renderer.merge_mc import (
    _finish_files,
    _finish_files_one_by_one,
    merge_machine_configs,
    merge_machine_configs_traced,
)
from renderer.validate_mc import check_machine_config, validate_result
from tests.renderer.test_ignfold import config
from tests.renderer.test_merge_mc import mc

# Configs made mostly of plain files, the shape the merge's C-level passes take (merge_mc
# `_owned_plain_files_reset`, `_finish_files`; ignfold `_merge_keyed`): paths from a small set, so that a
# child's paths are now all new, now partly taken; with the odd entry that sends a list the slow way.
_PATHS = st.sampled_from([f"/etc/p{i}" for i in range(8)])
_PLAIN_FILE = st.fixed_dictionaries({"path": _PATHS}, optional={
    "mode": st.sampled_from([0o644, 0o600, 0o755]), "overwrite": st.booleans(),
    "contents": st.fixed_dictionaries({}, optional={
        "source": st.sampled_from(["data:,a", "data:,b%0A", "", "data:;base64,YQ=="]),
        "compression": st.sampled_from(["", "gzip"])}),
    "user": st.sampled_from([{"name": "core"}, {"id": 0}])})
_USUAL_FILE = st.fixed_dictionaries({"path": _PATHS, "contents": st.fixed_dictionaries(
    {"source": st.sampled_from(["data:,a", "data:,b%0A"])})}, optional={"mode": st.sampled_from([0o644, 0o600])})


@st.composite
def files_config(draw: st.DrawFn) -> dict[str, Any]:
    entries = draw(st.lists(st.one_of(_USUAL_FILE, _USUAL_FILE, _USUAL_FILE, _PLAIN_FILE), max_size=6,
                            unique_by=lambda f: f["path"]))
    storage: dict[str, Any] = {"files": entries}
    # directories and links: at other paths (the pool may still merge files in one pass), or at the
    # files' paths (it may not)
    for name, entry in (("directories", {"mode": 0o755}), ("links", {"target": "/etc/p0"})):
        paths = draw(st.lists(st.one_of(_PATHS, st.sampled_from(["/srv/d0", "/srv/d1"])), max_size=2, unique=True))
        if paths and draw(st.booleans()):
            storage[name] = [{"path": p, **entry} for p in paths]
    if not entries and draw(st.booleans()):
        del storage["files"]
    # older versions are translated up before the merge; their plain entries keep the fast paths
    out = {"ignition": {"version": draw(st.sampled_from(["3.5.0", "3.5.0", "3.4.0", "3.1.0"]))}, "storage": storage}
    if draw(st.booleans()):
        out["systemd"] = {"units": [{"name": draw(st.sampled_from(["a.service", "b.service"])), "enabled": True}]}
    return out


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.lists(config(), min_size=1, max_size=6), st.lists(files_config(), min_size=1, max_size=6)))
def test_adopting_plain_entries_changes_nothing(configs: list[dict[str, Any]]) -> None:
    _assert_fast_route_changes_nothing(configs)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.builds(lambda f: {"ignition": {"version": "3.5.0"}, "storage": {"files": f}},
                          st.lists(st.one_of(_USUAL_FILE, _USUAL_FILE, _PLAIN_FILE), max_size=4,
                                   unique_by=lambda f: f["path"])), min_size=2, max_size=7))
def test_a_pools_later_files_in_one_loop_change_nothing(configs: list[dict[str, Any]]) -> None:
    # the first config with files holds at most one path: later children's new paths, taken again by
    # even later ones, are the usual case here (a final entry turned back into its reset copy)
    first = configs[0]["storage"]["files"]
    configs[0]["storage"]["files"] = first[:1]
    _assert_fast_route_changes_nothing(configs)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.builds(lambda f: {"ignition": {"version": "3.5.0"}, "storage": {"files": f}},
                          st.lists(_USUAL_FILE, min_size=1, max_size=4, unique_by=lambda f: f["path"])), min_size=2,
                max_size=7), st.booleans())
def test_a_pools_later_usual_files_at_once_change_nothing(configs: list[dict[str, Any]], small_base: bool) -> None:
    # every file in the usual shape (`_merge_batched_files` puts a new path's file in final form at once
    # and turns it back into its reset copy when a later file takes the path)
    if small_base:
        configs[0]["storage"]["files"] = configs[0]["storage"]["files"][:1]
    _assert_fast_route_changes_nothing(configs)
    # and the result's validation may skip every file no later file merged into (one path, one file)
    mcs = [mc(f"{i:02d}-worker-x", config=c) for i, c in enumerate(configs)]
    plain: set[int] = set()
    for m in mcs:
        plain.update(check_machine_config(m, allowed_extensions=()).plain)
    spec, trusted = merge_machine_configs_traced(mcs, plain=plain)
    counts = Counter(f["path"] for c in configs for f in c["storage"]["files"])
    once = {id(f) for f in spec.config.get("storage", {}).get("files", []) if counts[f["path"]] == 1}
    assert once <= trusted


_SIMPLE_UNIT = st.fixed_dictionaries({"name": st.sampled_from(["a.service", "b.service", "c.service"])}, optional={
    "enabled": st.booleans(), "mask": st.booleans(), "contents": st.sampled_from(["[Unit]\n", "[Service]\n"])})
_UNIT = st.one_of(_SIMPLE_UNIT, _SIMPLE_UNIT, _SIMPLE_UNIT, _SIMPLE_UNIT.map(
    lambda u: {**u, "dropins": [{"name": "10-x.conf", "contents": "[Unit]\n"}]}))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.builds(lambda files, units, passwd, timeout: {
    "ignition": {"version": "3.5.0", **({"timeouts": {"httpTotal": timeout}} if timeout else {})},
    **({"storage": {"files": files}} if files else {}),
    **({"systemd": {"units": units}} if units is not None else {}),
    **({"passwd": {"users": [{"name": "core"}]}} if passwd else {})},
    st.lists(_USUAL_FILE, max_size=2, unique_by=lambda f: f["path"]),
    st.none() | st.lists(_UNIT, max_size=3, unique_by=lambda u: u["name"]), st.booleans(),
    st.sampled_from([0, 0, 0, 10, 20])), min_size=2, max_size=7))
def test_a_pools_later_units_in_one_loop_change_nothing(configs: list[dict[str, Any]]) -> None:
    _assert_fast_route_changes_nothing(configs)


@pytest.mark.parametrize("later", [
    # a new path, taken once by a later usual file, then by one with an owner, then with a compression
    [[{"path": "/etc/b", "mode": 420, "contents": {"source": "data:,1"}}],
     [{"path": "/etc/b", "contents": {"source": "data:,2"}}]],
    [[{"path": "/etc/b", "contents": {"source": "data:,1"}}],
     [{"path": "/etc/b", "mode": 384, "contents": {"source": "data:,2"}, "user": {"name": "core"}}],
     [{"path": "/etc/b", "contents": {"source": "data:,3"}}]],
    [[{"path": "/etc/b", "contents": {"source": "data:,1", "compression": "gzip"}}],
     [{"path": "/etc/b", "contents": {"source": "data:,2"}}]],
    [[{"path": "/etc/b", "contents": {"source": "data:,1"}}],
     [{"path": "/etc/b", "contents": {"source": "data:,2", "compression": "gzip"}, "overwrite": False}]],
    [[{"path": "/etc/b", "contents": {"source": "data:,1"}}, {"path": "/etc/c", "contents": {}}],
     [{"path": "/etc/c", "contents": {"source": "data:,2"}}, {"path": "/etc/b", "mode": 420}]],
])
def test_a_later_path_taken_again(later: list[list[dict[str, Any]]]) -> None:
    base = {"ignition": {"version": "3.5.0"}, "storage": {"files": [{"path": "/etc/a", "contents": {"source": "data:,a"}}]}}
    _assert_fast_route_changes_nothing([base, *({"ignition": {"version": "3.5.0"}, "storage": {"files": f}}
                                                for f in later)])


def _assert_fast_route_changes_nothing(configs: list[dict[str, Any]]) -> None:
    mcs = [mc(f"{i:02d}-worker-x", config=c) for i, c in enumerate(configs)]
    before = copy.deepcopy(configs)
    plain: set[int] = set()
    for m in mcs:
        plain.update(check_machine_config(m, allowed_extensions=()).plain)
    fast, trusted = merge_machine_configs_traced(mcs, plain=plain)
    slow = merge_machine_configs(mcs, one_pass=False)
    assert fast == slow
    assert json.dumps(fast.config) == json.dumps(slow.config)  # the same key order too (YAML output keeps it)
    assert configs == before  # the inputs are never written to
    assert validate_result(fast, mcs, size=0, pool="worker", plain=trusted) == \
        validate_result(slow, mcs, size=0, pool="worker")
    storage = fast.config.get("storage", {})
    entries = {id(e): (kind, e) for kind in ("files", "directories", "links") for e in storage.get(kind, [])}
    assert trusted <= entries.keys()
    for kind, entry in (entries[i] for i in trusted):
        assert (plain_file if kind == "files" else plain_directory)(entry)


def test_a_file_merged_into_is_not_trusted() -> None:
    base = {"ignition": {"version": "3.5.0"}, "storage": {"files": [
        {"path": "/etc/a", "mode": 420, "contents": {"source": "data:,one"}},
        {"path": "/etc/b", "contents": {"source": "data:,b"}}]}}
    child = {"ignition": {"version": "3.5.0"}, "storage": {"files": [{"path": "/etc/a", "overwrite": False}]}}
    mcs = [mc("00-worker", config=base), mc("01-worker", config=child)]
    plain: set[int] = set()
    for m in mcs:
        plain.update(check_machine_config(m, allowed_extensions=()).plain)
    spec, trusted = merge_machine_configs_traced(mcs, plain=plain)
    a, b = spec.config["storage"]["files"]
    assert a == {"path": "/etc/a", "mode": 420, "overwrite": False, "contents": {"source": "data:,one"}}
    assert id(a) not in trusted and id(b) in trusted


_FINISH_FILE = st.fixed_dictionaries({"path": _PATHS}, optional={
    "overwrite": st.sampled_from([True, False, None]),
    "contents": st.one_of(st.none(), st.just("x"), st.fixed_dictionaries({}, optional={
        "source": st.sampled_from(["data:,a", "", None]), "compression": st.sampled_from(["", "gzip", None])}))})


@settings(max_examples=500, deadline=None)
@given(st.lists(_FINISH_FILE, max_size=8))
def test_finish_files_in_passes_equals_file_by_file(files: list[Any]) -> None:
    fast = {"storage": {"files": copy.deepcopy(files)}}
    slow = copy.deepcopy(files)
    _finish_files(fast)
    _finish_files_one_by_one(slow)
    assert fast["storage"]["files"] == slow
