"""Differential test: Debian's real `ignition-validate` (2.14, reads specs 3.0-3.3) and our validator agree.

Cases: every corpus validation case 2.14 can read (3.0-3.3, and the version-rejection cases), every 3.x corpus
case relabelled to 3.3.0, a few hundred configs from a seeded mutator (tests/ignition/mutate.py), relabelled
to 3.0-3.3, and fuzzed URLs / unit files, where the error messages must match too. A larger run on new configs:
`MCO_DIFFERENTIAL_SEED=<n> MCO_DIFFERENTIAL_SCALE=<k>` (k times as many generated and fuzzed configs, from seed n). Verdicts must agree, except for rules the notes date after 2.14 (EXCEPTED_POST_2_14):

* `path-conflicts-systemd` — "path conflicts with systemd unit or dropin", added in Ignition 2.15.0 for all 3.x
  specs; we implement the current rule, so we reject what 2.14 still accepts.
"""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ignition import check
from tests.ignition.corpus_cases import validation_cases
from tests.ignition.mutate import fuzz_shapes, fuzz_sources, fuzz_units, generate
from tests.tools import real_tool

pytestmark = pytest.mark.realtool

EXCEPTED_POST_2_14 = frozenset({"path-conflicts-systemd"})
READABLE_BY_2_14 = ("3.0.0", "3.1.0", "3.2.0", "3.3.0")
SCALE = int(os.environ.get("MCO_DIFFERENTIAL_SCALE", "1"))
SEED = int(os.environ.get("MCO_DIFFERENTIAL_SEED", "0"))  # 0: the seeds the suite always runs
GENERATED = 400 * SCALE
FUZZED = 150 * SCALE
SHAPES = 60 * SCALE
# 2.14's words for what HEAD (and we) word differently; only the case and the version differ
_WORDED_2_14 = (("Unused key", "unused key"),
                ("are not supported in spec versions older than 3.4.0", "are not supported or functional in spec versions older than 3.6.0"))

CASES = validation_cases()


def _relabelled(case: dict[str, Any], version: str) -> str:
    cfg = json.loads(json.dumps(case["config"]))
    cfg["ignition"]["version"] = version
    return json.dumps(cfg)


def _differential_inputs() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for c in CASES:
        if c["version"] in READABLE_BY_2_14 or not c["version"].startswith("3."):
            out.append((c["id"], c["raw"]))
    for c in CASES:
        cfg = c.get("config")
        if c["version"].startswith("3.") and cfg and isinstance(cfg.get("ignition"), dict) and c["version"] not in READABLE_BY_2_14:
            if c["version"] in ("3.4.0", "3.5.0", "3.6.0"):
                out.append((c["id"] + "-as-3.3.0", _relabelled(c, "3.3.0")))
    seeds = [c["config"] for c in CASES if c.get("config") and isinstance(c["config"].get("ignition"), dict) and c["version"].startswith("3.")]
    out.extend(generate(seeds, GENERATED, seed=SEED or 2))
    out.extend(fuzz_sources(FUZZED, seed=SEED + 1 if SEED else 3))
    out.extend(fuzz_units(FUZZED, seed=SEED + 2 if SEED else 5))
    out.extend(fuzz_shapes(SHAPES, seed=SEED + 3 if SEED else 7))
    return out


INPUTS = _differential_inputs()


@pytest.fixture(scope="module")
def real_verdicts() -> dict[str, tuple[bool, str]]:
    tool: Path = real_tool("ignition-validate")

    def run(item: tuple[str, str]) -> tuple[str, tuple[bool, str]]:
        proc = subprocess.run([str(tool), "-"], input=item[1].encode(), capture_output=True, timeout=60)
        return item[0], (proc.returncode == 0, (proc.stdout + proc.stderr).decode(errors="replace"))

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(run, INPUTS))


def test_enough_cases_and_both_verdicts() -> None:
    verdicts = [not check(raw).report.is_fatal for _, raw in INPUTS]
    assert len(INPUTS) >= 500
    assert sum(verdicts) >= 50 and len(verdicts) - sum(verdicts) >= 50


@pytest.mark.parametrize(("case_id", "raw"), INPUTS, ids=[i for i, _ in INPUTS])
def test_same_verdict_as_ignition_validate(case_id: str, raw: str, real_verdicts: dict[str, tuple[bool, str]]) -> None:
    real_valid, real_output = real_verdicts[case_id]
    report = check(raw).report
    ours_valid = not report.is_fatal
    if not ours_valid and real_valid:
        codes = {e.code for e in report.errors}
        if codes <= EXCEPTED_POST_2_14:
            pytest.xfail(f"rule newer than Ignition 2.14: {sorted(codes)}")
    assert ours_valid == real_valid, f"ignition-validate said:\n{real_output}\nwe said:\n{report.format()}"
    if case_id.startswith(("url", "unit")):
        theirs = sorted(line.split(": ", 1)[1] for line in real_output.splitlines() if line.startswith("error at "))
        assert sorted(e.message for e in report.errors) == theirs
    if case_id.startswith("shape"):
        assert sorted(_entries_of(report)) == sorted(_real_entries(real_output)), real_output


def _real_entries(output: str) -> list[tuple[str, str, str]]:
    """(severity, path, message) of each line ignition-validate printed; a type error has no path ("")."""
    out = []
    for line in output.splitlines():
        if not line.startswith(("error at ", "warning at ")):
            continue
        severity, rest = line.split(" at ", 1)
        where, message = rest.split(": ", 1)
        path = where.rsplit(", line ", 1)[0] if ", line " in where else where
        if path.startswith("line "):
            path = ""
        for old, new in _WORDED_2_14:
            if old in message and (message.startswith(old) or not old.startswith("Unused")):
                message = message.replace(old, new, 1)
        out.append((severity, path, message.rstrip()))
    return out


def _entries_of(report: Any) -> list[tuple[str, str, str]]:
    return [(e.severity, "" if e.code == "json-type" else e.path_str(), e.message.rstrip()) for e in report.entries]
