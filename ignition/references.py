"""Rendering a config's references, as Ignition's fetch stage does with `ignition.config.replace` and
`ignition.config.merge[]` (Ignition internal/exec/util/config_fetcher.go: RenderConfig).

- replace.source set: fetch that config, discard the current one entirely, render the new one;
- else, for each merge[] entry in order: fetch the child, render it first (depth-first), then
  result = merge(result, child) (merge.py). The result keeps every merge[] entry; they are not fetched again.
A fetched config must be a complete, valid config of its own; fetched bytes are gunzipped when the
reference says `compression: gzip`, and `verification.hash` is checked over the decompressed bytes.
Everything is translated up to one version (Ignition uses its newest), and the result is validated.
Remote sources go through a `Fetch` seam (`MemoryFetcher` is the in-memory one). Unlike Ignition, which
would recurse forever, a reference loop stops at MAX_DEPTH levels.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ignition.errors import IgnitionError
from ignition.merge import merge
from ignition.parse import check
from ignition.report import Path, Report
from ignition.resource import Fetch, ResourceError, read_resource
from ignition.translate import translate
from ignition.validate import validate_dict
from ignition.versions import LATEST

__all__ = ["MAX_DEPTH", "Fetch", "MemoryFetcher", "ReferencedConfigError", "render_references"]

MAX_DEPTH = 16


class ReferencedConfigError(IgnitionError):
    """A referenced config could not be fetched, verified or read, or the rendered result is invalid."""


class MemoryFetcher:
    """The in-memory Fetch seam: sources mapped to bytes (tests, and configs already at hand)."""

    def __init__(self, documents: Mapping[str, bytes]) -> None:
        self.documents = dict(documents)
        self.requests: list[tuple[str, tuple[tuple[str, str], ...]]] = []

    def __call__(self, source: str, headers: Sequence[tuple[str, str]]) -> bytes:
        self.requests.append((source, tuple(headers)))
        try:
            return self.documents[source]
        except KeyError:
            raise ReferencedConfigError(f"resource not found: {source}") from None


def render_references(
    config: Mapping[str, Any], *, fetch: Fetch | None = None, version: str | None = None
) -> dict[str, Any]:
    """Ignition's rendering of `replace` and `merge[]` (see above); `data:` sources need no fetcher."""
    target = version or LATEST
    result = _render(translate(config, target), fetch, target, 0, ())
    report = validate_dict(result)
    if report.is_fatal:
        raise ReferencedConfigError("merging configs resulted in an invalid config", report=Report(report.errors))
    return result


def _render(
    config: dict[str, Any], fetch: Fetch | None, version: str, depth: int, where: Path
) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        raise ReferencedConfigError(f"config references nest deeper than {MAX_DEPTH} levels", path=where)
    refs = config.get("ignition", {}).get("config", {})
    replace = refs.get("replace", {})
    if replace.get("source") is not None:
        at = where + ("ignition", "config", "replace")
        return _render(_fetch_config(replace, fetch, version, at), fetch, version, depth + 1, at)
    result = config
    for i, ref in enumerate(refs.get("merge", [])):
        at = where + ("ignition", "config", "merge", i)
        child = _render(_fetch_config(ref, fetch, version, at), fetch, version, depth + 1, at)
        result = merge(result, child)
    return result


def _fetch_config(ref: Mapping[str, Any], fetch: Fetch | None, version: str, at: Path) -> dict[str, Any]:
    """Fetch, decompress, verify (ignition/resource.py), parse and translate one referenced config."""
    source = ref.get("source")
    if not source:
        raise ReferencedConfigError("source is required", path=at + ("source",))
    try:
        raw = read_resource(ref, fetch=fetch)
    except ResourceError as exc:  # undecodable bytes are the source's fault, whatever undid them
        field = "source" if exc.code == "gzip" else exc.field
        raise ReferencedConfigError(f"cannot read {source}: {exc.message}", path=at + tuple(field.split("."))) from exc
    except IgnitionError as exc:
        if exc.path:
            raise
        raise ReferencedConfigError(str(exc), report=exc.report, path=at + ("source",)) from exc
    assert raw is not None  # (a source is set)
    checked = check(raw)
    if not checked.ok:
        raise ReferencedConfigError(f"referenced config {source} is not valid", report=Report(checked.report.errors),
                                    path=at)
    return translate(json.loads(raw), version)
