"""Benchmark: `mco ignition validate` vs Debian's real `ignition-validate` on one large, realistic config.

The config (generated, deterministic): 20,000 files under /etc and /opt (base64 and percent-encoded data URLs,
https sources with sha512/sha256 hashes and headers, gzip contents, modes, owners), 400 directories, 200 links,
150 units with dropins, users with SSH keys, disks/partitions/filesystems, kernel arguments -- spec 3.3.0 (the
newest Debian's 2.14 validator reads). Both tools run end to end as processes (start-up included), in the same
run, best of --runs; the script prints both times and the ratio (ours / Go; below 1.0 means faster).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
IGNITION_VALIDATE = Path(os.environ.get("MCO_IGNITION_ROOT", ROOT / ".deps" / "ignition")) / "usr/bin/ignition-validate"
MCO = ROOT / ".venv" / "bin" / "mco"


def build_config(n_files: int = 20000) -> dict:
    """A deterministic, valid 3.3.0 config of about `n_files` files (several MB of JSON)."""
    files = []
    for i in range(n_files):
        body = f"# generated file {i}\nkey_{i % 97} = value-{i * 7919 % 100003}\nenabled = {i % 2 == 0}\n" * (1 + i % 4)
        path = f"/etc/app{i % 40}/conf.d/{i:05d}-setting.conf" if i % 3 else f"/opt/svc{i % 25}/data/{i:05d}.txt"
        entry: dict = {"path": path, "mode": (420, 384, 493)[i % 3], "overwrite": bool(i % 2)}
        kind = i % 10
        if kind < 5:
            entry["contents"] = {"source": "data:;base64," + base64.b64encode(body.encode()).decode()}
        elif kind < 8:
            entry["contents"] = {"source": "data:," + quote(body, safe="")}
        elif kind == 8:
            digest = hashlib.sha512(body.encode()).hexdigest()
            entry["contents"] = {
                "source": f"https://config.example.com/files/{i}",
                "verification": {"hash": f"sha512-{digest}"},
                "httpHeaders": [{"name": "Authorization", "value": f"Bearer t{i}"}],
            }
        else:
            digest = hashlib.sha256(body.encode()).hexdigest()
            entry["contents"] = {"source": f"s3://bucket/{i}", "compression": "gzip", "verification": {"hash": f"sha256-{digest}"}}
        if i % 7 == 0:
            entry["user"] = {"name": "core"}
            entry["group"] = {"id": 1000}
        if i % 50 == 0:
            entry["append"] = [{"source": "data:,%23%20appended%0A"}]
        files.append(entry)
    dirs = [{"path": f"/etc/app{i}/conf.d", "mode": 493} for i in range(40)] + [
        {"path": f"/var/lib/svc{i}", "mode": 488, "user": {"id": 1000}} for i in range(360)
    ]
    links = [{"path": f"/usr/local/bin/tool{i}", "target": f"/opt/svc{i % 25}/bin/tool"} for i in range(200)]
    unit_text = "[Unit]\nDescription=Service {i}\nAfter=network-online.target\n\n[Service]\nExecStart=/usr/bin/svc --id {i}\nRestart=always\n\n[Install]\nWantedBy=multi-user.target\n"
    units = [
        {
            "name": f"svc{i}.service",
            "enabled": True,
            "contents": unit_text.format(i=i),
            "dropins": [{"name": "10-env.conf", "contents": f"[Service]\nEnvironment=ID={i}\n"}],
        }
        for i in range(150)
    ]
    users = [{"name": f"user{i}", "sshAuthorizedKeys": [f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{i:030d} u{i}"], "groups": ["wheel"]} for i in range(50)]
    return {
        "ignition": {"version": "3.3.0", "timeouts": {"httpTotal": 600}},
        "kernelArguments": {"shouldExist": ["console=ttyS0", "quiet"], "shouldNotExist": ["rhgb"]},
        "passwd": {"users": users},
        "storage": {
            "disks": [{"device": "/dev/vdb", "wipeTable": True, "partitions": [{"number": 1, "label": "data", "sizeMiB": 0}]}],
            "filesystems": [{"device": "/dev/disk/by-partlabel/data", "format": "xfs", "path": "/var/data", "label": "data"}],
            "files": files,
            "directories": dirs,
            "links": links,
        },
        "systemd": {"units": units},
    }


def best_of(cmd: list[str], runs: int) -> tuple[float, int]:
    """Fastest wall-clock time of `runs` runs, and the exit code."""
    best = float("inf")
    code = 0
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - start)
        code = proc.returncode
    return best, code


def main() -> int:
    """Generate the config, time both validators, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.ign"
        path.write_text(json.dumps(build_config(args.files)))
        size_mb = path.stat().st_size / 1e6
        print(f"config: {args.files} files, {size_mb:.1f} MB, spec 3.3.0")
        ours, our_code = best_of([str(MCO), "ignition", "validate", str(path)], args.runs)
        print(f"mco ignition validate : {ours * 1000:8.1f} ms  (exit {our_code})")
        if not IGNITION_VALIDATE.exists():
            print("ignition-validate not installed (run scripts/install-deps.sh); no ratio")
            return 0
        go, go_code = best_of([str(IGNITION_VALIDATE), str(path)], args.runs)
        print(f"ignition-validate (Go): {go * 1000:8.1f} ms  (exit {go_code})")
        print(f"ratio mco/go: {ours / go:.2f}  ({'faster' if ours < go else 'slower'} than Go)")
        if our_code != go_code:
            print("verdicts differ!", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
