"""Configs for the Ignition tests: `cfg` builds one by hand; `generated(version)` draws a valid config of
`version` (hypothesis) using a random selection of its features, each valid in every spec from the one that
introduced it, and says the oldest spec that can express it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from ignition.dataurl import encode_data_url
from ignition.versions import version_index


def cfg(version: str = "3.6.0", **sections: Any) -> dict[str, Any]:
    """A config of `version` with the given top-level sections."""
    out: dict[str, Any] = {"ignition": {"version": version}}
    out.update(sections)
    return out


def luks(**extra: Any) -> dict[str, Any]:
    """A storage section with one LUKS device (spec 3.2.0 and later), `extra` fields added."""
    return {"storage": {"luks": [{"name": "root", "device": "/dev/sdb", **extra}]}}


@dataclass(frozen=True)
class Generated:
    config: dict[str, Any]
    needs: str  # the oldest spec that can express it


def _data(draw: st.DrawFn) -> str:
    return encode_data_url(draw(st.binary(max_size=24)), base64=draw(st.sampled_from([True, False, None])))


def _newest(versions: list[str]) -> str:
    return max(versions, key=version_index)


@st.composite
def generated(draw: st.DrawFn, version: str) -> Generated:
    """A valid config of `version`, using a random selection of the features that version has."""
    v = version_index(version)

    def has(minimum: str) -> bool:
        return v >= version_index(minimum)

    needs = ["3.0.0"]
    storage: dict[str, Any] = {}
    ignition: dict[str, Any] = {"version": version}

    files = []
    for i in range(draw(st.integers(0, 3))):
        f: dict[str, Any] = {"path": f"/etc/gen/f{i}"}
        if draw(st.booleans()):
            f["mode"] = draw(st.sampled_from([420, 384, 493, 256]))
        if draw(st.booleans()):
            f["contents"] = {"source": _data(draw)}
            if draw(st.booleans()):
                f["overwrite"] = True
            if has("3.1.0") and draw(st.booleans()):
                f["contents"] = {
                    "source": "https://example.com/f",
                    "httpHeaders": [{"name": "X-A", "value": "1"}],
                }
                needs.append("3.1.0")
            elif draw(st.booleans()):
                algo = draw(st.sampled_from(["sha512", "sha256"] if has("3.1.0") else ["sha512"]))
                f["contents"]["verification"] = {"hash": f"{algo}-" + "0" * (128 if algo == "sha512" else 64)}
                needs.append("3.1.0" if algo == "sha256" else "3.0.0")
        if draw(st.booleans()):
            f["append"] = [{"source": _data(draw)}]
        if draw(st.booleans()):
            f["user"] = draw(st.sampled_from([{"name": "core"}, {"id": 0}]))
        if has("3.6.0") and draw(st.integers(0, 4)) == 0:
            f["mode"] = draw(st.sampled_from([2541, 3565, 1023]))
            needs.append("3.6.0")
        files.append(f)
    if files:
        storage["files"] = files
    if draw(st.booleans()):
        storage["directories"] = [{"path": "/var/gen/d", "mode": draw(st.sampled_from([493, 448]))}]
    if draw(st.booleans()):
        storage["links"] = [{"path": "/usr/local/gen/l", "target": "/etc/gen/f0", "hard": False}]
    if draw(st.booleans()):
        fs: dict[str, Any] = {"device": "/dev/vdb", "format": "xfs", "path": "/var/srv", "label": "srv"}
        if has("3.1.0") and draw(st.booleans()):
            fs["mountOptions"] = ["noatime"]
            needs.append("3.1.0")
        if draw(st.booleans()):
            fs["options"] = ["-m", "crc=1"]
        storage["filesystems"] = [fs]
        if has("3.3.0") and draw(st.booleans()):
            storage["filesystems"].append({"device": "/dev/vdg", "format": "none"})
            needs.append("3.3.0")
    if draw(st.booleans()):
        part: dict[str, Any] = {"number": 1, "label": "data", "sizeMiB": 100, "startMiB": 0}
        if has("3.2.0") and draw(st.booleans()):
            part["resize"] = True
            needs.append("3.2.0")
        storage["disks"] = [{"device": "/dev/vdc", "wipeTable": True, "partitions": [part]}]
    if draw(st.booleans()):
        storage["raid"] = [
            {"name": "md0", "level": "raid1", "devices": ["/dev/vdd", "/dev/vde"], "spares": 0}
        ]
    if has("3.2.0") and draw(st.booleans()):
        needs.append("3.2.0")
        volume: dict[str, Any] = {"name": "crypt", "device": "/dev/vdf", "wipeVolume": True}
        choice = draw(st.sampled_from(["tpm2", "tang", "key", "cex", "custom"]))
        if choice == "tang":
            tang: dict[str, Any] = {"url": "http://tang.example", "thumbprint": "abc"}
            if has("3.4.0") and draw(st.booleans()):
                tang["advertisement"] = '{"payload": "x"}'
                needs.append("3.4.0")
            volume["clevis"] = {"tang": [tang], "threshold": 1}
        elif choice == "key":
            volume["keyFile"] = {"source": _data(draw)}
        elif choice == "cex" and has("3.5.0"):
            volume["cex"] = {"enabled": True}
            needs.append("3.5.0")
        elif choice == "custom" and has("3.6.0"):
            volume["clevis"] = {"custom": {"pin": "fido2", "config": "{}"}}
            needs.append("3.6.0")
        else:
            volume["clevis"] = {"tpm2": True}
        if has("3.4.0") and draw(st.booleans()):
            volume["discard"] = True
            volume["openOptions"] = ["--allow-discards"]
            needs.append("3.4.0")
        storage["luks"] = [volume]
    if has("3.2.0") and draw(st.booleans()):
        storage.setdefault("files", []).append(
            {"path": "/etc/gen/gs", "contents": {"source": "gs://bucket/object"}}
        )
        needs.append("3.2.0")
    if has("3.4.0") and draw(st.booleans()):
        storage.setdefault("files", []).append(
            {"path": "/etc/gen/arn", "contents": {"source": "arn:aws:s3:::bucket/key"}}
        )
        needs.append("3.4.0")

    out: dict[str, Any] = {"ignition": ignition}
    if has("3.1.0") and draw(st.booleans()):
        ignition["proxy"] = {"httpProxy": "http://proxy:3128", "noProxy": ["internal.example"]}
        needs.append("3.1.0")
    if draw(st.booleans()):
        merge_item: dict[str, Any] = {"source": "https://example.com/base.ign"}
        if has("3.1.0") and draw(st.booleans()):
            merge_item["httpHeaders"] = [{"name": "Authorization", "value": "Bearer x"}]
            needs.append("3.1.0")
        ignition["config"] = {"merge": [merge_item]}
    if draw(st.booleans()):
        ignition["timeouts"] = {"httpTotal": draw(st.integers(0, 600))}
    if storage:
        out["storage"] = storage
    if draw(st.booleans()):
        unit: dict[str, Any] = {
            "name": "gen.service",
            "enabled": True,
            "contents": "[Unit]\nDescription=g\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n",
        }
        if draw(st.booleans()):
            unit["dropins"] = [{"name": "10-env.conf", "contents": "[Service]\nEnvironment=A=1\n"}]
        out["systemd"] = {"units": [unit, {"name": "masked.service", "mask": True}]}
    if draw(st.booleans()):
        user: dict[str, Any] = {
            "name": "core",
            "sshAuthorizedKeys": ["ssh-ed25519 AAAA gen"],
            "groups": ["wheel"],
        }
        groups: list[dict[str, Any]] = [{"name": "ops", "gid": 1500}]
        if has("3.2.0") and draw(st.booleans()):
            groups.append({"name": "legacy", "shouldExist": False})
            needs.append("3.2.0")
        out["passwd"] = {"users": [user], "groups": groups}
    if has("3.3.0") and draw(st.booleans()):
        out["kernelArguments"] = {"shouldExist": ["console=ttyS0"], "shouldNotExist": ["quiet"]}
        needs.append("3.3.0")
    return Generated(out, _newest(needs))
