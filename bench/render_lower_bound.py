"""How far below render_bench.py's 3x goal the work a render cannot skip already lies.

Times, on the same generated cluster as render_bench.py (1,000 JSON MachineConfigs, 20,000 files), each
operation whose output the render must have, done by the fastest means this project (or any library it
uses) has for it and with nothing around it: no model, no schema walk, no bookkeeping between stages, no
error paths. Their sum is a lower bound for a render that keeps today's behaviour (Go's JSON verdicts,
Ignition's per-entry rules, file:line provenance, the stored JSON format); what 3x the floor leaves beside
it is the budget for everything else, per MachineConfig. CPU time, best of R, interleaved with the floor.
The parts run over inputs already in memory, so the bound leaves out what holding the whole cluster costs a
render beside it (page faults: ~11,000 in a fresh process, 36-60 ms of system time; the floor holds one file).

Usage: .venv/bin/python bench/render_lower_bound.py [--configs N] [--files-per-config M] [--repeat R]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from itertools import accumulate, repeat
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from render_bench import floor, generate  # noqa: E402

from ignition.rules.plain import plain_files  # noqa: E402
from ignition.rules.unitfile import clear_cache, unit_verdict  # noqa: E402
from renderer.load import _DIGITS_AS_ZERO, _NINETEEN_DIGITS  # noqa: E402
from renderer.provenance import _STRING  # noqa: E402

try:  # the C scans the render uses where they are built (setup.py): the fastest means the project has
    from renderer import _scan
except ImportError:  # pragma: no cover
    _scan = None  # type: ignore[assignment]

_start, _group = re.Match.start, re.Match.group
Part = Callable[[], Any]


def parts(paths: list[Path]) -> dict[str, Part]:
    """Each unavoidable operation as a callable over the whole cluster (inputs prepared outside the timing)."""
    names = [str(p) for p in paths]
    raws = [p.read_bytes() for p in paths]
    texts = [r.decode() for r in raws]
    docs = [orjson.loads(r) for r in raws]
    configs = [d["spec"]["config"] for d in docs]
    files = [c["storage"]["files"] for c in configs]
    units = [u["contents"] for c in configs for u in c["systemd"]["units"]]
    roles = [d["metadata"]["labels"]["machineconfiguration.openshift.io/role"] for d in docs]
    pools = {role: [i for i, r in enumerate(roles) if r == role] for role in dict.fromkeys(roles)}

    def read() -> None:
        for name in names:
            fd = os.open(name, os.O_RDONLY)
            os.read(fd, 1 << 16)
            os.close(fd)

    def json_verdict() -> None:  # what orjson needs beside it to give json's verdict: repeated keys, big ints
        if _scan is not None:
            for raw, doc in zip(raws, docs, strict=True):
                _scan.json_colons(orjson.dumps(doc), False) == _scan.json_colons(raw, True)  # noqa: B015
            return
        for raw, doc in zip(raws, docs, strict=True):
            orjson.dumps(doc).count(b":") == raw.count(b":")  # noqa: B015
            _NINETEEN_DIGITS in raw.translate(_DIGITS_AS_ZERO)  # noqa: B015

    def merge_and_name() -> list[dict[str, Any]]:  # later path wins, a copy per entry; canonical bytes + md5
        out = []
        for members in pools.values():
            merged = {f["path"]: {**f, "contents": {**f["contents"]}} for i in members for f in files[i]}
            spec = {"config": {"ignition": {"version": "3.5.0"}, "storage": {"files": list(merged.values())}}}
            hashlib.md5(orjson.dumps(spec, option=orjson.OPT_SORT_KEYS)).hexdigest()
            out.append(spec)
        return out

    def line_tables() -> None:
        if _scan is not None:
            for text in texts:
                _scan.member_lines(text)
            return
        for text in texts:
            matches = list(_STRING.finditer(text))
            starts = [0, *map(_start, matches)]
            values = list(map(_group, matches, repeat(1)))
            lines = accumulate(map(text.count, repeat("\n"), starts, starts[1:]))
            dict(zip(values, lines, strict=True))

    def provenance_strings() -> None:  # one key and one `name (file:line)` per entry, into one dict per pool
        for members in pools.values():
            out: dict[str, str] = {}
            for i in members:
                prefix = f"{i:04d}-bench (manifests/{i:04d}-bench.json:"
                out.update(zip([f"storage.files[{f['path']}]" for f in files[i]],
                               [f"{prefix}{n})" for n in range(len(files[i]))], strict=True))

    specs = merge_and_name()

    def store() -> None:
        for spec in specs:
            provenance = {f"storage.files[{f['path']}]": "0000-bench (manifests/0000-bench.json:10)"
                          for f in spec["config"]["storage"]["files"]}
            orjson.dumps({"spec": spec, "provenance": provenance},
                         option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)

    return {
        "read the manifests (os.read)": read,
        "decode UTF-8 (text for the line tables)": lambda: [r.decode() for r in raws],
        "parse (orjson.loads)": lambda: [orjson.loads(r) for r in raws],
        "json's verdict beside orjson": json_verdict,
        "per-entry file rules (plain_files)": lambda: [plain_files(f) for f in files],
        "unit rules' reading (1,000 units, cold)": lambda: (clear_cache(), [unit_verdict(u) for u in units]),
        "duplicates (a set of paths per config)": lambda: [len({f["path"] for f in fl}) for fl in files],
        "merge (later path wins, copies) + name": merge_and_name,
        "provenance line tables (scan or regex)": line_tables,
        "provenance keys and setters": provenance_strings,
        "stored JSON (orjson, indent + sort)": store,
    }


def best(fn: Part, repeat_: int) -> float:
    """Best CPU seconds of `repeat_` calls, the cyclic GC paused as the render pauses it."""
    times = []
    gc.disable()
    try:
        for _ in range(repeat_):
            start = time.process_time()
            fn()
            times.append(time.process_time() - start)
    finally:
        gc.enable()
    return min(times)


def main() -> int:
    """Generate, time, print the parts, their sum and what 3x leaves."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--configs", type=int, default=1000)
    parser.add_argument("--files-per-config", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = generate(Path(tmp) / "cluster", args.configs, args.files_per_config)
        work = parts(paths)
        t_floor, timed = float("inf"), dict.fromkeys(work, float("inf"))
        for _ in range(args.repeat):  # interleaved: every part sees the same machine load as the floor
            t_floor = min(t_floor, best(lambda: floor(paths), 1))
            for name, fn in work.items():
                timed[name] = min(timed[name], best(fn, 1))
    total = sum(timed.values())
    print(f"floor (json parse + serialise): {t_floor * 1000:8.1f} ms")
    for name, seconds in timed.items():
        print(f"  {name:42s} {seconds * 1000:7.1f} ms   {seconds / t_floor:5.2f}x floor")
    print(f"lower bound (sum)             : {total * 1000:8.1f} ms   {total / t_floor:5.2f}x floor")
    left = 3 * t_floor - total
    print(f"3x the floor leaves            : {left * 1000:8.1f} ms for everything else, "
          f"{left / args.configs * 1e6:5.1f} us per MachineConfig")
    return 0


if __name__ == "__main__":
    sys.exit(main())
