"""Ignition spec 2.x (2.0.0, 2.1.0, 2.2.0) read and converted to spec 3, as the MCO reads a MachineConfig.

MCO `pkg/controller/common/helpers.go`: `IgnParseWrapper` falls back to Ignition's spec-2 parser for a
version spec 3 does not know; `ParseAndConvertConfig` then removes duplicate files, units and users
(`removeIgnDuplicateFilesUnitsUsers`, dedupe.py) and converts 2.2 -> 2.3 -> 3.0 with ign-converter
(filesystem map `{"root": "/"}`, to_v3.py) -> 3.x with Ignition's own translators (ignition.translate).
Every refusal is an error entry at the field of the document as written (indices of the input, before
de-duplication), in Ignition's or ign-converter's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ignition.errors import IgnitionError, TranslationError
from ignition.report import Entry, Path, Report
from ignition.spec2.dedupe import Origins, remove_duplicates
from ignition.spec2.shape import SPEC2_VERSIONS, read
from ignition.spec2.to_v3 import check, convert

__all__ = ["SPEC2_VERSIONS", "Spec2Error", "is_spec2", "spec2_version", "to_spec3"]


class Spec2Error(TranslationError):
    """A spec-2 config that cannot be read or converted; `report` lists every problem at its field."""


def spec2_version(config: Any) -> str | None:
    """The config's spec-2 version ("2.2.0"), or None when it is not a spec-2 config."""
    ign = config.get("ignition") if isinstance(config, Mapping) else None
    version = ign.get("version") if isinstance(ign, Mapping) else None
    return version if isinstance(version, str) and version in SPEC2_VERSIONS else None


def is_spec2(config: Any) -> bool:
    """True for a config whose `ignition.version` is 2.0.0, 2.1.0 or 2.2.0."""
    return spec2_version(config) is not None


def _back(path: Path, origins: Origins) -> Path:
    """A path in the de-duplicated (or converted) config as a path in the config as written."""
    if len(path) >= 3 and path[:2] == ("ignition", "config") and path[2] == "merge":
        path = ("ignition", "config", "append", *path[3:])
    if len(path) >= 3 and isinstance(path[2], int):
        where = origins.get((str(path[0]), str(path[1])))
        if where is not None and path[2] < len(where):
            rest = path[3:]
            if path[:2] == ("systemd", "units") and rest[:1] == ("dropins",) and \
                    path[2] in origins.get(("systemd", "gathered"), ()):
                rest = ("dropins",)  # dropins gathered from duplicates: name the list
            return (path[0], path[1], where[path[2]], *rest)
    return path


def _fail(message: str, report: Report) -> Spec2Error:
    first = report.errors[0] if report.errors else None
    return Spec2Error(message, report=report, path=first.path if first else ())


def to_spec3(config: Mapping[str, Any], to_version: str) -> tuple[dict[str, Any], Report]:
    """The spec-2 `config` in spec `to_version` (3.0.0 or later) and the warnings; raises Spec2Error."""
    from ignition.translate import translate_with_report
    from ignition.validate import validate_dict

    version = spec2_version(config)
    report = Report()
    if version is None:
        report.error("version-unsupported", ("ignition", "version"), "unsupported config version")
        raise _fail("not a spec-2 config", report)
    read_config = read(config, report)
    if read_config is None:
        raise _fail(f"cannot read the Ignition {version} config", report)
    deduped, origins = remove_duplicates(read_config, report)
    if report.is_fatal:
        raise _fail(f"cannot convert the Ignition {version} config", report)
    found = Report()
    check(deduped, found)
    report.extend(Entry(e.severity, e.code, _back(e.path, origins), e.message) for e in found)
    if report.is_fatal:
        raise _fail(f"cannot convert the Ignition {version} config: {report.errors[0].message}", report)
    v30 = convert(deduped)
    verdict = validate_dict(v30, version="3.0.0")
    report.extend(Entry(e.severity, e.code, _back(tuple(e.path), origins), e.message) for e in verdict.entries)
    if report.is_fatal:
        raise _fail(f"cannot convert the Ignition {version} config: {report.errors[0].message}", report)
    try:
        out, more = translate_with_report(v30, to_version)
    except IgnitionError as exc:
        report.extend(Entry(e.severity, e.code, _back(tuple(e.path), origins), e.message) for e in exc.report)
        raise _fail(f"cannot convert the Ignition {version} config to {to_version}: {exc}", report) from exc
    report.extend(more.warnings)
    return out, report
