"""Parsing: Ignition's pipeline errors, Go's JSON texts, versions, types, unknown keys, positions, the normalized
document."""

from __future__ import annotations

import json

import pytest

from ignition import check, validate_dict

# (id, document, expected (severity, code, path, message, line, col) of the first entry); the positions and
# texts below were produced by the real ignition-validate (Debian 2.14) on the same bytes.
PIPELINE = [
    ("empty", "", ("error", "empty", "$", "not a config (empty)", None, None)),
    ("trailing-comma", '{"ignition": {"version": "3.3.0"}, "storage": {"files": [{"path": "/a"},}]}}',
     ("error", "json-syntax", "$", "invalid character '}' looking for beginning of value", 1, 74)),
    ("bad-literal", '{"ignition": {"version": "3.3.0", "x": tru}}',
     ("error", "json-syntax", "$", "invalid character '}' in literal true (expecting 'e')", 1, 44)),
    ("bad-escape", '{"ignition": {"version": "3.3.0", "x": "a\\q"}}',
     ("error", "json-syntax", "$", "invalid character 'q' in string escape code", 1, 44)),
    ("nan", '{"ignition": {"version": "3.3.0", "x": NaN}}',
     ("error", "json-syntax", "$", "invalid character 'N' looking for beginning of value", 1, 41)),
    ("array-doc", "[1]", ("error", "json-type", "$", "json: cannot unmarshal array into Go value of type util.versionStub", 1, 2)),
    ("version-number", '{"ignition": {"version": 3}}',
     ("error", "json-type", "$.ignition.version", "json: cannot unmarshal number into Go struct field .Ignition.Version of type string", 1, 27)),
    ("no-version", "{}", ("error", "version-invalid", "$.ignition.version", "invalid config version (couldn't parse)", 1, 2)),
    ("bad-semver", '{"ignition": {"version": "invalid.semver"}}', ("error", "version-invalid", "$.ignition.version", "invalid config version (couldn't parse)", 1, 26)),
    ("spec-2", '{"ignition": {"version": "2.2.0"}}', ("error", "version-unsupported", "$.ignition.version", "unsupported config version", 1, 26)),
    ("metadata", '{"ignition": {"version": "3.3.0+x"}}', ("error", "version-unsupported", "$.ignition.version", "unsupported config version", 1, 26)),
    ("string-mode", '{"ignition": {"version": "3.3.0"}, "storage": {"files": [{"path": "/x", "mode": "420"}]}}',
     ("error", "json-type", "$.storage.files.0.mode", "json: cannot unmarshal string into Go struct field File.storage.files.mode of type int", 1, 86)),
    ("float-mode", '{"ignition": {"version": "3.3.0"}, "storage": {"files": [{"path": "/x", "mode": 420.0}]}}',
     ("error", "json-type", "$.storage.files.0.mode", "json: cannot unmarshal number 420.0 into Go struct field File.storage.files.mode of type int", 1, 86)),
    ("huge-int", '{"ignition": {"version": "3.3.0"}, "storage": {"files": [{"path": "/a", "mode": 99999999999999999999}]}}',
     ("error", "json-type", "$.storage.files.0.mode", "json: cannot unmarshal number 99999999999999999999 into Go struct field File.storage.files.mode of type int", 1, 101)),
    ("object-for-list", '{"ignition": {"version": "3.3.0"}, "storage": {"files": {"path": "/a"}}}',
     ("error", "json-type", "$.storage.files", "json: cannot unmarshal object into Go struct field Storage.storage.files of type []types.File", 1, 58)),
    ("null-path", '{"ignition": {"version": "3.3.0"}, "storage": {"files": [{"path": null}]}}',
     ("error", "path-empty", "$.storage.files.0.path", "path not specified", 1, 67)),
    ("duplicate-json-key-last-wins", '{"ignition": {"version": "3.3.0"}, "storage": {"files": [{"path": "/a"}], "files": [{"path": "b"}]}}',
     ("error", "path-relative", "$.storage.files.0.path", "path not absolute", 1, 94)),
    ("unknown-key", '{"ignition": {"version": "3.3.0"}, "storage": {"files": [{"path": "/a", "foo": 1}]}}',
     ("warning", "unused-key", "$.storage.files.0.foo", "unused key foo", 1, 73)),
    ("multibyte-columns-are-bytes", '{"ignition": {"version": "3.3.0"}, "systemd": {"units": [{"name": "é.service", "contents": "[Unit"}]}}',
     ("error", "unit-content", "$.systemd.units.0.contents", "invalid unit content: unable to find end of section", 1, 93)),
]


@pytest.mark.parametrize(("doc", "expected"), [(d, e) for _, d, e in PIPELINE], ids=[i for i, _, _ in PIPELINE])
def test_pipeline_entry(doc: str, expected: tuple) -> None:
    entry = check(doc).report.entries[0]
    assert (entry.severity, entry.code, entry.path_str(), entry.message, entry.line, entry.col) == expected


def test_ignition_validate_output_lines_reproduced() -> None:
    # The exact lines (and order) Debian's ignition-validate printed for this document.
    doc = (
        '{"ignition": {"version": "3.3.0"},\n  "storage": {"files": [{"path": "rel", "foo": 1, "mode": 420}, '
        '{"path":"/a/b", "user":{"id":1,"name":"x"}}], "links":[{"path":"/a","target":"/x"}]}}'
    )
    assert check(doc).report.format("c.ign").splitlines() == [
        "error at $.storage.files.1 (c.ign:2:66): file path includes link in config",
        "error at $.storage.files.0.path (c.ign:2:34): path not absolute",
        "error at $.storage.files.1.user (c.ign:2:89): cannot set both id and name",
        "warning at $.storage.files.0.foo (c.ign:2:41): unused key foo",
    ]


@pytest.mark.parametrize(
    ("version", "accepted"),
    [("3.3.00", "3.3.0"), ("03.3.0", "3.3.0"), ("3.6.0", "3.6.0"), ("3.7.0-experimental", "3.7.0-experimental")],
    ids=["leading-zero-patch", "leading-zero-major", "latest", "experimental"],
)
def test_versions_compare_as_semver(version: str, accepted: str) -> None:
    checked = check(json.dumps({"ignition": {"version": version}}))
    assert checked.ok and checked.version == accepted


@pytest.mark.parametrize("version", ["3.4.0-experimental", "3.6.0-experimental", "3.7.0", "1.0.0", "3.3"], ids=str)
def test_versions_rejected(version: str) -> None:
    assert check(json.dumps({"ignition": {"version": version}})).report.is_fatal


def test_case_insensitive_keys_are_used_and_warned() -> None:
    report = check('{"ignition": {"version": "3.3.0"}, "Storage": {"Files": [{"Path": "x"}]}}').report
    assert [e.message for e in report.errors] == ["path not absolute"]
    assert "unused key Storage" in [e.message for e in report.warnings]


def test_unknown_section_of_older_version_only_warns() -> None:
    report = check('{"ignition": {"version": "3.2.0"}, "kernelArguments": {"shouldExist": ["a", "a"]}}').report
    assert not report.is_fatal and [e.message for e in report.warnings] == ["unused key kernelArguments"]


def test_normalized_document_keeps_unset_and_empty_apart() -> None:
    doc = (
        '{"ignition": {"version": "3.6.0"}, "storage": {"files": ['
        '{"path": "/empty", "contents": {"source": ""}}, {"path": "/unset", "contents": {"source": null}}]}}'
    )
    checked = check(doc)
    assert checked.ok and checked.doc is not None
    empty, unset = checked.doc["storage"]["files"]
    assert empty == {"path": "/empty", "contents": {"source": ""}}
    assert unset == {"path": "/unset", "contents": {}}  # null: unset, as Go reads it
    assert "passwd" not in checked.doc


def test_invalid_document_is_not_ok() -> None:
    checked = check('{"ignition": {"version": "3.6.0"}, "storage": {"files": [{"path": "x"}]}}')
    assert not checked.ok and checked.report.is_fatal


@pytest.mark.parametrize(
    ("config", "codes"),
    [
        ({"ignition": {"version": "3.6.0"}, "storage": {"files": [{"path": "x"}]}}, ["path-relative"]),
        ({"ignition": {"version": "3.6.0"}, "storage": {"files": [{"path": "/x", "mode": "420"}]}}, ["json-type"]),
        ({"ignition": {"version": "9.9.9"}}, ["version-unsupported"]),
        ({"ignition": {}}, ["version-invalid"]),
    ],
    ids=["rule", "type", "unsupported", "missing-version"],
)
def test_validate_dict(config: dict, codes: list[str]) -> None:
    report = validate_dict(config)
    assert [e.code for e in report.errors] == codes
    assert all(e.line is None for e in report.entries)


def test_lone_surrogate_escapes_decode_as_go_does() -> None:
    # ignition-validate 2.14: "warning at $.\ufffdx, line 1 col 36: Unused key \ufffdx"
    entry = check('{"ignition": {"version": "3.3.0"}, "\\ud800x": 1}').report.entries[0]
    assert (entry.path_str(), entry.message, entry.line, entry.col) == ("$.\ufffdx", "unused key \ufffdx", 1, 36)


# Repeated JSON keys: Go decodes each occurrence into the same value (structs merge, list items merge by
# index, the first type error wins). Expected verdicts and texts from Debian's ignition-validate 2.14.
DUPLICATE_KEYS = [
    ("type-error-in-first", '{"ignition": {"version": "3.3.0"}, "storage": {"files": [{"path": "/a", "mode": "x", "mode": 420}]}}',
     ["json: cannot unmarshal string into Go struct field File.storage.files.mode of type int"]),
    ("list-items-merge-by-index", '{"ignition": {"version": "3.3.0"}, "storage": {"files": [{"path": "/a", "mode": 420000}], "files": [{"path": "/b"}]}}',
     ["illegal file mode"]),
    ("structs-merge", '{"ignition": {"version": "3.3.0"}, "storage": {"files": [{"path": "/a"}]}, "storage": {"disks": [{"device": "x"}]}}',
     ["path not absolute"]),
    ("version-stub-merges", '{"ignition": {"version": "3.3.0"}, "ignition": {}}', []),
    ("version-type-error-first", '{"ignition": {"version": 3, "version": "3.3.0"}}',
     ["json: cannot unmarshal number into Go struct field .Ignition.Version of type string"]),
]


@pytest.mark.parametrize(("doc", "errors"), [(d, e) for _, d, e in DUPLICATE_KEYS], ids=[i for i, _, _ in DUPLICATE_KEYS])
def test_duplicate_json_keys_decode_as_go(doc: str, errors: list[str]) -> None:
    assert [e.message for e in check(doc).report.errors] == errors


def test_invalid_utf8_counts_like_go() -> None:
    # ignition-validate 2.14 on the same bytes: label error at 1:114, device at 1:140, unused key at 1:149.
    raw = (
        b'{"ignition": {"version": "3.3.0"}, "storage": {"filesystems": [{"device": "/dev/sda", "format": "vfat", '
        b'"label": "ab\xff\xfecdefgh"}, {"device": "x\xe2\x82"}], "\xffk": 1}}'
    )
    got = [(e.path_str(), e.message, e.line, e.col) for e in check(raw).report.entries]
    assert got == [
        ("$.storage.filesystems.0.label", "filesystem labels cannot be longer than 11 characters when using vfat", 1, 114),
        ("$.storage.filesystems.1.device", "path not absolute", 1, 140),
        ("$.storage.\ufffdk", "unused key \ufffdk", 1, 149),
    ]


# The document cannot be read (check's pipeline stops before the rules) or the rules reject it.
@pytest.mark.parametrize(
    ("doc", "code", "read"),
    [("", "empty", False), ("{", "json-syntax", False), ('{"ignition": {"version": "2.2.0"}}', "version-unsupported", False),
     ('{"ignition": {"version": "3.6.0"}, "storage": {"files": [{"path": "x"}]}}', "path-relative", True)],
    ids=["empty", "syntax", "version", "rule"],
)
def test_unreadable_and_rejected_documents(doc: str, code: str, read: bool) -> None:
    checked = check(doc)
    assert not checked.ok and [e.code for e in checked.report.errors] == [code]
    assert (checked.doc is not None) is read


def test_a_valid_document_is_read_with_its_version() -> None:
    checked = check('{"ignition": {"version": "3.6.0"}}')
    assert checked.ok and checked.version == "3.6.0" and checked.doc == {"ignition": {"version": "3.6.0"}}


_ORDINARY_FILES = [{"path": f"/etc/ordinary/{i}", "mode": 420, "overwrite": True, "contents": {"source": f"data:,{i}"}}
                for i in range(12)]


def _files_with(odd: object) -> str:
    """Twelve ordinary files (a list decode reads field by field for all of them at once) with `odd` as file 7."""
    files: list[object] = [dict(f) for f in _ORDINARY_FILES]
    files[7] = odd
    return json.dumps({"ignition": {"version": "3.4.0"}, "storage": {"files": files}})


def _users_with(odd: object) -> str:
    users: list[object] = [{"name": f"u{i}", "sshAuthorizedKeys": [f"k{i}"], "groups": ["wheel"]} for i in range(12)]
    users[7] = odd
    return json.dumps({"ignition": {"version": "3.4.0"}, "passwd": {"users": users}})


_CTX = "context tree does not match content tree at {}. Line and column reporting may be inconsistent. " \
       "Unused keys may not be reported."
# (id, document, every entry as (severity, code, path, message)): one odd object among ordinary ones is decoded and
# reported exactly as it is alone
ODD_AMONG_ORDINARY = [
    ("string-mode", _files_with({"path": "/etc/x", "mode": "420"}),
     [("error", "json-type", "$.storage.files.7.mode",
       "json: cannot unmarshal string into Go struct field File.storage.files.mode of type int")]),
    ("huge-mode", _files_with({"path": "/etc/x", "mode": 99999999999999999999}),
     [("error", "json-type", "$.storage.files.7.mode",
       "json: cannot unmarshal number 99999999999999999999 into Go struct field File.storage.files.mode of type int")]),
    ("bool-mode", _files_with({"path": "/etc/x", "mode": True}),
     [("error", "json-type", "$.storage.files.7.mode",
       "json: cannot unmarshal bool into Go struct field File.storage.files.mode of type int")]),
    ("null-path", _files_with({"path": None}), [("error", "path-empty", "$.storage.files.7.path", "path not specified")]),
    ("odd-cased-key", _files_with({"Path": "/etc/x"}), [("warning", "unused-key", "$.storage.files.7.Path", "unused key Path")]),
    ("unknown-key", _files_with({"path": "/etc/x", "colour": "red"}),
     [("warning", "unused-key", "$.storage.files.7.colour", "unused key colour")]),
    ("number-source", _files_with({"path": "/etc/x", "contents": {"source": 5}}),
     [("error", "json-type", "$.storage.files.7.contents.source",
       "json: cannot unmarshal number into Go struct field Resource.storage.files.contents.source of type string")]),
    ("null-contents", _files_with({"path": "/etc/x", "contents": None}),
     [("warning", "context-mismatch", "$.storage.files.7.contents", _CTX.format("$.storage.files.7.contents"))]),
    ("list-contents", _files_with({"path": "/etc/x", "contents": []}),
     [("error", "json-type", "$.storage.files.7.contents",
       "json: cannot unmarshal array into Go struct field File.storage.files.contents of type types.Resource")]),
    ("string-overwrite", _files_with({"path": "/etc/x", "overwrite": "yes"}),
     [("error", "json-type", "$.storage.files.7.overwrite",
       "json: cannot unmarshal string into Go struct field File.storage.files.overwrite of type bool")]),
    ("null-item", _files_with(None),
     [("error", "path-empty", "$.storage.files.7.path", "path not specified"),
      ("warning", "context-mismatch", "$.storage.files.7", _CTX.format("$.storage.files.7"))]),
    ("string-item", _files_with("/etc/x"),
     [("error", "json-type", "$.storage.files.7",
       "json: cannot unmarshal string into Go struct field Storage.storage.files of type types.File")]),
    ("number-in-a-string-list", _users_with({"name": "u", "sshAuthorizedKeys": ["a", 1]}),
     [("error", "json-type", "$.passwd.users.7.sshAuthorizedKeys.1",
       "json: cannot unmarshal number into Go struct field PasswdUser.passwd.users.sshAuthorizedKeys of type "
       "types.SSHAuthorizedKey")]),
    ("null-in-a-string-list", _users_with({"name": "u", "sshAuthorizedKeys": ["a", None]}), []),
    ("string-for-a-list", _users_with({"name": "u", "groups": "wheel"}),
     [("error", "json-type", "$.passwd.users.7.groups",
       "json: cannot unmarshal string into Go struct field PasswdUser.passwd.users.groups of type []types.Group")]),
]


@pytest.mark.parametrize(("doc", "entries"), [c[1:] for c in ODD_AMONG_ORDINARY], ids=[c[0] for c in ODD_AMONG_ORDINARY])
def test_odd_object_among_plain_ones(doc: str, entries: list[tuple[str, str, str, str]]) -> None:
    assert [(e.severity, e.code, e.path_str(), e.message) for e in check(doc).report.entries] == entries
