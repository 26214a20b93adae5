"""Loads the conformance corpus copied into tests/ignition/corpus/ (coreos/ignition tests, Apache-2.0)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "corpus"


def validation_cases() -> list[dict[str, Any]]:
    """Every validation case, the raw (non-JSON) one included; each gets `raw` (the document text) and `id`."""
    cases: list[dict[str, Any]] = []
    for name in ("ignition_cases.jsonl", "ignition_cases_raw.jsonl"):
        for n, line in enumerate((CORPUS / name).read_text().splitlines()):
            case = json.loads(line)
            if case.get("kind") in ("merge", "translate"):
                continue
            case["raw"] = case["config_raw"] if case.get("config") is None else json.dumps(case["config"])
            verdict = "valid" if case["valid"] else "invalid"
            hint = (case.get("error_contains") or case.get("warning_contains") or "ok")[:40]
            case["id"] = f"{name.split('.')[0][-3:]}{n:03d}-{case['version']}-{verdict}-{hint}"
            cases.append(case)
    return cases
