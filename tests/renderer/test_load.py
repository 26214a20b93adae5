"""Loading manifests: positions, duplicate keys, YAML 1.1 surprises, JSON fast path."""

from __future__ import annotations

import pytest

from renderer.load import load_text

YAML = """\
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: 50-chrony
spec:
  config:
    storage:
      files:
        - path: etc/chrony.conf
          mode: 0644
          overwrite: yes
"""


def test_positions_of_values() -> None:
    docs, problems = load_text(YAML, "manifests/50-chrony.yaml")
    assert problems == []
    doc = docs[0]
    assert doc.locate(("spec", "config", "storage", "files", 0, "path")) == (9, 17)
    assert doc.locate(("spec", "config", "storage", "files", 0, "mode")) == (10, 17)
    # a missing field is located at its nearest existing ancestor
    assert doc.locate(("spec", "config", "ignition", "version")) == (7, 5)
    problem = doc.problem("path-relative", ("spec", "config", "storage", "files", 0, "path"), "path not absolute")
    assert problem.format() == \
        "manifests/50-chrony.yaml:9:17 $.spec.config.storage.files.0.path: path not absolute"


@pytest.mark.parametrize(("path", "note"), [
    (("spec", "config", "storage", "files", 0, "mode"), "YAML 1.1 read '0644' as the octal integer 420 (decimal)"),
    (("spec", "config", "storage", "files", 0, "overwrite"), "YAML 1.1 read 'yes' as the boolean true; quote it"),
    (("spec", "config", "storage", "files", 0, "path"), ""),
], ids=["octal", "yes-boolean", "plain-string"])
def test_parsed_as_explains_yaml_1_1(path: tuple[str | int, ...], note: str) -> None:
    docs, _ = load_text(YAML, "m.yaml")
    assert docs[0].parsed_as(path) == note


@pytest.mark.parametrize(("text", "code", "where"), [
    ("a: 1\na: 2\n", "duplicate", "m.yaml:2:1"),
    ('{"a": 1, "a": 2}', "duplicate", "m.yaml:1:10"),
    ("a: [1, 2\n", "yaml-syntax", "m.yaml:2:1"),
    ('{"a": }\n', "json-syntax", "m.json:1:7"),
    ("base: &b {x: 1}\nother:\n  <<: *b\n", "yaml-merge-key", "m.yaml:3:3"),
], ids=["yaml-duplicate-key", "json-duplicate-key", "yaml-syntax", "json-syntax", "merge-key"])
def test_load_problems(text: str, code: str, where: str) -> None:
    docs, problems = load_text(text, where.split(":")[0])
    assert docs == []
    assert [(p.code, p.where()) for p in problems] == [(code, where)]


def test_yaml_flow_mapping_is_not_mistaken_for_json() -> None:
    docs, problems = load_text("{a: 1, b: [x]}\n", "m.yaml")
    assert problems == [] and docs[0].data == {"a": 1, "b": ["x"]}


def test_0o_prefix_is_a_string_in_yaml_1_1() -> None:
    docs, _ = load_text("mode: 0o644\n", "m.yaml")
    assert docs[0].data == {"mode": "0o644"}
    assert docs[0].parsed_as(("mode",)) == "YAML 1.1 has no 0o prefix and read '0o644' as a string; write 0644"


def test_multi_document_files_and_json_positions_on_demand() -> None:
    docs, _ = load_text("a: 1\n---\nb: 2\n", "m.yaml")
    assert [d.data for d in docs] == [{"a": 1}, {"b": 2}]
    assert docs[1].locate(("b",)) == (3, 4)
    jdocs, _ = load_text('{\n  "spec": {\n    "x": 1\n  }\n}\n', "m.json")
    assert jdocs[0].locate(("spec", "x")) == (3, 10)
