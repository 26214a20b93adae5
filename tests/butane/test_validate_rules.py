"""Butane's Validate() rules checked against upstream coreos/butane, one table per rule: the (severity, YAML
path, message) entries a document gets, in order.

Each table cites the upstream function it follows.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from butane import ButaneError, transpile
from butane import messages as m
from butane.report import YPath

Entry = tuple[str, YPath, str]


def _entries(doc: str) -> list[Entry]:
    try:
        problems = transpile(doc).problems
    except ButaneError as exc:
        problems = exc.problems
    return [(e.severity, e.path, e.message) for e in problems.entries]


# base/v0_1/validate.go FileContents.Validate reports both sources at `inline`; base/v0_2+ (v0_6, v0_8_exp)
# Resource.Validate reports the last source set (local, inline, source order) and returns before the embedded
# Ignition config check, so an inline merge config given with a second source is not validated.
RESOURCE_SOURCES = [
    (
        "fcos-1.0-inline-and-source",
        "1.0.0",
        "storage:\n  files:\n    - path: /a\n      contents:\n        inline: x\n        source: data:,y\n",
        [("error", ("storage", "files", 0, "contents", "inline"), m.ERR_TOO_MANY_SOURCES)],
    ),
    (
        "fcos-1.1-inline-and-source",
        "1.1.0",
        "storage:\n  files:\n    - path: /a\n      contents:\n        inline: x\n        source: data:,y\n",
        [("error", ("storage", "files", 0, "contents", "source"), m.ERR_TOO_MANY_SOURCES)],
    ),
    (
        "merge-inline-and-local-stops-at-sources",
        "1.5.0",
        "ignition:\n  config:\n    merge:\n      - local: m.ign\n        inline: 'not json'\n",
        [("error", ("ignition", "config", "merge", 0, "inline"), m.ERR_TOO_MANY_SOURCES)],
    ),
    (
        "replace-inline-and-source-stops-at-sources",
        "1.6.0",
        'ignition:\n  config:\n    replace:\n      inline: \'{"ignition":{"version":"9.9"}}\'\n      source: data:,\n',
        [("error", ("ignition", "config", "replace", "source"), m.ERR_TOO_MANY_SOURCES)],
    ),
]


@pytest.mark.parametrize(
    ("name", "version", "body", "expected"), RESOURCE_SOURCES, ids=[r[0] for r in RESOURCE_SOURCES]
)
def test_resource_sources(name: str, version: str, body: str, expected: list[Entry]) -> None:
    assert _entries(f"variant: fcos\nversion: {version}\n{body}") == expected


# base/v0_8_exp/validate.go Quadlet.Validate: an unknown extension is reported alone (it returns); a template
# instance gets ErrTemplateInstanceCannotHaveContents at `contents` and at `contents_local`, each present one,
# and no too-many-sources error; any other quadlet gets ErrTooManySystemdSources at `contents_local`.
QUADLETS = [
    (
        "bad-extension-alone",
        "- name: a.service\n  contents: x\n  contents_local: y\n",
        [("error", ("name",), m.ERR_QUADLET_BAD_EXTENSION)],
    ),
    (
        "template-instance-contents",
        "- name: b@1.container\n  contents: x\n",
        [("error", ("contents",), m.ERR_TEMPLATE_INSTANCE_CONTENTS)],
    ),
    (
        "template-instance-both",
        "- name: b@1.container\n  contents: x\n  contents_local: y\n",
        [
            ("error", ("contents",), m.ERR_TEMPLATE_INSTANCE_CONTENTS),
            ("error", ("contents_local",), m.ERR_TEMPLATE_INSTANCE_CONTENTS),
        ],
    ),
    (
        "plain-both",
        "- name: a.container\n  contents: x\n  contents_local: y\n",
        [("error", ("contents_local",), m.ERR_TOO_MANY_SYSTEMD_SOURCES)],
    ),
    ("template-itself", "- name: b@.container\n  contents: x\n", []),
]


@pytest.mark.parametrize(("name", "quadlet", "expected"), QUADLETS, ids=[q[0] for q in QUADLETS])
def test_quadlet_validate(name: str, quadlet: str, expected: list[Entry]) -> None:
    items = "".join("    " + line + "\n" for line in quadlet.splitlines())
    doc = f"variant: fcos\nversion: 1.8.0-experimental\nsystemd:\n  quadlets:\n{items}"
    found = [(s, p, msg) for s, p, msg in _entries(doc) if p[:3] == ("systemd", "quadlets", 0)]
    assert found == [(s, ("systemd", "quadlets", 0) + p, msg) for s, p, msg in expected]


# Config.Validate of the openshift variant: config/openshift/v4_21/validate.go checks the boot device and a
# root storage.luks volume independently (two errors when both lack the kernel argument);
# config/openshift/v4_23_exp/validate.go sets one flag and reports once.
CEX_BOTH = (
    "boot_device:\n  layout: s390x-eckd\n  luks:\n    device: /dev/dasda\n    cex:\n      enabled: true\n"
    "storage:\n  luks:\n    - name: root\n      device: /dev/disk/by-label/root\n      cex:\n        enabled: true\n"
)
CEX = [
    ("4.21.0", CEX_BOTH, 2),
    ("4.22.0", CEX_BOTH, 2),
    ("4.23.0-experimental", CEX_BOTH, 1),
    ("4.23.0-experimental", CEX_BOTH.split("storage:")[0], 1),
    (
        "4.23.0-experimental",
        CEX_BOTH + "openshift:\n  kernel_arguments: [rd.luks.key=/etc/luks/cex.key]\n",
        0,
    ),
]


@pytest.mark.parametrize(("version", "body", "count"), CEX, ids=[f"{v}-{n}" for v, _, n in CEX])
def test_openshift_cex_kernel_argument(version: str, body: str, count: int) -> None:
    doc = (
        f"variant: openshift\nversion: {version}\nmetadata:\n  name: x\n  labels:\n"
        f"    machineconfiguration.openshift.io/role: worker\n{body}"
    )
    found = [e for e in _entries(doc) if e[2] == m.ERR_MISSING_CEX_KARG]
    assert found == [("error", ("openshift", "kernel_arguments"), m.ERR_MISSING_CEX_KARG)] * count


# A list the openshift field filters refuse whole (`spec.config.storage.links`, `.directories`) is reported at
# the list's JSON path; when sugar opened that list, Butane translates the path back to the sugar: walkTree
# and quadletToSymlink add `if i == 0 { ts.AddTranslation(yamlPath, path.New("json", "storage", kind)) }`
# (base/v0_8_exp/translate.go), so the error lands on the tree or quadlet, with its line:col.
SUGAR_LISTS = [
    ("4.16.0", "storage:\n  trees:\n    - local: tree\n", ("storage", "trees", 0), m.ERR_LINKS, (9, 7)),
    (
        "4.23.0-experimental",
        "storage:\n  trees:\n    - local: tree\n      dir_mode: 0750\n",
        ("storage", "trees", 0),
        m.ERR_DIRECTORIES,
        (9, 7),
    ),
    (
        "4.23.0-experimental",
        "systemd:\n  quadlets:\n    - name: a@1.container\n",
        ("systemd", "quadlets", 0),
        m.ERR_LINKS,
        (9, 7),
    ),
]


@pytest.mark.parametrize(
    ("version", "body", "path", "message", "where"),
    SUGAR_LISTS,
    ids=[f"{s[0]}-{s[2][0]}" for s in SUGAR_LISTS],
)
def test_filtered_list_made_by_sugar(
    tmp_path: Path, version: str, body: str, path: YPath, message: str, where: tuple[int, int]
) -> None:
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "f").write_text("x\n")
    (tmp_path / "tree" / "l").symlink_to("f")
    doc = (
        f"variant: openshift\nversion: {version}\nmetadata:\n  name: x\n  labels:\n"
        f"    machineconfiguration.openshift.io/role: worker\n{body}"
    )
    with pytest.raises(ButaneError) as exc:
        transpile(doc, files_dir=tmp_path)
    found = [(e.path, (e.line, e.col)) for e in exc.value.problems.entries if e.message == message]
    assert found == [(path, where)]


# walkTree adds each new node with ts.AddFromCommonSource(yamlPath, path.New("json", "storage", kind, i), node)
# (base/v0_7/translate.go), so Ignition's errors on a generated field point at the tree, not at a
# `storage.files` entry the document does not have.
def test_generated_field_error_points_at_tree(tmp_path: Path) -> None:
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "f").write_text("x\n")
    (tmp_path / "tree" / "l").symlink_to("f")
    doc = "variant: fcos\nversion: 1.5.0\nstorage:\n  trees:\n    - local: tree\n      path: etc/t\n"
    with pytest.raises(ButaneError) as exc:
        transpile(doc, files_dir=tmp_path)
    found = [(e.path, e.line, e.col, e.message) for e in exc.value.problems.entries]
    assert found == [(("storage", "trees", 0), 5, 7, "path not absolute")] * 2
