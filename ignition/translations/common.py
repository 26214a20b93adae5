"""What every translation step shares: reading a dict the way Go reads that version, and the downward refusal.

Where it sits: `ignition.translate` chains the neighbour steps in this package; each step calls these
helpers. A downward step never drops a field silently: a field the target lacks is dropped (with a
warning) only when it holds its default value, otherwise every non-default leaf under it becomes an
error in the report, so the caller gets the whole list at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ignition import schema, schema_nodes
from ignition.decode import decode
from ignition.report import Path, Report
from ignition.rules.urls import scheme_of

# Codes of the entries translation adds to a report.
CODE_UNSUPPORTED = "translate-unsupported"  # a field or value the target spec cannot express
CODE_DROPPED_DEFAULT = (
    "translate-dropped-default"  # a field the target lacks, dropped because it held its default
)
CODE_UNUSED_KEY = "unused-key"  # a key the source spec does not know (Ignition ignores it): dropped
CODE_MASKED = "translate-masked"  # a value changed by the step, as Ignition's own translator changes it
CODE_JSON_TYPE = "json-type"  # a value of the wrong JSON type: the document cannot be translated

# Fields whose default (absent) meaning is `true`, so `true` is as good as absent.
_TRUE_BY_DEFAULT = frozenset({"passwd.users[].shouldExist", "passwd.groups[].shouldExist"})


@dataclass
class Context:
    """One translation run: the final target version and the report every step adds to."""

    target: str
    report: Report = field(default_factory=Report)


def read_as(config: Mapping[str, Any], version: str, ctx: Context) -> dict[str, Any] | None:
    """The config as Go reads it in `version` (ignition.decode): unknown keys dropped and warned about,
    canonical key names, nulls resolved. None, with the error in the report, for a wrong JSON type."""
    decoded = decode(dict(config), version)
    for path in decoded.unused:
        ctx.report.warning(CODE_UNUSED_KEY, path, f"unused key {path[-1]}")
    if decoded.mismatch is not None or decoded.doc is None:
        assert decoded.mismatch is not None
        ctx.report.error(CODE_JSON_TYPE, decoded.mismatch.path, decoded.mismatch.message())
        return None
    return decoded.doc


def is_default(field_path: str, value: Any) -> bool:
    """True when `value` means the same as leaving the field out."""
    if field_path in _TRUE_BY_DEFAULT:
        return value is None or value is True
    if value is None or value is False:
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, str, list)):
        return not value
    if isinstance(value, dict):
        return all(is_default(f"{field_path}.{k}", v) for k, v in value.items())
    return False


def _report_lacking(value: Any, path: Path, field_path: str, ctx: Context) -> bool:
    """Add an error for every non-default leaf under a field the target lacks; True if any was added."""
    if is_default(field_path, value):
        return False
    if isinstance(value, dict):
        reported = False
        for k, v in value.items():
            reported = _report_lacking(v, path + (k,), f"{field_path}.{k}", ctx) or reported
        return reported
    if isinstance(value, list):
        for i, item in enumerate(value):
            if not _report_lacking(item, path + (i,), f"{field_path}[]", ctx):
                ctx.report.error(CODE_UNSUPPORTED, path + (i,), f"not supported in spec {ctx.target}")
        return True
    ctx.report.error(CODE_UNSUPPORTED, path, f"not supported in spec {ctx.target}")
    return True


@cache
def _identical(source: schema_nodes.Node, target: schema_nodes.Node) -> bool:
    """True when the two versions' subtrees have the same fields all the way down (nothing to drop)."""
    if source.kind != target.kind:
        return False
    if source.kind == "object":
        return source.fields.keys() == target.fields.keys() and all(
            _identical(f.node, target.fields[name].node) for name, f in source.fields.items()
        )
    if source.kind == "list":
        assert source.item is not None and target.item is not None
        return _identical(source.item, target.item)
    return True


def drop_fields_missing_in(
    value: Any, source: schema_nodes.Node, target: schema_nodes.Node, path: Path, field_path: str, ctx: Context
) -> Any:
    """The downward copy: fields the target schema lacks are dropped if default, else reported as errors."""
    if _identical(source, target):
        return value  # the steps never modify values in place, so sharing the subtree is safe
    if source.kind == "list":
        assert source.item is not None and target.item is not None
        return [
            drop_fields_missing_in(item, source.item, target.item, path + (i,), f"{field_path}[]", ctx)
            for i, item in enumerate(value)
        ]
    if source.kind != "object":
        return value
    out: dict[str, Any] = {}
    for name, sub in value.items():
        here = f"{field_path}.{name}" if field_path else name
        target_field = target.fields.get(name)
        if target_field is None:
            if is_default(here, sub):
                ctx.report.warning(
                    CODE_DROPPED_DEFAULT,
                    path + (name,),
                    f"dropped: holds its default and is not in spec {ctx.target}",
                )
            else:
                _report_lacking(sub, path + (name,), here, ctx)
            continue
        out[name] = drop_fields_missing_in(
            sub, source.fields[name].node, target_field.node, path + (name,), here, ctx
        )
    return out


def find(value: Any, field_path: str) -> Iterator[tuple[Path, Any]]:
    """Every (concrete path, value) that a schema field path like "storage.files[].mode" names in a config."""
    yield from _find(value, [p for p in re.split(r"\.|(?=\[\])", field_path) if p], ())


def _find(value: Any, steps: list[str], path: Path) -> Iterator[tuple[Path, Any]]:
    if not steps:
        yield path, value
        return
    step, rest = steps[0], steps[1:]
    if step == "[]":
        if isinstance(value, list):
            for i, item in enumerate(value):
                yield from _find(item, rest, path + (i,))
    elif isinstance(value, dict) and step in value:
        yield from _find(value[step], rest, path + (step,))


def source_fields(version: str) -> list[str]:
    """The field paths of every resource `source` in a version (configs, CAs, contents, appends, key files)."""
    return sorted(p for p in schema.fields(version) if p.endswith(".source"))


def refuse_scheme(config: Any, version: str, scheme: str, ctx: Context) -> None:
    """An error for each resource source using `scheme`, which the target spec does not accept."""
    for field_path in source_fields(version):
        for path, value in find(config, field_path):
            if isinstance(value, str) and scheme_of(value) == scheme:
                ctx.report.error(
                    CODE_UNSUPPORTED, path, f"{scheme} sources are not supported in spec {ctx.target}"
                )


def with_version(config: dict[str, Any], version: str) -> dict[str, Any]:
    """A shallow copy of the config whose ignition.version is `version`."""
    out = dict(config)
    out["ignition"] = {**config.get("ignition", {}), "version": version}
    return out


def copy_down(config: dict[str, Any], source: str, target: str, ctx: Context) -> dict[str, Any]:
    """The generic downward step: drop what the older spec lacks (refusing non-defaults), set its version."""
    out = drop_fields_missing_in(config, schema.root(source), schema.root(target), (), "", ctx)
    return with_version(out, target)
