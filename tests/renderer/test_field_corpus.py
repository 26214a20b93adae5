"""Real public documents (tests/renderer/field_corpus/, sources and licences in each file's header;
docs/field-manifests.md lists them with their verdicts) render as the MCO renders them: accepted ones
with the expected files, units, kernel arguments and kubelet/CRI-O settings, refused ones with the MCO's
reason at file:line and field (expectations.yaml says which, and why)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.renderer.field_corpus_run import CORPUS, expectations, render_document

EXPECTED = expectations()
DOCUMENTS = sorted(p.name for p in CORPUS.iterdir() if p.name != "expectations.yaml")


def test_every_document_has_a_header_and_an_expectation() -> None:
    assert len(DOCUMENTS) >= 50
    assert sorted(EXPECTED) == DOCUMENTS
    for name in DOCUMENTS:
        head = (CORPUS / name).read_text().splitlines()[:3]
        assert head[0].startswith("# Source: ") and head[1].startswith("# Path: "), name
        assert head[2] == "# Licence: Apache-2.0", name


def _check_pool(outcome: Any, want: dict[str, Any]) -> None:
    pool = want.get("pool", "worker")
    spec = outcome.spec(pool)
    files = outcome.files(pool)
    for path in want.get("files", ()):
        assert path in files, (path, sorted(files))
    for path, fragment in (want.get("contents") or {}).items():
        assert fragment.encode() in files[path], (path, files[path][:200])
    units = {u["name"]: u for u in spec.config.get("systemd", {}).get("units", [])}
    for name in want.get("units", ()):
        assert name in units, (name, sorted(units))
    for pair in want.get("dropins", ()):
        unit, dropin = pair.split("/", 1)
        assert dropin in [d["name"] for d in units[unit].get("dropins", [])], pair
    for karg in want.get("kargs", ()):
        assert karg in spec.kernel_arguments, (karg, spec.kernel_arguments)
    if "kernelType" in want:
        assert spec.kernel_type == want["kernelType"]
    for ext in want.get("extensions", ()):
        assert ext in spec.extensions
    if "fips" in want:
        assert spec.fips is want["fips"]
    if want.get("kubelet"):
        conf = yaml.safe_load(files["/etc/kubernetes/kubelet.conf"])
        for key, value in want["kubelet"].items():
            assert conf.get(key) == value, (key, conf.get(key))
    for name, fragment in (want.get("crio") or {}).items():
        data = files[f"/etc/crio/crio.conf.d/{name}"].decode()
        assert fragment in data, (name, data)


@pytest.mark.parametrize("name", DOCUMENTS, ids=DOCUMENTS)
def test_document_renders_as_the_mco_renders_it(name: str, tmp_path: Path) -> None:
    want = EXPECTED[name]
    outcome = render_document(name, tmp_path, list(want.get("with", ())))
    mine = [p for p in outcome.problems if f"manifests/{name}" in p]
    errors = [p for p in mine if not p.startswith("warning: ")]
    if want["verdict"] == "reject":
        assert any(f"manifests/{name}:" in e and want["reason"] in e for e in errors), mine
        return
    assert errors == [], errors
    assert all(r.errors == () for r in outcome.result.pools.values()), outcome.problems
    if "warning" in want:
        assert any(want["warning"] in p for p in mine), mine
    _check_pool(outcome, want)
