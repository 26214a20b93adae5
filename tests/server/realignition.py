"""Run Debian's real `ignition` binary (fetch + files stages) into a temporary root (Ignition's `docs/development.md`).

Workarounds the Debian build needs here: a `<root>/etc/selinux/config` and a stub `setfiles` on PATH
(relabelling is compiled in), and a world-traversable root (it writes as other users).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class IgnitionRun:
    """What one run left behind."""

    root: Path
    cache: dict[str, Any]  # the fetched (merged) config, as Ignition cached it
    log: str


def run_ignition(binary: Path, pointer: Path, work: Path, *, timeout: float = 120) -> IgnitionRun:
    """Fetch through `pointer`, then write the files stage into `work/root`; raises on failure with the log."""
    work.mkdir(parents=True, exist_ok=True)
    os.chmod(work, 0o755)
    root = work / "root"
    (root / "etc/selinux").mkdir(parents=True)
    (root / "etc/selinux/config").write_text("SELINUXTYPE=targeted\n")
    temp = Path(tempfile.gettempdir()).resolve()
    for p in [root, *root.resolve().parents]:  # pytest's temporary directories are 0700
        if p != temp and temp in p.parents:
            os.chmod(p, 0o755)
    fakebin = work / "fakebin"
    fakebin.mkdir()
    (fakebin / "setfiles").write_text("#!/bin/sh\ncat >/dev/null\nexit 0\n")
    os.chmod(fakebin / "setfiles", 0o755)
    env = {**os.environ, "IGNITION_CONFIG_FILE": str(pointer), "PATH": f"{fakebin}:{os.environ.get('PATH', '')}"}
    cache, state = work / "ignition.json", work / "state"
    common = ["--platform", "file", "--log-to-stdout", "--config-cache", str(cache), "--state-file", str(state)]
    logs = []
    for stage in (["--stage", "fetch", "--neednet", str(work / "neednet")], ["--stage", "files", "--root", str(root)]):
        done = subprocess.run([str(binary), *common, *stage], env=env, cwd=work, capture_output=True, text=True,
                              timeout=timeout)
        logs.append(done.stdout + done.stderr)
        if done.returncode != 0:
            raise AssertionError(f"ignition {stage[1]} failed ({done.returncode}):\n" + "\n".join(logs)[-6000:])
    return IgnitionRun(root, json.loads(cache.read_text()), "\n".join(logs))


def _decode(source: str, compression: str | None) -> bytes:
    import gzip

    from ignition.dataurl import decode_data_url

    data = decode_data_url(source)
    return gzip.decompress(data) if compression == "gzip" else data


def check_root(root: Path, config: dict[str, Any]) -> list[str]:
    """Differences between what `config` says and what Ignition wrote under `root` (empty list: they match).

    Checked: every file's contents (data URLs, with append and gzip) and mode, every directory's mode,
    every symlink's target, every unit's contents, dropins, enablement (preset) and masking.
    """
    problems: list[str] = []
    storage = config.get("storage") or {}
    for f in storage.get("files") or ():
        path = root / f["path"].lstrip("/")
        if not path.is_file():
            problems.append(f"file {f['path']}: missing")
            continue
        want_mode = f.get("mode", 0o644)
        if (path.stat().st_mode & 0o7777) != want_mode:
            problems.append(f"file {f['path']}: mode {oct(path.stat().st_mode & 0o7777)} != {oct(want_mode)}")
        contents = f.get("contents") or {}
        want = _decode(contents["source"], contents.get("compression")) if contents.get("source") else b""
        for extra in f.get("append") or ():
            want += _decode(extra["source"], extra.get("compression"))
        if path.read_bytes() != want:
            problems.append(f"file {f['path']}: contents differ")
    for d in storage.get("directories") or ():
        path = root / d["path"].lstrip("/")
        if not path.is_dir():
            problems.append(f"directory {d['path']}: missing")
        elif (path.stat().st_mode & 0o7777) != d.get("mode", 0o755):
            problems.append(f"directory {d['path']}: mode {oct(path.stat().st_mode & 0o7777)}")
    for link in storage.get("links") or ():
        path = root / link["path"].lstrip("/")
        if link.get("hard"):
            continue
        if not path.is_symlink():
            problems.append(f"link {link['path']}: missing")
        elif os.readlink(path) != link["target"]:
            problems.append(f"link {link['path']}: points at {os.readlink(path)}, not {link['target']}")
    units_dir = root / "etc/systemd/system"
    preset = root / "etc/systemd/system-preset/20-ignition.preset"
    preset_text = preset.read_text() if preset.exists() else ""
    for unit in (config.get("systemd") or {}).get("units") or ():
        name = unit["name"]
        path = units_dir / name
        if unit.get("mask"):
            if not (path.is_symlink() and os.readlink(path) == "/dev/null"):
                problems.append(f"unit {name}: not masked")
        elif unit.get("contents") is not None:
            if not path.is_file() or path.read_text() != unit["contents"]:
                problems.append(f"unit {name}: contents differ or missing")
        for dropin in unit.get("dropins") or ():
            dpath = units_dir / f"{name}.d" / dropin["name"]
            if not dpath.is_file() or dpath.read_text() != (dropin.get("contents") or ""):
                problems.append(f"unit {name} dropin {dropin['name']}: contents differ or missing")
        if unit.get("enabled") is True and f"enable {name}" not in preset_text:
            problems.append(f"unit {name}: not enabled in the preset")
        if unit.get("enabled") is False and f"disable {name}" not in preset_text:
            problems.append(f"unit {name}: not disabled in the preset")
    return problems
