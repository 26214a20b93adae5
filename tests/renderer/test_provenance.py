"""renderer.provenance: which MachineConfig (and manifest file:line) set each entry of a rendered config.

The dicts are stored in rendered configs and shown by `mco render --explain`, so what a fixed input gives is
kept as golden files (tests/renderer/golden/provenance/, MCO_UPDATE_GOLDEN=1 to refresh): the example
cluster, one manifest in every layout the renderer reads (JSON written several ways, YAML, a Butane
origin, a generated MachineConfig without a document), and a cluster shaped like the render bench's.
Hypothesis data (key values that repeat, carry JSON escapes and `%`; junk entries) checks what must hold
for any input: a JSON manifest's line holds the entry it names, the layout changes only the lines, junk
fails as a TypeError, and a second call (line tables cached) gives the same again.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from renderer import provenance
from renderer.inputs import load_inputs
from renderer.load import Document, load_text
from renderer.model import GENERATED_BY, ROLE_LABEL, MachineConfig, parse_manifest
from renderer.order import merge_order
from renderer.provenance import butane_origins, compute_provenance
from tests.golden import assert_golden

GOLDEN = Path(__file__).parent / "golden" / "provenance"


def golden_json(name: str, result: dict[str, str]) -> None:
    """`result` (keys sorted, as stored) against golden/provenance/NAME.json."""
    assert_golden(GOLDEN / f"{name}.json", json.dumps(result, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


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
                keys = list(compute_provenance([mc]))
            except TypeError:  # a junk list (`files: 3`): raises, as the test checks
                keys = []
            chosen = {k: f"templates/{i}.yaml:1" for i, (k, pick) in enumerate(zip(keys, origins, strict=False))
                      if pick}
            mc = replace(mc, entry_origins=chosen)
        out.append(mc)
    return out


def outcome(configs: list[MachineConfig]) -> tuple[str, str]:
    """("ok", the JSON text of the provenance) or ("raised", the exception type)."""
    try:
        return "ok", json.dumps(compute_provenance(configs), ensure_ascii=False, sort_keys=True)
    except Exception as exc:  # noqa: BLE001 - the type is what is checked
        return "raised", type(exc).__name__


_ORIGIN = re.compile(r" \(([^()]*)\)")  # ` (source:line)` after each name (names and values hold no parentheses)
JSON_LAYOUTS = ("json", "json-indent", "json-ascii", "json-slashes", "json-newline-colon")


def setters(value: str) -> str:
    """A provenance value without its origins: `b; overrode a` for `b (m.json:3); overrode a (m.json:9)`."""
    return _ORIGIN.sub("", value)


def key_value(key: str, mc: MachineConfig) -> str | None:
    """The value a key names: inside its last brackets, or the spec field's (None for fips)."""
    if key.endswith("]"):
        return key[key.rindex("[") + 1:-1]
    return {"osImageURL": mc.spec.os_image_url, "kernelType": mc.spec.kernel_type,
            "baseOSExtensionsContainerImage": mc.spec.base_os_extensions_container_image}.get(key)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(MANIFEST, st.sampled_from(LAYOUTS), st.lists(st.booleans(), max_size=20)),
                min_size=1, max_size=5))
def test_junk_raises_a_type_error_and_a_second_call_agrees(manifests: list[tuple[dict[str, Any], str, list[bool]]]) -> None:
    configs = [mc for data, layout, origins in manifests for mc in machine_configs(data, layout, origins)]
    first = outcome(configs)
    assert first[0] == "ok" or first == ("raised", "TypeError")
    assert outcome(configs) == first  # the line tables are cached now


@settings(max_examples=300, deadline=None)
@given(st.lists(MANIFEST, min_size=1, max_size=4), st.sampled_from(LAYOUTS[1:]))
def test_the_layout_changes_only_the_lines(manifests: list[dict[str, Any]], layout: str) -> None:
    """The keys, their order of setting and who set them do not depend on how the manifests are written."""
    plain = [mc for data in manifests for mc in machine_configs(data, "json", [])]
    other = [mc for data in manifests for mc in machine_configs(data, layout, [])]
    got, want = outcome(other), outcome(plain)
    if want[0] == "raised":
        assert got == want
        return
    assert got[0] == "ok"
    assert {k: setters(v) for k, v in json.loads(got[1]).items()} == \
        {k: setters(v) for k, v in json.loads(want[1]).items()}


@settings(max_examples=300, deadline=None)
@given(MANIFEST, st.sampled_from(JSON_LAYOUTS))
def test_a_json_line_holds_the_entry_it_names(data: dict[str, Any], layout: str) -> None:
    """Every `source:N` of a JSON manifest points at a line whose "path"/"name"/"device" is the key's value."""
    configs = machine_configs(data, layout, [])
    if not configs:  # not a MachineConfig the renderer reads (its problems say why)
        return
    (mc,) = configs
    try:
        result = compute_provenance([mc])
    except TypeError:
        return
    assert mc.doc is not None
    lines = mc.doc.text.split("\n")
    for key, who in result.items():
        origin = _ORIGIN.search(who)
        assert origin is not None, who
        if origin.group(1) in (str(mc.origin), "default"):  # not in the table: where the manifest starts
            continue
        source, _, line = origin.group(1).rpartition(":")
        assert source == mc.doc.source, who
        # the entry starts on that line (its value may follow on the next ones: whitespace holds newlines)
        number = int(line)
        rest = "\n".join(lines[number - 1:])
        starts = [m for m in _PLAIN.finditer(rest) if "\n" not in rest[:m.start()]]
        assert key_value(key, mc) in [json.loads(f'"{m.group(1)}"') for m in starts], (key, who)


def test_the_layouts_are_exercised() -> None:
    """Overrides, concatenations, escapes and lines from YAML nodes, in every layout (golden files)."""
    data = {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
            "metadata": {"name": "50-worker-a", "labels": {ROLE_LABEL: "worker"}},
            "spec": {"kernelArguments": ["nosmt", "nosmt"], "fips": True,
                     "config": {"ignition": {"version": "3.5.0"},
                                "storage": {"files": [{"path": "/etc/a"}, {"path": 'q"uote'}, {"path": "/etc/a"}]},
                                "systemd": {"units": [{"name": "a.service", "dropins": [{"name": "b.conf"}]}]}}}}
    for layout in LAYOUTS:
        configs = machine_configs(data, layout, [True, False] * 5) * 2
        got = compute_provenance(configs)
        golden_json(f"layout-{layout}", got)
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


# The table's definition: the first line of each key value, with the plain (backtracking) form of the
# module's possessive regex; escapes decoded, and a value whose escapes do not decode left out.
_PLAIN = re.compile(r'"(?:path|name|device)"\s*:\s*"((?:[^"\\\n]|\\.)*)"')


def defined_lines(text: str) -> dict[str, int]:
    table: dict[str, int] = {}
    for match in _PLAIN.finditer(text):
        value = match.group(1)
        if "\\" in value:  # only escapes are decoded (a raw control character stays as written)
            try:
                value = json.loads(f'"{value}"')
            except ValueError:
                continue
        table.setdefault(value, text.count("\n", 0, match.start()) + 1)
    return table


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
    assert provenance._string_lines(_Text(text)) == defined_lines(text)


def test_line_table_on_json_with_escapes() -> None:
    text = json.dumps({"a": [{"path": "/x\\y"}, {"name": "/x\\y"}, {"device": "é"}, {"path": "/z"}]},
                      indent=1).replace("/z", "\\/z")
    assert provenance._string_lines(_Text(text)) == {"/x\\y": 4, "é": 10, "/z": 13}


@pytest.mark.parametrize("role", ["worker", "master", "infra", None])
def test_example_cluster(cluster: Path, role: str | None) -> None:
    inputs = load_inputs(cluster)
    configs = [m for m in inputs.machine_configs if role is None or m.role == role]
    selected = merge_order(configs) if role else configs
    assert selected
    golden_json(f"example-{role or 'all'}", compute_provenance(selected))


@pytest.mark.parametrize(("configs", "files", "share"), [(1, 0, 2), (7, 3, 2), (30, 6, 3), (12, 6, 7)])
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
        if selected:
            golden_json(f"bench-{configs}-{files}-{share}-{role}", compute_provenance(selected))
