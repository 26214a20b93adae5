"""Shape checks shared by every typed manifest (renderer/model.py, renderer/registries_model.py): where an
object was written, and a checker that collects type problems for one document with file:line:col and the
field path. Only the shape is checked here; what a value means is the kind's own business."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fleet.label_selector import LabelSelector, parse_selector
from fleet.names import is_dns_subdomain
from renderer.load import Document
from renderer.problems import Path, Problem


@dataclass(frozen=True)
class Origin:
    """Where an object was written: `manifests/50-chrony.yaml:3` (the document's first line)."""

    source: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.source}:{self.line}" if self.line else self.source



class Checker:
    """Collects shape problems for one document."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.problems: list[Problem] = []

    def add(self, code: str, path: Path, message: str, *, severity: str = "error") -> None:
        self.problems.append(self.doc.problem(code, path, message, severity=severity))

    def type_error(self, path: Path, expected: str, value: Any) -> None:
        got = type_name(value)
        note = self.doc.parsed_as(path)
        self.add("json-type", path, f"expected {expected}, got {got}" + (f" ({note})" if note else ""))

    def string(self, data: Mapping[str, Any], key: str, path: Path, default: str = "") -> str:
        value = data.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            self.type_error((*path, key), "a string", value)
            return default
        return value

    def strings(self, data: Mapping[str, Any], key: str, path: Path) -> tuple[str, ...]:
        value = data.get(key)
        if value is None:
            return ()
        if not isinstance(value, list):
            self.type_error((*path, key), "a list of strings", value)
            return ()
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, str):
                self.type_error((*path, key, i), "a string", item)
            else:
                out.append(item)
        return tuple(out)

    def string_map(self, data: Mapping[str, Any], key: str, path: Path) -> dict[str, str]:
        value = data.get(key)
        if value is None:
            return {}
        if type(value) is not dict and not isinstance(value, Mapping):
            self.type_error((*path, key), "an object of strings", value)
            return {}
        out: dict[str, str] = {}
        for k, v in value.items():
            if not isinstance(v, str):
                self.type_error((*path, key, k), "a string", v)
            else:
                out[str(k)] = v
        return out

    def boolean(self, data: Mapping[str, Any], key: str, path: Path) -> bool | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, bool):
            self.type_error((*path, key), "a boolean", value)
            return None
        return value

    def mapping(self, data: Mapping[str, Any], key: str, path: Path) -> Mapping[str, Any]:
        value = data.get(key)
        if value is None:
            return {}
        if type(value) is not dict and not isinstance(value, Mapping):
            self.type_error((*path, key), "an object", value)
            return {}
        return value

    def selector(self, data: Mapping[str, Any], key: str, path: Path) -> LabelSelector | None:
        selector, problems = parse_selector(data.get(key), (*path, key))
        for ppath, code, message in problems:
            self.add(code, ppath, message)
        return selector


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"number {value}"
    if isinstance(value, str):
        return f"string {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def origin_of(doc: Document) -> Origin:
    return Origin(doc.source, doc.first_line())


def read_metadata(check: Checker, data: Mapping[str, Any]) -> tuple[str, dict[str, str], dict[str, str]]:
    meta = data.get("metadata")
    if type(meta) is not dict and not isinstance(meta, Mapping):
        if meta is None:
            check.add("required", ("metadata",), "metadata.name is required")
        else:
            check.type_error(("metadata",), "an object", meta)
        return "", {}, {}
    name = meta.get("name")
    if name is None:
        check.add("required", ("metadata", "name"), "metadata.name is required")
        name = ""
    elif not isinstance(name, str):
        check.type_error(("metadata", "name"), "a string", name)
        name = ""
    elif not is_dns_subdomain(name):
        check.add("invalid-name", ("metadata", "name"),
                  f"name {name!r} is not a lowercase DNS subdomain name (a-z, 0-9, '-', '.')")
    labels = check.string_map(meta, "labels", ("metadata",))
    annotations = check.string_map(meta, "annotations", ("metadata",))
    return name, labels, annotations
