"""Merge: every merge case of the corpus (results equal Ignition's Go merge), and each rule of the docstring."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from ignition.merge import CHILD, PARENT, MergeError, Origin, merge, merge_with_transcript
from ignition.validate import validate_dict
from tests.ignition.configs import cfg

CORPUS = Path(__file__).parent / "corpus" / "ignition_cases.jsonl"
MERGE_CASES = [c for c in map(json.loads, CORPUS.read_text().splitlines()) if c.get("kind") == "merge"]


def _id(case: dict[str, Any]) -> str:
    return case["source"].split("/")[-1][:70]


@pytest.mark.parametrize("case", MERGE_CASES, ids=[f"{i}-{_id(c)}" for i, c in enumerate(MERGE_CASES)])
def test_corpus_merge(case: dict[str, Any]) -> None:
    parent, child = copy.deepcopy(case["parent"]), copy.deepcopy(case["child"])
    assert merge(case["parent"], case["child"]) == case["result"]
    assert (case["parent"], case["child"]) == (parent, child), "merge must not modify its inputs"


@pytest.mark.parametrize("case", MERGE_CASES, ids=[f"{i}-{_id(c)}" for i, c in enumerate(MERGE_CASES)])
def test_corpus_merge_result_validity(case: dict[str, Any]) -> None:
    """Where the corpus says the merged result is invalid, validation says so with its error; else it is valid."""
    report = validate_dict(merge(case["parent"], case["child"]))
    if case.get("result_valid", True):
        assert not report.is_fatal, report.format()
    else:
        assert any(case["result_error_contains"] in e.message for e in report.errors), report.format()


def test_corpus_has_all_merge_cases() -> None:
    assert len(MERGE_CASES) == 13


RULES = [
    (
        "pointer-child-false-wins",
        cfg(storage={"files": [{"path": "/a", "overwrite": True}]}),
        cfg(storage={"files": [{"path": "/a", "overwrite": False}]}),
        cfg(storage={"files": [{"path": "/a", "overwrite": False}]}),
    ),
    (
        "pointer-child-zero-mode-wins",
        cfg(storage={"files": [{"path": "/a", "mode": 420}]}),
        cfg(storage={"files": [{"path": "/a", "mode": 0}]}),
        cfg(storage={"files": [{"path": "/a", "mode": 0}]}),
    ),
    (
        "null-means-unset",
        cfg(storage={"files": [{"path": "/a", "mode": 420}]}),
        cfg(storage={"files": [{"path": "/a", "mode": None}]}),
        cfg(storage={"files": [{"path": "/a", "mode": 420}]}),
    ),
    (
        "unknown-keys-ignored",
        cfg(storage={"files": [{"path": "/a", "bogus": 1}]}, extra=True),
        cfg(storage={"files": [{"path": "/a", "mode": 420}]}),
        cfg(storage={"files": [{"path": "/a", "mode": 420}]}),
    ),
    (
        "keys-match-case-insensitively",
        cfg(storage={"files": [{"path": "/a", "Mode": 420}]}),
        cfg(storage={"files": [{"Path": "/a", "overwrite": True}]}),
        cfg(storage={"files": [{"path": "/a", "mode": 420, "overwrite": True}]}),
    ),
    (
        "link-target-nonpointer-in-3.2",
        cfg("3.2.0", storage={"links": [{"path": "/l", "target": "/t"}]}),
        cfg("3.2.0", storage={"links": [{"path": "/l", "hard": True}]}),
        cfg("3.2.0", storage={"links": [{"path": "/l", "target": "", "hard": True}]}),
    ),
    (
        "link-target-pointer-in-3.3",
        cfg("3.3.0", storage={"links": [{"path": "/l", "target": "/t"}]}),
        cfg("3.3.0", storage={"links": [{"path": "/l", "hard": True}]}),
        cfg("3.3.0", storage={"links": [{"path": "/l", "target": "/t", "hard": True}]}),
    ),
    (
        "raid-level-nonpointer-in-3.0",
        cfg("3.0.0", storage={"raid": [{"name": "md", "level": "raid1", "devices": ["/dev/a"]}]}),
        cfg("3.0.0", storage={"raid": [{"name": "md", "spares": 1}]}),
        cfg("3.0.0", storage={"raid": [{"name": "md", "level": "", "devices": ["/dev/a"], "spares": 1}]}),
    ),
    (
        "clevis-custom-pointer-struct-in-3.2",
        cfg(
            "3.2.0", storage={"luks": [{"name": "r", "clevis": {"custom": {"pin": "tang", "config": "{}"}}}]}
        ),
        cfg("3.2.0", storage={"luks": [{"name": "r", "clevis": {"custom": {"needsNetwork": True}}}]}),
        cfg(
            "3.2.0",
            storage={
                "luks": [{"name": "r", "clevis": {"custom": {"pin": "", "config": "", "needsNetwork": True}}}]
            },
        ),
    ),
    (
        "clevis-custom-plain-struct-in-3.3",
        cfg(
            "3.3.0", storage={"luks": [{"name": "r", "clevis": {"custom": {"pin": "tang", "config": "{}"}}}]}
        ),
        cfg("3.3.0", storage={"luks": [{"name": "r", "clevis": {"custom": {"needsNetwork": True}}}]}),
        cfg(
            "3.3.0",
            storage={
                "luks": [
                    {"name": "r", "clevis": {"custom": {"pin": "tang", "config": "{}", "needsNetwork": True}}}
                ]
            },
        ),
    ),
    (
        "directory-replaces-file-and-link",
        cfg(
            storage={"files": [{"path": "/x"}, {"path": "/keep"}], "links": [{"path": "/y", "target": "/t"}]}
        ),
        cfg(storage={"directories": [{"path": "/x"}, {"path": "/y"}]}),
        cfg(storage={"files": [{"path": "/keep"}], "directories": [{"path": "/x"}, {"path": "/y"}]}),
    ),
    (
        "kargs-should-exist-replaces-should-not-exist",
        cfg(kernelArguments={"shouldNotExist": ["quiet"], "shouldExist": ["a"]}),
        cfg(kernelArguments={"shouldExist": ["quiet", "a"]}),
        cfg(kernelArguments={"shouldExist": ["a", "quiet"]}),
    ),
    (
        "string-lists-dedupe-by-value",
        cfg(ignition={"version": "3.6.0", "proxy": {"noProxy": ["a", "b"]}}),
        cfg(ignition={"version": "3.6.0", "proxy": {"noProxy": ["b", "c"]}}),
        cfg(ignition={"version": "3.6.0", "proxy": {"noProxy": ["a", "b", "c"]}}),
    ),
    (
        "options-concatenate-without-dedupe",
        cfg(
            storage={"raid": [{"name": "md", "options": ["--x"]}], "luks": [{"name": "l", "options": ["-a"]}]}
        ),
        cfg(
            storage={"raid": [{"name": "md", "options": ["--x"]}], "luks": [{"name": "l", "options": ["-a"]}]}
        ),
        cfg(
            storage={
                "raid": [{"name": "md", "options": ["--x", "--x"]}],
                "luks": [{"name": "l", "options": ["-a", "-a"]}],
            }
        ),
    ),
    (
        "partition-keyed-by-label-when-no-number",
        cfg(
            storage={
                "disks": [
                    {"device": "/dev/a", "partitions": [{"label": "root", "sizeMiB": 10}, {"number": 2}]}
                ]
            }
        ),
        cfg(
            storage={
                "disks": [
                    {
                        "device": "/dev/a",
                        "partitions": [{"label": "root", "startMiB": 5}, {"number": 2, "label": "two"}],
                    }
                ]
            }
        ),
        cfg(
            storage={
                "disks": [
                    {
                        "device": "/dev/a",
                        "partitions": [
                            {"label": "root", "sizeMiB": 10, "startMiB": 5},
                            {"number": 2, "label": "two"},
                        ],
                    }
                ]
            }
        ),
    ),
    (
        "header-without-value-not-in-parent-is-appended",
        cfg(ignition={"version": "3.6.0", "config": {"replace": {"source": "https://x/y"}}}),
        cfg(ignition={"version": "3.6.0", "config": {"replace": {"httpHeaders": [{"name": "X"}]}}}),
        cfg(
            ignition={
                "version": "3.6.0",
                "config": {"replace": {"source": "https://x/y", "httpHeaders": [{"name": "X"}]}},
            }
        ),
    ),
    (
        "child-repeated-key-last-wins",
        cfg(systemd={"units": [{"name": "a.service", "enabled": True}]}),
        cfg(
            systemd={"units": [{"name": "a.service", "mask": True}, {"name": "a.service", "enabled": False}]}
        ),
        cfg(systemd={"units": [{"name": "a.service", "enabled": False}]}),
    ),
    (
        "dropins-merge-by-name",
        cfg(
            systemd={"units": [{"name": "a.service", "dropins": [{"name": "x.conf", "contents": "[Unit]"}]}]}
        ),
        cfg(
            systemd={
                "units": [
                    {"name": "a.service", "dropins": [{"name": "y.conf"}, {"name": "x.conf", "contents": ""}]}
                ]
            }
        ),
        cfg(
            systemd={
                "units": [
                    {"name": "a.service", "dropins": [{"name": "x.conf", "contents": ""}, {"name": "y.conf"}]}
                ]
            }
        ),
    ),
    (
        "empty-lists-and-objects-left-out",
        cfg(storage={"files": []}),
        cfg(storage={"files": [], "directories": []}),
        cfg(),
    ),
    (
        "version-from-child-when-parent-empty",
        {},
        cfg(passwd={"users": [{"name": "core"}]}),
        cfg(passwd={"users": [{"name": "core"}]}),
    ),
]


@pytest.mark.parametrize(("parent", "child", "expected"), [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_rule(parent: dict[str, Any], child: dict[str, Any], expected: dict[str, Any]) -> None:
    assert merge(parent, child) == expected


@pytest.mark.parametrize(
    ("parent", "child", "path"),
    [
        (cfg("3.5.0"), cfg("3.6.0"), ("ignition", "version")),
        ({}, {}, ("ignition", "version")),
        (cfg("2.2.0"), cfg("2.2.0"), ("ignition", "version")),
        (cfg(storage={"files": {}}), cfg(), ("storage", "files")),
        (cfg(), cfg(storage={"files": [{"path": "/a", "mode": "420"}]}), ("storage", "files", 0, "mode")),
    ],
    ids=["different-versions", "no-version", "unsupported-version", "list-expected", "integer-expected"],
)
def test_merge_errors_name_the_path(
    parent: dict[str, Any], child: dict[str, Any], path: tuple[Any, ...]
) -> None:
    with pytest.raises(MergeError) as info:
        merge(parent, child)
    assert info.value.path == path


def test_transcript_names_the_side_of_each_leaf() -> None:
    parent = cfg(
        storage={"files": [{"path": "/a", "mode": 420}, {"path": "/p", "contents": {"source": "data:,p"}}]}
    )
    child = cfg(storage={"files": [{"path": "/a", "contents": {"source": "data:,c"}}]})
    result, transcript = merge_with_transcript(parent, child)
    assert result["storage"]["files"][1]["path"] == "/p"
    got = {(o.side, o.source, o.result) for o in transcript}
    assert (PARENT, ("storage", "files", 0, "mode"), ("storage", "files", 0, "mode")) in got
    assert (
        CHILD,
        ("storage", "files", 0, "contents", "source"),
        ("storage", "files", 0, "contents", "source"),
    ) in got
    # an item taken whole from one side is transcribed as a whole, and each of its leaves
    assert (PARENT, ("storage", "files", 1), ("storage", "files", 1)) in got
    assert (
        PARENT,
        ("storage", "files", 1, "contents", "source"),
        ("storage", "files", 1, "contents", "source"),
    ) in got
    assert str(Origin(CHILD, ("a", 0), ("a", 1))) == "child:$.a.0 -> $.a.1"


def test_transcript_follows_appended_positions() -> None:
    parent = cfg(storage={"files": [{"path": "/f", "append": [{"source": "data:,1"}]}]})
    child = cfg(storage={"files": [{"path": "/f", "append": [{"source": "data:,2"}]}]})
    _, transcript = merge_with_transcript(parent, child)
    got = {(o.side, o.source, o.result) for o in transcript}
    assert (
        CHILD,
        ("storage", "files", 0, "append", 0, "source"),
        ("storage", "files", 0, "append", 1, "source"),
    ) in got
