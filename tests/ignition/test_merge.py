"""Merge: every merge case of the corpus (results equal Ignition's Go merge), and each rule of the docstring."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ignition.dataurl import encode_data_url
from ignition.merge import CHILD, PARENT, MergeError, Origin, merge, merge_with_transcript
from ignition.validate import validate_dict
from tests.ignition.real_ignition import without_empties
from tests.tools import real_tool

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


def cfg(version: str = "3.6.0", **sections: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"ignition": {"version": version}}
    out.update(sections)
    return out


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
        "empty-lists-left-out",
        cfg(storage={"files": []}),
        cfg(storage={"files": [], "directories": []}),
        cfg(storage={}),
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


# ---------------------------------------------------------------------------------------------------
# `mco ignition merge`


def _write(tmp_path: Path, name: str, config: Any) -> str:
    target = tmp_path / name
    target.write_text(config if isinstance(config, str) else json.dumps(config))
    return str(target)


CLI_CASES = [
    (
        "ok",
        cfg(storage={"files": [{"path": "/a", "mode": 420}]}),
        cfg(storage={"files": [{"path": "/a", "overwrite": False}]}),
        0,
        "",
    ),
    (
        "older-parent-translated-up",
        cfg("3.2.0", storage={"files": [{"path": "/a"}]}),
        cfg("3.4.0", kernelArguments={"shouldExist": ["x"]}),
        0,
        "",
    ),
    ("invalid-parent", cfg(storage={"files": [{"path": "rel"}]}), cfg(), 1, "p.ign:1:67): path not absolute"),
    (
        "valid-inputs-invalid-result",
        cfg(
            "3.0.0",
            storage={"filesystems": [{"path": "/foo", "format": "ext4", "device": "/dev/disk/by-label/OEM"}]},
        ),
        cfg("3.0.0", storage={"filesystems": [{"format": "", "device": "/dev/disk/by-label/OEM"}]}),
        1,
        "format cannot be empty",
    ),
]


@pytest.mark.parametrize(
    ("parent", "child", "code", "stderr"), [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES]
)
def test_cli_merge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], parent: Any, child: Any, code: int, stderr: str
) -> None:
    from cli.main import main

    assert (
        main(["ignition", "merge", _write(tmp_path, "p.ign", parent), _write(tmp_path, "c.ign", child)])
        == code
    )
    out, err = capsys.readouterr()
    assert stderr in err
    if code == 0:
        result = json.loads(out)
        assert result["ignition"]["version"] == max(
            parent["ignition"]["version"], child["ignition"]["version"]
        )
    else:
        assert out == ""


def test_cli_merge_unreadable_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    assert main(["ignition", "merge", str(tmp_path / "nope"), _write(tmp_path, "c.ign", cfg())]) == 2
    assert "cannot read" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------------
# Differential: the real Ignition 2.14 binary merges the same pairs (ignition.md section 10.2).
# The parent references the child as a data: URL in ignition.config.merge; the fetch stage renders the
# merge and caches the result, which must equal ours once Go's always-present empty structs are dropped.

_PATHS = ["/etc/a", "/var/c"]
_KEYS = ["ssh-ed25519 AAAA k1", "ssh-ed25519 AAAA k2", "ssh-ed25519 AAAA k3"]
_UNIT = "[Unit]\nDescription=x\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"


def _maybe(draw: st.DrawFn, value: Any) -> Any:
    return value if draw(st.booleans()) else None


@st.composite
def _node(draw: st.DrawFn, kind: str, path: str) -> dict[str, Any]:
    item: dict[str, Any] = {"path": path}
    if kind != "links" and draw(st.booleans()):
        item["mode"] = draw(st.sampled_from([420, 384, 493]))
    if kind == "files":
        if draw(st.booleans()):
            item["contents"] = draw(
                st.sampled_from(
                    [
                        {"source": "data:,x"},
                        {"source": "data:;base64,eQ==", "compression": ""},
                        {"source": "https://example.com/f", "httpHeaders": [{"name": "A", "value": "1"}]},
                        {"httpHeaders": [{"name": "A"}], "source": "https://example.com/f"},
                    ]
                )
            )
            if draw(st.booleans()):
                item["overwrite"] = True
        if draw(st.booleans()):
            item["append"] = [{"source": draw(st.sampled_from(["data:,1", "data:,2"]))}]
    if kind == "links":
        item["target"] = draw(st.sampled_from(["/etc/x", "/etc/y"]))
    if draw(st.booleans()):
        item["user"] = draw(st.sampled_from([{"name": "core"}, {"id": 1000}]))
    return item


@st.composite
def _merge_side(draw: st.DrawFn) -> dict[str, Any]:
    config: dict[str, Any] = {"ignition": {"version": "3.3.0"}}
    storage: dict[str, Any] = {}
    paths = draw(st.lists(st.sampled_from(_PATHS), unique=True, max_size=3))
    for path in paths:
        kind = draw(st.sampled_from(["files", "directories", "links"]))
        storage.setdefault(kind, []).append(draw(_node(kind, path)))
    if draw(st.booleans()):
        storage["filesystems"] = [
            {
                "device": "/dev/vdb",
                "format": "xfs",
                "options": draw(st.lists(st.sampled_from(["-f", "-K"]), max_size=2)),
            }
        ]
    if draw(st.booleans()):
        parts = draw(
            st.lists(
                st.sampled_from(
                    [
                        {"number": 1, "sizeMiB": 10},
                        {"label": "data"},
                        {"number": 2, "label": "two"},
                        {"number": 1, "shouldExist": False},
                        {"label": "data", "typeGuid": "0FC63DAF-8483-4772-8E79-3D69D8477DE4"},
                    ]
                ),
                unique_by=str,
                max_size=2,
            )
        )
        storage["disks"] = [{"device": "/dev/vdc", "wipeTable": draw(st.booleans()), "partitions": parts}]
    if draw(st.booleans()):
        volume: dict[str, Any] = {"name": "crypt", "device": "/dev/vdf"}
        if draw(st.booleans()):
            volume["options"] = draw(st.lists(st.sampled_from(["--iter-time", "1000"]), max_size=2))
        tangs = draw(st.lists(st.sampled_from(["http://t1", "http://t2"]), unique=True, max_size=2))
        if tangs:
            volume["clevis"] = {
                "tang": [{"url": u, "thumbprint": draw(st.sampled_from(["a", "b"]))} for u in tangs]
            }
            if draw(st.booleans()):
                volume["clevis"]["threshold"] = 1
        else:
            volume["clevis"] = {"tpm2": True}
        storage["luks"] = [volume]
    if draw(st.booleans()):
        storage["raid"] = [
            {
                "name": "md0",
                "level": draw(st.sampled_from(["raid1", "raid0"])),
                "devices": draw(st.lists(st.sampled_from(["/dev/vdd", "/dev/vde"]), unique=True, min_size=1)),
                "options": draw(st.lists(st.sampled_from(["--assume-clean"]), max_size=1)),
            }
        ]
    if storage:
        config["storage"] = storage
    if draw(st.booleans()):
        config["ignition"]["timeouts"] = {
            draw(st.sampled_from(["httpTotal", "httpResponseHeaders"])): draw(st.integers(0, 9))
        }
    if draw(st.booleans()):
        unit: dict[str, Any] = {"name": draw(st.sampled_from(["a.service", "b.service"]))}
        for key, value in (("enabled", draw(st.booleans())), ("mask", False), ("contents", _UNIT)):
            if draw(st.booleans()):
                unit[key] = value
        if draw(st.booleans()):
            unit["dropins"] = [
                {"name": "10-x.conf", "contents": draw(st.sampled_from(["", "[Service]\nNice=1\n"]))}
            ]
        config["systemd"] = {"units": [unit]}
    if draw(st.booleans()):
        user = {
            "name": "core",
            "sshAuthorizedKeys": draw(st.lists(st.sampled_from(_KEYS), unique=True, max_size=3)),
        }
        if draw(st.booleans()):
            user["shell"] = "/bin/bash"
        config["passwd"] = {"users": [user]}
        if draw(st.booleans()):
            config["passwd"]["groups"] = [
                {"name": "ops", **draw(st.sampled_from([{}, {"gid": 1500}, {"system": True}]))}
            ]
    if draw(st.booleans()):
        args = draw(st.lists(st.sampled_from(["a", "b", "c d"]), unique=True, max_size=3))
        split = draw(st.integers(0, len(args)))
        config["kernelArguments"] = {"shouldExist": args[:split], "shouldNotExist": args[split:]}
    if draw(st.booleans()):
        config["ignition"]["proxy"] = {
            "noProxy": draw(st.lists(st.sampled_from(["x", "y"]), unique=True, max_size=2))
        }
    return config


def _real_merge(parent: dict[str, Any], child: dict[str, Any], workdir: Path) -> dict[str, Any] | None:
    """Ignition's own rendering of parent + child, or None when it refuses the merged config."""
    tool = real_tool("ignition")
    referencing = copy.deepcopy(parent)
    ref = {"source": encode_data_url(json.dumps(child).encode())}
    referencing["ignition"].setdefault("config", {})["merge"] = [ref]
    (workdir / "config.ign").write_text(json.dumps(referencing))
    cache = workdir / "ignition.json"
    cache.unlink(missing_ok=True)
    run = subprocess.run(
        [
            str(tool),
            "--platform",
            "file",
            "--stage",
            "fetch",
            "--log-to-stdout",
            "--config-cache",
            str(cache),
            "--state-file",
            str(workdir / "state"),
            "--neednet",
            str(workdir / "neednet"),
        ],
        env={"IGNITION_CONFIG_FILE": str(workdir / "config.ign"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        timeout=60,
    )
    if run.returncode != 0:
        assert b"merging configs resulted in an invalid config" in run.stdout + run.stderr, (
            run.stdout.decode()
        )
        return None
    rendered = json.loads(cache.read_text())
    rendered["ignition"]["config"].pop("merge")
    rendered["ignition"].pop("version")
    return without_empties(rendered)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(_merge_side(), _merge_side())
def test_merge_agrees_with_the_real_ignition_binary(
    tmp_path: Path, parent: dict[str, Any], child: dict[str, Any]
) -> None:
    assume(not validate_dict(parent).is_fatal and not validate_dict(child).is_fatal)
    real = _real_merge(parent, child, tmp_path)
    ours = merge(parent, child)
    if real is None:
        assert validate_dict(ours).is_fatal, "Ignition refused a merge we find valid"
        return
    assert not validate_dict(ours).is_fatal, validate_dict(ours).format()
    ours["ignition"].pop("version")
    assert without_empties(ours) == real
