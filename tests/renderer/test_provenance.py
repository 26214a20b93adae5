"""renderer.provenance against the implementation it replaced (kept below as the reference).

The fast `compute_provenance` must give byte-identical dicts (same keys, same order, same values): they
are stored in rendered configs and shown by `mco render --explain`. MachineConfigs are built the way the
renderer builds them -- manifest text (JSON in several layouts, YAML) through `load_text` and
`parse_manifest`, Butane-origin `entry_origins`, generated ones without a document -- from hypothesis
data in which key values repeat (overrides), carry JSON escapes and `%`, and entries are sometimes junk.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from renderer import provenance
from renderer.inputs import load_inputs
from renderer.load import Document, load_text
from renderer.model import GENERATED_BY, ROLE_LABEL, MachineConfig, parse_manifest
from renderer.order import merge_order
from renderer.provenance import butane_origins, compute_provenance

# ---------------------------------------------------------------------------------------------------
# The reference: renderer/provenance.py's compute_provenance as it was before the speed-up (verbatim
# apart from names; `_KEYED`, `_CONCATENATED` and `_config_entries` are unchanged in the module).

_REF_STRING = re.compile(r'"(?:path|name|device)"\s*:\s*"((?:[^"\\\n]|\\.)*)"')
_ref_lines_cache: dict[int, tuple[Any, dict[str, int]]] = {}


def _ref_line(mc: MachineConfig, path: tuple[str | int, ...], key_value: str | None) -> str:
    doc = mc.doc
    if doc is None:
        return str(mc.origin)
    if doc._node is not None:
        where = doc.locate(path)
        return f"{doc.source}:{where[0]}" if where else doc.source
    if key_value is not None and doc.text:
        line = _ref_string_lines(doc).get(key_value)
        if line is not None:
            return f"{doc.source}:{line}"
    return str(mc.origin)


def _ref_string_lines(doc: Any) -> dict[str, int]:
    cached = _ref_lines_cache.get(id(doc))
    if cached is not None and cached[0] is doc:
        return cached[1]
    text = doc.text
    table: dict[str, int] = {}
    line, last = 1, 0
    for m in _REF_STRING.finditer(text):
        start = m.start()
        line += text.count("\n", last, start)
        last = start
        raw = m.group(1)
        if "\\" in raw:
            try:
                raw = json.loads(f'"{raw}"')
            except ValueError:
                continue
        table.setdefault(raw, line)
    if len(_ref_lines_cache) > 4096:
        _ref_lines_cache.clear()
    _ref_lines_cache[id(doc)] = (doc, table)
    return table


def _ref_where(mc: MachineConfig, key: str, path: tuple[str | int, ...], key_value: str | None) -> str:
    origin = mc.entry_origins.get(key)
    if origin is None:
        origin = _ref_line(mc, path, key_value)
    return f"{mc.name} ({origin})"


def _ref_config_entries(config: Mapping[str, Any]) -> list[tuple[str, tuple[str | int, ...], str]]:
    out: list[tuple[str, tuple[str | int, ...], str]] = []
    for section, name, key in (("storage", "files", "path"), ("storage", "directories", "path"),
                               ("storage", "links", "path"), ("storage", "disks", "device"),
                               ("storage", "filesystems", "device"), ("storage", "raid", "name"),
                               ("storage", "luks", "name"), ("passwd", "users", "name"),
                               ("passwd", "groups", "name"), ("systemd", "units", "name")):
        block = config.get(section)
        if not isinstance(block, Mapping):
            continue
        for i, entry in enumerate(block.get(name) or ()):
            if not isinstance(entry, Mapping) or not isinstance(entry.get(key), str):
                continue
            value = entry[key]
            out.append((f"{section}.{name}[{value}]", (section, name, i), value))
            if name == "units":
                for j, dropin in enumerate(entry.get("dropins") or ()):
                    if isinstance(dropin, Mapping) and isinstance(dropin.get("name"), str):
                        out.append((f"systemd.units[{value}].dropins[{dropin['name']}]",
                                    (section, name, i, "dropins", j), dropin["name"]))
    return out


def reference_provenance(configs: Sequence[MachineConfig], *, default_source: str = "cluster.yaml") -> dict[str, str]:
    """The slow routine: one `_where` (and f-strings) per entry, then a sort."""
    setters: dict[str, list[str]] = {}
    for mc in configs:
        if mc.has_config:
            for key, path, value in _ref_config_entries(mc.spec.config):
                setters.setdefault(key, []).append(_ref_where(mc, key, (*mc.config_path, *path), value))
        spec = mc.spec
        for i, arg in enumerate(spec.kernel_arguments):
            setters.setdefault(f"kernelArguments[{arg}]", []).append(
                _ref_where(mc, f"kernelArguments[{arg}]", ("spec", "kernelArguments", i), arg))
        for i, ext in enumerate(spec.extensions):
            setters.setdefault(f"extensions[{ext}]", []).append(
                _ref_where(mc, f"extensions[{ext}]", ("spec", "extensions", i), ext))
        if spec.os_image_url:
            setters.setdefault("osImageURL", []).append(_ref_where(mc, "osImageURL", ("spec", "osImageURL"),
                                                                   spec.os_image_url))
        if spec.base_os_extensions_container_image:
            setters.setdefault("baseOSExtensionsContainerImage", []).append(
                _ref_where(mc, "baseOSExtensionsContainerImage", ("spec", "baseOSExtensionsContainerImage"),
                           spec.base_os_extensions_container_image))
        if spec.kernel_type in ("realtime", "64k-pages"):
            setters.setdefault("kernelType", []).append(_ref_where(mc, "kernelType", ("spec", "kernelType"),
                                                                   spec.kernel_type))
        if spec.fips:
            setters.setdefault("fips", []).append(_ref_where(mc, "fips", ("spec", "fips"), None))
    out: dict[str, str] = {}
    for key, who in setters.items():
        if key.startswith(("kernelArguments[", "extensions[")) or key == "fips":
            out[key] = who[0] if len(who) == 1 else f"{who[0]}; also from {', '.join(who[1:])}"
        else:
            last, earlier = who[-1], who[:-1]
            out[key] = last if not earlier else f"{last}; overrode {', '.join(reversed(earlier))}"
    out.setdefault("osImageURL", f"{default_source} (default)")
    return dict(sorted(out.items()))


# ---------------------------------------------------------------------------------------------------
# MachineConfigs from hypothesis data

# few distinct values, so that MachineConfigs override each other and one sets a key twice; escapes,
# `%` and braces for the formatting; a kernel argument may equal a path (its line is then looked up)
VALUES = st.one_of(st.sampled_from(["/etc/a", "/etc/b", "a.service", "b.conf", 'q"uote', "back\\slash", "é/ü",
                                    "/etc/%d", "{x}", "", "sda", "nosmt", "/etc/b\n"]),
                   st.text(alphabet="ab/\\\"%\n é", max_size=4))
JUNK = st.one_of(st.none(), st.integers(0, 3), st.text(max_size=2), st.lists(st.integers(), max_size=2))


def entries(key: str, *, dropins: bool = False) -> st.SearchStrategy[Any]:
    """A list of entries keyed by `key`, with the occasional junk entry or non-string key value."""
    fields: dict[str, st.SearchStrategy[Any]] = {key: VALUES}
    optional: dict[str, st.SearchStrategy[Any]] = {"mode": st.just(420), "contents": st.just({"source": "data:,x"})}
    if dropins:
        optional["dropins"] = st.lists(st.one_of(st.fixed_dictionaries({"name": VALUES}), JUNK), max_size=3)
    entry = st.fixed_dictionaries(fields, optional=optional)
    odd = st.one_of(JUNK, st.fixed_dictionaries({key: JUNK}), st.fixed_dictionaries({"other": VALUES}))
    return st.lists(st.one_of(entry, entry, entry, odd), max_size=5)


CONFIG = st.fixed_dictionaries({"ignition": st.just({"version": "3.5.0"})}, optional={
    "storage": st.one_of(st.fixed_dictionaries({}, optional={
        "files": st.one_of(entries("path"), entries("path"), JUNK), "directories": entries("path"), "links": entries("path"),
        "disks": entries("device"), "filesystems": entries("device"), "raid": entries("name"),
        "luks": entries("name")}), JUNK),
    "systemd": st.one_of(st.fixed_dictionaries({}, optional={"units": entries("name", dropins=True)}), JUNK),
    "passwd": st.fixed_dictionaries({}, optional={"users": entries("name"), "groups": st.one_of(entries("name"), JUNK)}),
})
SPEC = st.fixed_dictionaries({}, optional={
    "config": CONFIG,
    "kernelArguments": st.lists(st.sampled_from(["nosmt", "audit=1", "/etc/a", "a.service", "x%y"]), max_size=3),
    "extensions": st.lists(st.sampled_from(["usbguard", "kerberos", "sda"]), max_size=2),
    "osImageURL": st.sampled_from(["", "quay.io/x:1", "/etc/a"]),
    "baseOSExtensionsContainerImage": st.sampled_from(["", "quay.io/ext:1"]),
    "fips": st.booleans(),
    "kernelType": st.sampled_from(["default", "realtime", "64k-pages"]),
})
MANIFEST = st.fixed_dictionaries({
    "apiVersion": st.just("machineconfiguration.openshift.io/v1"),
    "kind": st.just("MachineConfig"),
    "metadata": st.fixed_dictionaries({
        "name": st.sampled_from(["00-worker", "50-worker-a", "50-worker-a", "99-master%s"]),
        "labels": st.just({ROLE_LABEL: "worker"})},
        optional={"annotations": st.just({GENERATED_BY: "4.99"})}),
    "spec": SPEC,
})
LAYOUTS = ("json", "json-indent", "json-ascii", "json-slashes", "json-newline-colon", "yaml", "yaml-two",
           "json-composed", "butane", "no-doc", "origins")


def manifest_text(data: dict[str, Any], layout: str) -> tuple[str, str]:
    """(text, source) of one manifest written in `layout`."""
    if layout == "json":
        return json.dumps(data), "manifests/m.json"
    if layout in ("json-indent", "json-composed", "butane", "no-doc", "origins"):
        return json.dumps(data, indent=1, ensure_ascii=False), "manifests/m%.json"
    if layout == "json-ascii":
        return json.dumps(data, indent=2), "manifests/m.json"
    if layout == "json-slashes":  # `\/` decodes to `/`: the line table must decode it
        return json.dumps(data, indent=1).replace("/", "\\/"), "manifests/m.json"
    if layout == "json-newline-colon":  # the whitespace of a match holds newlines
        return json.dumps(data, separators=(",\n", " :\n  ")), "manifests/m.json"
    if layout == "yaml":
        return yaml.safe_dump(data, allow_unicode=True), "manifests/m.yaml"
    return yaml.safe_dump_all([{"kind": "Other"}, data]), "manifests/m.yaml"  # yaml-two: the second document


def machine_configs(data: dict[str, Any], layout: str, origins: list[bool]) -> list[MachineConfig]:
    """The MachineConfigs the renderer would build from `data` written in `layout`."""
    text, source = manifest_text(data, layout)
    docs, problems = load_text(text, source)
    assert not [p for p in problems if p.severity == "error"], problems
    out = []
    for doc in docs:
        mc, _found = parse_manifest(doc)
        if not isinstance(mc, MachineConfig):
            continue
        if layout == "json-composed":  # a reported problem composed the JSON document as YAML
            doc.locate(("spec",))
        elif layout == "butane":  # as render.py builds it: no text, lines inside the .bu file
            mc = replace(mc, doc=Document(source="manifests/m.bu", index=0, data=doc.data))
            try:
                mc = replace(mc, entry_origins=butane_origins(mc, yaml.safe_dump(data), "manifests/m.bu"))
            except TypeError:  # a junk list (`groups: 1`): compute_provenance raises too, as checked
                pass
        elif layout == "no-doc":  # generated (templates, kubelet config): no document at all
            mc = replace(mc, doc=None)
        elif layout == "origins":  # some entries' lines known beforehand, the others looked up
            try:
                keys = list(reference_provenance([mc]))
            except TypeError:  # a junk list (`files: 3`): both raise, as the test checks
                keys = []
            chosen = {k: f"templates/{i}.yaml:1" for i, (k, pick) in enumerate(zip(keys, origins, strict=False))
                      if pick}
            mc = replace(mc, entry_origins=chosen)
        out.append(mc)
    return out


def outcome(fn: Any, configs: list[MachineConfig]) -> tuple[str, str]:
    """("ok", the JSON text of the result) or ("raised", the exception type): a junk config must fail
    the same way in both."""
    try:
        return "ok", json.dumps(fn(configs), ensure_ascii=False, sort_keys=True)
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return "raised", type(exc).__name__


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(MANIFEST, st.sampled_from(LAYOUTS), st.lists(st.booleans(), max_size=20)),
                min_size=1, max_size=5))
def test_same_provenance_as_the_reference(manifests: list[tuple[dict[str, Any], str, list[bool]]]) -> None:
    configs = [mc for data, layout, origins in manifests for mc in machine_configs(data, layout, origins)]
    assert outcome(compute_provenance, configs) == outcome(reference_provenance, configs)
    # a second call (the line tables now cached) gives the same again
    assert outcome(compute_provenance, configs) == outcome(reference_provenance, configs)


def test_the_layouts_are_exercised() -> None:
    """The strategies reach what they are for: overrides, concatenations, escapes, lines from YAML nodes."""
    data = {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
            "metadata": {"name": "50-worker-a", "labels": {ROLE_LABEL: "worker"}},
            "spec": {"kernelArguments": ["nosmt", "nosmt"], "fips": True,
                     "config": {"ignition": {"version": "3.5.0"},
                                "storage": {"files": [{"path": "/etc/a"}, {"path": 'q"uote'}, {"path": "/etc/a"}]},
                                "systemd": {"units": [{"name": "a.service", "dropins": [{"name": "b.conf"}]}]}}}}
    for layout in LAYOUTS:
        configs = machine_configs(data, layout, [True, False] * 5) * 2
        got = compute_provenance(configs)
        assert json.dumps(got, sort_keys=True) == json.dumps(reference_provenance(configs), sort_keys=True), layout
        assert "overrode" in got["storage.files[/etc/a]"]
        assert "also from" in got["kernelArguments[nosmt]"]
    yaml_configs = machine_configs(data, "yaml", [])
    assert compute_provenance(yaml_configs)["storage.files[q\"uote]"] == "50-worker-a (manifests/m.yaml:14)"
    slashes = machine_configs(data, "json-slashes", [])
    assert compute_provenance(slashes)["storage.files[/etc/a]"].startswith("50-worker-a (manifests/m.json:23);")


# ---------------------------------------------------------------------------------------------------
# The line table on any text (the regex and the bulk line counting), and the real example cluster


class _Text:
    def __init__(self, text: str) -> None:
        self.text = text
        self.key_lines: dict[str, int] | None = None


# near-misses of `"path": "value"`: whitespace with newlines, values with raw newlines, escapes, stray quotes
MEMBER = st.builds("{}{}{}:{}\"{}{}".format, st.sampled_from(['"path"', '"name"', '"device"', '"pat"', 'name"']),
                   st.sampled_from(["", " ", "\n", " \n\t"]), st.sampled_from(["", " "]),
                   st.sampled_from(["", " ", "\n "]),
                   st.text(alphabet='ab/"\\\né', max_size=6), st.sampled_from(['"', "", '",', '"\n']))
FRAGMENTS = st.one_of(MEMBER, st.sampled_from(['"path"', '"name"', '"device"', ": ", ":", ' "', '"', "\\", "\\\"",
                                               "\n", "\\n", "\\u00e9", "\\/", "\\x", "/etc", " ", "{", ","]),
                      st.text(max_size=3))


@settings(max_examples=600, deadline=None)
@given(st.lists(FRAGMENTS, max_size=30).map("".join))
def test_line_table_on_any_text(text: str) -> None:
    assert provenance._string_lines(_Text(text)) == _ref_string_lines(_Text(text))


def test_line_table_on_json_with_escapes() -> None:
    text = json.dumps({"a": [{"path": "/x\\y"}, {"name": "/x\\y"}, {"device": "é"}, {"path": "/z"}]},
                      indent=1).replace("/z", "\\/z")
    table = provenance._string_lines(_Text(text))
    assert table == _ref_string_lines(_Text(text)) == {"/x\\y": 4, "é": 10, "/z": 13}


@pytest.mark.parametrize("role", ["worker", "master", "infra", None])
def test_example_cluster(cluster: Path, role: str | None) -> None:
    inputs = load_inputs(cluster)
    configs = [m for m in inputs.machine_configs if role is None or m.role == role]
    selected = merge_order(configs) if role else configs
    assert selected
    assert json.dumps(compute_provenance(selected), sort_keys=True) == json.dumps(reference_provenance(selected), sort_keys=True)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 30), st.integers(0, 6), st.integers(2, 7))
def test_generated_cluster_like_the_bench(configs: int, files: int, share: int) -> None:
    """The bench's shape (bench/render_bench.py `generate`): many JSON MachineConfigs sharing paths."""
    docs = []
    for i in range(configs):
        role = "worker" if i % 2 == 0 else "master"
        entries_ = [{"path": f"/etc/bench/shared-{j}.conf" if j % share == 0 else f"/etc/bench/{i}/file-{j}.conf",
                     "mode": 420, "contents": {"source": f"data:,v{i}.{j}%0A"}} for j in range(files)]
        docs.append({"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
                     "metadata": {"name": f"{i:04d}-{role}-bench", "labels": {ROLE_LABEL: role}},
                     "spec": {"kernelArguments": [f"bench.{i % 3}=1"] if i % 2 == 0 else [],
                              "config": {"ignition": {"version": "3.5.0"}, "storage": {"files": entries_},
                                         "systemd": {"units": [{"name": f"bench-{i % 4}.service",
                                                                "contents": "[Unit]\n"}]}}}})
    configs_ = []
    for i, doc in enumerate(docs):
        found, _problems = load_text(json.dumps(doc, indent=1), f"manifests/{i:04d}.json")
        mc, _ = parse_manifest(found[0])
        assert isinstance(mc, MachineConfig)
        configs_.append(mc)
    for role in ("worker", "master"):
        selected = merge_order(m for m in configs_ if m.role == role)
        assert json.dumps(compute_provenance(selected), sort_keys=True) == json.dumps(reference_provenance(selected), sort_keys=True)
