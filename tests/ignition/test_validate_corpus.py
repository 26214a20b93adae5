"""Every validation case of the corpus: the verdict and Ignition's error / warning text."""

from __future__ import annotations

from typing import Any

import pytest

from ignition import check
from tests.ignition.corpus_cases import validation_cases

CASES = validation_cases()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_corpus_verdict_and_message(case: dict[str, Any]) -> None:
    checked = check(case["raw"])
    report = checked.report
    assert (not report.is_fatal) == case["valid"], report.format("case.ign")
    if case["error_contains"]:
        assert any(case["error_contains"] in e.message for e in report.errors), report.format()
    if case.get("warning_contains"):
        assert any(case["warning_contains"] in e.message for e in report.warnings), report.format()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_every_entry_has_a_position_and_code(case: dict[str, Any]) -> None:
    report = check(case["raw"]).report
    for entry in report.entries:
        assert entry.code and entry.code == entry.code.lower()
        assert entry.path_str().startswith("$")
        if entry.code != "empty":
            assert entry.line is not None and entry.col is not None, entry


@pytest.mark.parametrize("case", [c for c in CASES if c["valid"]], ids=[c["id"] for c in CASES if c["valid"]])
def test_valid_cases_give_the_normalized_document(case: dict[str, Any]) -> None:
    checked = check(case["raw"])
    assert checked.ok and checked.doc is not None and checked.doc["ignition"]["version"] == checked.version
