"""Rendering one document of tests/renderer/field_corpus/ the way a user would: the bundled example
cluster's cluster.yaml and templates (no manifests of its own, so master and worker are the built-in
pools), plus the document and the ones it needs (`with` in expectations.yaml), through render_cluster."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fleet.store import MemoryStore
from ignition.dataurl import decode_data_url
from renderer.render import RenderResult, render_cluster

CORPUS = Path(__file__).resolve().parent / "field_corpus"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cluster"


def expectations() -> dict[str, dict[str, Any]]:
    """The expectations table, keyed by document file name."""
    data = yaml.safe_load((CORPUS / "expectations.yaml").read_text())
    assert isinstance(data, dict)
    return data


@dataclass(frozen=True)
class Outcome:
    """What rendering a document gave: the result, every problem line, and each pool's rendered spec."""

    result: RenderResult
    problems: list[str]

    def spec(self, pool: str) -> Any:
        rendered = self.result.pools[pool].rendered
        assert rendered is not None, self.result.pools[pool].errors
        return rendered.spec

    def files(self, pool: str) -> dict[str, bytes]:
        out = {}
        for f in self.spec(pool).config.get("storage", {}).get("files", []):
            source = f.get("contents", {}).get("source")
            data = decode_data_url(source) if source else b""
            if f.get("contents", {}).get("compression") == "gzip":
                import gzip

                data = gzip.decompress(data)
            out[f["path"]] = data
        return out


def render_document(name: str, tmp: Path, with_: list[str]) -> Outcome:
    """Render the example cluster with only `name` (and `with_`) as manifests."""
    cluster = tmp / "cluster"
    shutil.copytree(EXAMPLE, cluster, ignore=shutil.ignore_patterns("manifests"))
    (cluster / "manifests").mkdir()
    for doc in (*with_, name):
        shutil.copy(CORPUS / doc, cluster / "manifests" / doc)
    result = render_cluster(cluster, store=MemoryStore())
    problems = [*result.errors, *result.warnings,
                *(line for p in result.pools.values() for line in (*p.errors, *p.warnings))]
    return Outcome(result, problems)
