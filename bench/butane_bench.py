"""`mco butane` speed: transpiling a large Butane document against merely loading it and dumping JSON.

Generates a deterministic fcos 1.5.0 document (N files with inline contents, a third of them long enough to
be gzipped, units with dropins, users) and times, best of R runs in the same process:
  reference  yaml load (libyaml) + json.dumps of the same document: the floor for any YAML -> JSON tool;
  transpile  butane.transpile (decode, checks, sugar, Go-exact gzip, Ignition validation, render);
  gzip       the Go-compatible compressor alone vs zlib level 9 on the same contents.
Prints the times and the ratios.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from timing import best_of  # noqa: E402

from butane import transpile  # noqa: E402
from butane.goflate import gzip_best  # noqa: E402


def document(files: int) -> str:
    """A Butane document with `files` files, 50 units and 20 users."""
    lines = ["variant: fcos", "version: 1.5.0", "passwd:", "  users:"]
    for u in range(20):
        lines += [
            f"    - name: user{u}",
            "      ssh_authorized_keys:",
            f"        - ssh-ed25519 AAAAC3Nza{u:04d} user{u}@host",
        ]
    lines += ["storage:", "  files:"]
    for i in range(files):
        body = (
            f"key{i} = value{i}"
            if i % 3
            else "\\n".join(f"line {j} of file {i}: some repeated text" for j in range(40))
        )
        lines += [
            f"    - path: /etc/app/conf{i}.conf",
            "      mode: 0644",
            "      contents:",
            f'        inline: "{body}"',
        ]
    lines += ["systemd:", "  units:"]
    for n in range(50):
        lines += [
            f"    - name: app{n}.service",
            "      enabled: true",
            "      contents: |",
            "        [Unit]",
            f"        Description=App {n}",
            "        [Service]",
            "        ExecStart=/usr/bin/true",
            "        [Install]",
            "        WantedBy=multi-user.target",
            "      dropins:",
            "        - name: 10-env.conf",
            "          contents: |",
            "            [Service]",
            f"            Environment=N={n}",
        ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    text = document(args.files)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    reference = best_of(lambda: json.dumps(yaml.load(text, Loader=loader), separators=(",", ":")), args.runs)
    ours = best_of(lambda: transpile(text).render(), args.runs)
    contents = [
        ("\n".join(f"line {j} of file {i}: some repeated text" for j in range(40))).encode()
        for i in range(300)
    ]
    go = best_of(lambda: [gzip_best(c) for c in contents], args.runs)
    zl = best_of(lambda: [zlib.compress(c, 9) for c in contents], args.runs)
    print(f"document: {len(text) / 1e6:.2f} MB, {args.files} files")
    print(f"reference (yaml load + json dump): {reference * 1000:.0f} ms")
    print(f"transpile + render:                {ours * 1000:.0f} ms  ratio {ours / reference:.1f}x")
    print(
        f"gzip of 300 x {len(contents[0])} B: go-exact {go * 1000:.0f} ms, zlib {zl * 1000:.1f} ms  ratio {go / zl:.0f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
