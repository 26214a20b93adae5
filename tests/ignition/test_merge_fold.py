"""Folding many configs into one `MergedConfig` (as the renderer merges a pool's MachineConfigs, each child
costing only its own size) gives exactly what Ignition's pairwise `merge` gives, applied left to right."""

from __future__ import annotations

from functools import reduce
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ignition.merge import MergedConfig, merge, prune_empty

V = "3.5.0"
PATHS = st.sampled_from(["/etc/a", "/etc/b", "/etc/c", "/var/d"])
NAMES = st.sampled_from(["a.service", "b.service", "c.timer"])
maybe = st.one_of(st.none(), st.booleans())


def _resource() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional={
        "source": st.sampled_from(["data:,x", "data:,y", ""]),
        "compression": st.sampled_from(["", "gzip"]),
        "httpHeaders": st.lists(st.fixed_dictionaries({"name": st.sampled_from(["A", "B"])},
                                                      optional={"value": st.sampled_from(["1", "2"])}),
                                max_size=2, unique_by=lambda h: h["name"]),
    })


file_ = st.fixed_dictionaries({"path": PATHS}, optional={
    "mode": st.sampled_from([0o644, 0o600]), "overwrite": st.booleans(), "contents": _resource(),
    "append": st.lists(_resource(), max_size=2), "user": st.fixed_dictionaries({"name": st.sampled_from(["core"])}),
})
directory = st.fixed_dictionaries({"path": PATHS}, optional={"mode": st.sampled_from([0o755, 0o700])})
link = st.fixed_dictionaries({"path": PATHS, "target": st.sampled_from(["/x", "/y"])}, optional={"hard": st.booleans()})
unit = st.fixed_dictionaries({"name": NAMES}, optional={
    "enabled": st.booleans(), "mask": st.booleans(), "contents": st.sampled_from(["[Unit]\n", "[Service]\n"]),
    "dropins": st.lists(st.fixed_dictionaries({"name": st.sampled_from(["10.conf", "20.conf"])},
                                              optional={"contents": st.sampled_from(["x", "y"])}),
                        max_size=2, unique_by=lambda d: d["name"]),
})
user = st.fixed_dictionaries({"name": st.sampled_from(["core", "ops"])}, optional={
    "sshAuthorizedKeys": st.lists(st.sampled_from(["k1", "k2", "k3"]), max_size=3, unique=True),
    "groups": st.lists(st.sampled_from(["wheel", "sudo"]), max_size=2, unique=True),
})
filesystem = st.fixed_dictionaries({"device": st.sampled_from(["/dev/sda1", "/dev/sdb"])}, optional={
    "format": st.sampled_from(["xfs", "ext4"]), "options": st.lists(st.sampled_from(["-f", "-n"]), max_size=2),
})
kargs = st.lists(st.sampled_from(["nosmt", "quiet", "debug"]), max_size=2, unique=True)


def _unique_paths(storage: dict[str, Any]) -> dict[str, Any]:
    """One entry per path across files/directories/links (valid configs have no duplicates)."""
    seen: set[str] = set()
    out: dict[str, Any] = {}
    for kind in ("files", "directories", "links"):
        kept = []
        for entry in storage.get(kind, []):
            if entry["path"] not in seen:
                seen.add(entry["path"])
                kept.append(entry)
        if kept:
            out[kind] = kept
    for key, value in storage.items():
        if key not in out and key not in ("files", "directories", "links"):
            out[key] = value
    return out


@st.composite
def config(draw: st.DrawFn) -> dict[str, Any]:
    cfg: dict[str, Any] = {"ignition": {"version": V}}
    storage = draw(st.fixed_dictionaries({}, optional={
        "files": st.lists(file_, max_size=3), "directories": st.lists(directory, max_size=2),
        "links": st.lists(link, max_size=2),
        "filesystems": st.lists(filesystem, max_size=2, unique_by=lambda f: f["device"])}))
    storage = _unique_paths(storage)
    if storage:
        cfg["storage"] = storage
    units = draw(st.lists(unit, max_size=3, unique_by=lambda u: u["name"]))
    if units:
        cfg["systemd"] = {"units": units}
    users = draw(st.lists(user, max_size=2, unique_by=lambda u: u["name"]))
    if users:
        cfg["passwd"] = {"users": users}
    yes, no = draw(kargs), draw(kargs)
    no = [k for k in no if k not in yes]
    if yes or no:
        cfg["kernelArguments"] = {k: v for k, v in (("shouldExist", yes), ("shouldNotExist", no)) if v}
    return cfg


def _fold(configs: list[dict[str, Any]]) -> dict[str, Any]:
    merged = MergedConfig(configs[0], V)
    for child in configs[1:]:
        merged.merge(child)
    return merged.config()


@settings(max_examples=500, deadline=None)
@given(st.lists(config(), min_size=1, max_size=5))
def test_fold_equals_pairwise_merge(configs: list[dict[str, Any]]) -> None:
    expected = reduce(merge, configs[1:], configs[0])
    assert _fold(configs) == prune_empty(expected)


CASES = [
    pytest.param([{"ignition": {"version": V}, "storage": {"files": [{"path": "/a", "mode": 420}]}},
                  {"ignition": {"version": V}, "storage": {"directories": [{"path": "/a"}]}}],
                 {"ignition": {"version": V}, "storage": {"directories": [{"path": "/a"}]}},
                 id="directory-replaces-file-of-same-path"),
    pytest.param([{"ignition": {"version": V}, "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["a"]}]}},
                  {"ignition": {"version": V}, "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["b", "a"]}]}}],
                 {"ignition": {"version": V}, "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["a", "b"]}]}},
                 id="ssh-keys-union"),
    pytest.param([{"ignition": {"version": V}, "kernelArguments": {"shouldExist": ["nosmt"]}},
                  {"ignition": {"version": V}, "kernelArguments": {"shouldNotExist": ["nosmt"]}}],
                 {"ignition": {"version": V}, "kernelArguments": {"shouldNotExist": ["nosmt"]}},
                 id="kargs-share-key-space"),
    pytest.param([{"ignition": {"version": V}, "storage": {"files": [{"path": "/a", "unknown": 1}]}}],
                 {"ignition": {"version": V}, "storage": {"files": [{"path": "/a"}]}},
                 id="unknown-keys-dropped"),
]


@pytest.mark.parametrize(("configs", "expected"), CASES)
def test_fold_cases(configs: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    assert _fold(configs) == expected
