"""Speed of merge, translate, canonical JSON and data URL decoding on a large realistic config.

The reference, timed in the same run on the same document, is a plain JSON round trip
(`json.loads` + `json.dumps(sort_keys=True)`): the least any of these transforms must do. Each line
prints the best of N runs in milliseconds and the ratio to that reference.

    .venv/bin/python bench/ignition_transform_bench.py [--files 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from timing import best_of  # noqa: E402

from ignition.canonical import canonical_json  # noqa: E402
from ignition.dataurl import decode_data_url, encode_data_url  # noqa: E402
from ignition.merge import merge, merge_with_transcript  # noqa: E402
from ignition.translate import translate  # noqa: E402


def build(files: int, version: str = "3.6.0") -> dict[str, Any]:
    """A config shaped like a rendered pool: many small files (mixed encodings), units, users, kargs."""
    out: list[dict[str, Any]] = []
    for i in range(files):
        body = f"# generated file {i}\nkey{i} = value {i}\n".encode()
        out.append(
            {
                "path": f"/etc/bench/{i // 100}/file-{i}.conf",
                "mode": 420,
                "overwrite": True,
                "contents": {"source": encode_data_url(body, base64=i % 3 == 0)},
            }
        )
    units = [
        {
            "name": f"bench-{i}.service",
            "enabled": True,
            "contents": f"[Unit]\nDescription=bench {i}\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n",
        }
        for i in range(200)
    ]
    return {
        "ignition": {"version": version},
        "storage": {
            "files": out,
            "directories": [{"path": f"/var/bench/{i}", "mode": 493} for i in range(500)],
        },
        "systemd": {"units": units},
        "passwd": {
            "users": [{"name": "core", "sshAuthorizedKeys": [f"ssh-ed25519 AAAA{i}" for i in range(50)]}]
        },
        "kernelArguments": {"shouldExist": ["console=ttyS0", "mitigations=auto"]},
    }


def main() -> int:
    """Time each transform and print it with its ratio to the JSON round trip."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    parent = build(args.files)
    child = build(args.files // 2)
    for f in child["storage"]["files"]:
        f["contents"] = {"source": "data:,override"}
    text = json.dumps(parent)
    old = translate(parent, "3.3.0")
    sources = [f["contents"]["source"] for f in parent["storage"]["files"]]
    print(f"config: {args.files} files, {len(text) / 1e6:.1f} MB of JSON; best of {args.repeat}")

    reference = best_of(lambda: json.dumps(json.loads(text), sort_keys=True), args.repeat)
    rows = [
        ("json round trip (reference)", reference),
        ("canonical_json", best_of(lambda: canonical_json(parent), args.repeat)),
        (f"merge (child overrides {args.files // 2} files)", best_of(lambda: merge(parent, child), args.repeat)),
        ("merge_with_transcript", best_of(lambda: merge_with_transcript(parent, child), args.repeat)),
        (
            "translate 3.6.0 -> 3.3.0 (down, re-validated)",
            best_of(lambda: translate(parent, "3.3.0"), args.repeat),
        ),
        ("translate 3.3.0 -> 3.6.0 (up)", best_of(lambda: translate(old, "3.6.0"), args.repeat)),
        (
            f"decode_data_url x{len(sources)}",
            best_of(lambda: [decode_data_url(s) for s in sources], args.repeat),
        ),
    ]
    for name, seconds in rows:
        print(f"{name:50s} {seconds * 1000:9.1f} ms  {seconds / reference:6.2f}x reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
