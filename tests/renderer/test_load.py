"""Loading manifests: positions, duplicate keys, YAML 1.1 surprises, JSON read by `json`, files read as bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from renderer import load
from renderer.load import load_file, load_text

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


# JSON manifests (first character `{`): json's verdict, repeated keys refused at any depth, big integers exact,
# and a text that is not JSON read as YAML only when the file is not named .json.
JSON_CASES = [
    ('{"a":1,"a":2}', None, "1:8: duplicate key 'a'", "repeated-key"),
    ('{"a":{"b":1,"b":1}}', None, "1:13: duplicate key 'b'", "repeated-nested-key"),
    ('{"a":"\\u003a","a":1}', None, "1:15: duplicate key 'a'", "repeated-after-escaped-colon"),
    ('{"a\\u0022":1,"a\\"":2}', None, "duplicate key 'a\"'", "repeated-key-spelled-two-ways"),
    ('{"a":"x:y","b":[1,2]}', {"a": "x:y", "b": [1, 2]}, None, "colon-in-value"),
    ('{"a" : 1}', {"a": 1}, None, "spaced-colon"),
    ('{"a":"\\u003A"}', {"a": ":"}, None, "escaped-colon"),
    ('{"a":18446744073709551616}', {"a": 18446744073709551616}, None, "beyond-64-bits"),
    ('{"a":-9223372036854775809}', {"a": -9223372036854775809}, None, "below-int64"),
    ('{"a":1.5e+3,"b":99999999999999999999}', {"a": 1500.0, "b": 99999999999999999999}, None, "float-and-big-int"),
    ('{"a":"\\ud800"}', {"a": "\ud800"}, None, "lone-surrogate-escape"),
    ('{"é":"ü"}', {"é": "ü"}, None, "non-ascii"),
    ('{"a":1}x', None, "1:8: invalid JSON: Extra data", "trailing-data"),
    ('{"a":', None, "1:6: invalid JSON: Expecting value", "truncated"),
    ('{"a":"\x01"}', None, "1:7: invalid JSON: Invalid control character at", "control-character"),
]


@pytest.mark.parametrize(("text", "data", "problem"), [c[:3] for c in JSON_CASES], ids=[c[3] for c in JSON_CASES])
@pytest.mark.parametrize("source", ["manifests/x.json", "manifests/x.yaml"])
def test_json_manifests(text: str, data: Any, problem: str | None, source: str) -> None:
    docs, problems = load_text(text, source)
    assert [d.data for d in docs] == ([data] if problem is None else [])
    prefix = f"{source}:" if problem and problem[0].isdigit() else f"{source}: "
    assert [p.format() for p in problems] == ([prefix + problem] if problem else [])


def test_a_yaml_flow_mapping_is_read_as_yaml_unless_named_json() -> None:
    assert [d.data for d in load_text("{a: 1}", "manifests/x.yaml")[0]] == [{"a": 1}]
    docs, problems = load_text("{a: 1}", "manifests/x.json")
    assert docs == [] and [p.code for p in problems] == ["json-syntax"]


@pytest.mark.parametrize(("raw", "text"), [
    (b'{"a": 1}\r\n', '{"a": 1}\n'), (b"a: 1\rb: 2\r", "a: 1\nb: 2\n"), (b"a: \xc3\xa9\r\r\n", "a: \u00e9\n\n"),
], ids=["crlf", "cr", "cr-crlf"])
def test_load_file_turns_line_ends_into_newlines(tmp_path: Path, raw: bytes, text: str) -> None:
    path = tmp_path / "x.yaml"
    path.write_bytes(raw)
    docs, problems = load_file(path, "manifests/x.yaml")
    assert problems == [] and docs[0].text == text


@pytest.mark.parametrize(("make", "code", "message"), [
    (lambda p: p.write_bytes(b"a: \xff\n"), "encoding", "not UTF-8 text: invalid start byte at byte 3"),
    (lambda p: None, "io", "cannot read: No such file or directory"),
    (lambda p: p.mkdir(), "io", "cannot read: Is a directory"),
], ids=["not-utf8", "missing", "directory"])
def test_load_file_problems(tmp_path: Path, make: Any, code: str, message: str) -> None:
    path = tmp_path / "x.json"
    make(path)
    assert load_file(path, "manifests/x.json") == ([], [load.Problem(code, message, "manifests/x.json")])


@pytest.mark.parametrize("size", [0, 1, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, (1 << 20) + (1 << 16) + 7])
def test_load_file_reads_every_byte_across_read_sizes(tmp_path: Path, size: int) -> None:
    """_read_bytes reads in 64 KiB then 1 MiB chunks: files at and around those sizes come back whole."""
    body = json.dumps({"a": "x" * max(0, size - 10)})[:size] if size else ""
    path = tmp_path / "big.json"
    path.write_text(body, encoding="utf-8")
    assert load._read_bytes(path) == path.read_bytes()
    docs, _problems = load_file(path, "manifests/big.json")
    assert [d.text for d in docs] == ([body] if docs else [])
    if body.endswith("}"):
        assert docs[0].data == json.loads(body)


@pytest.mark.parametrize(("name", "code"), [
    ("50-chrony", None),
    ("50-chrony\n", "invalid-name"),
    ("50-Chrony", "invalid-name"),
    ("50..chrony", "invalid-name"),
], ids=["valid", "trailing-newline", "upper", "empty-label"])
def test_machine_config_names_are_dns_subdomain_names(name: str, code: str | None) -> None:
    from renderer.model import parse_manifest

    text = json.dumps({"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
                       "metadata": {"name": name}, "spec": {}})
    docs, problems = load_text(text, "manifests/x.json")
    assert problems == []
    _, problems = parse_manifest(docs[0])
    assert [p.code for p in problems if p.code == "invalid-name"] == ([code] if code else [])
