"""The merge against the real Ignition 2.14 binary on generated pairs of configs."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ignition.dataurl import encode_data_url
from ignition.merge import merge
from ignition.validate import validate_dict
from tests.ignition.real_ignition import without_empties
from tests.tools import real_tool

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
