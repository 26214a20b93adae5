"""Translate a config between Ignition spec versions 3.0.0 ... 3.6.0 (and 3.7.0-experimental), up or down.

Where it sits: the server translates a rendered config down to the version a node asks for, the CLI
and the renderer translate fragments to one version before merging. Steps live in
`ignition/translations/`, one module per pair of neighbours; this module chains them.

- The input is first read as Go reads its version: unknown keys are dropped (with a warning: Ignition
  ignores them, and they must not spring to life in a newer spec), key names are made canonical and
  `null` means unset.
- Upward is what Ignition's own translators do: the version changes, and going to 3.6 the
  setuid/setgid/sticky mode bits are masked off (with a warning).
- Downward is refused wherever the older spec cannot say the same thing: every non-default value of a
  field the target lacks is an error at its own path (`$.storage.luks.0.clevis.tpm2: not supported in
  spec 3.1.0`), as is every value the target rejects (special mode bits, `format: none`, `gs://`, `arn:`,
  `sha256-`, new clevis pins). Fields that only hold their default are dropped with a warning. The
  result is then validated under the target spec, and any error there refuses it too.
  Never a silent drop.
The output's `ignition.version` is the target.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ignition.errors import TranslationError
from ignition.report import Entry, Report
from ignition.translations import STEPS
from ignition.translations.common import CODE_UNSUPPORTED, Context, read_as
from ignition.validate import validate_dict
from ignition.versions import ACCEPTED_VERSIONS, is_accepted, version_index

__all__ = ["translate", "translate_with_report", "translation_steps"]

_VERSION_PATH = ("ignition", "version")


def translate(config: Mapping[str, Any], to_version: str) -> dict[str, Any]:
    """The config in spec `to_version`; raises TranslationError listing every path the target cannot express.

    The result may share lists and objects with `config` (what needs no change is not copied, as in
    ignition/decode.py): copy it (copy.deepcopy) before changing either."""
    return translate_with_report(config, to_version)[0]


def translate_with_report(config: Mapping[str, Any], to_version: str) -> tuple[dict[str, Any], Report]:
    """Like translate, and also returns the warnings (dropped unknown keys and defaults, masked modes)."""
    from_version = _source_version(config)
    if not is_accepted(to_version):
        raise _refuse(
            f"unknown target spec version {to_version!r}",
            _VERSION_PATH,
            f"unsupported config version {to_version!r}",
        )
    ctx = Context(target=to_version)
    read = read_as(config, from_version, ctx)
    if read is None:
        raise TranslationError(f"cannot read the {from_version} config", report=ctx.report)
    current: dict[str, Any] = read
    for step, direction in translation_steps(from_version, to_version):
        current = step.up(current, ctx) if direction == "up" else step.down(current, ctx)
    downward = version_index(to_version) < version_index(from_version)
    if downward:
        _add_target_validation(current, to_version, ctx.report)
    report = _dedupe(ctx.report)
    if report.is_fatal:
        raise TranslationError(
            f"cannot express the {from_version} config in spec {to_version}: {len(report.errors)} problem(s)",
            report=report,
        )
    return current, report


def translation_steps(from_version: str, to_version: str) -> list[tuple[ModuleType, str]]:
    """The neighbour steps from one version to another, each with its direction ("up" or "down")."""
    a, b = version_index(from_version), version_index(to_version)
    if a <= b:
        return [(step, "up") for step in STEPS[a:b]]
    return [(step, "down") for step in reversed(STEPS[b:a])]


def _refuse(message: str, path: tuple[str, ...], entry_message: str) -> TranslationError:
    report = Report()
    report.error(CODE_UNSUPPORTED, path, entry_message)
    return TranslationError(message, report=report, path=path)


def _source_version(config: Mapping[str, Any]) -> str:
    if not isinstance(config, Mapping):
        raise _refuse("config is not a JSON object", (), "config is not a JSON object")
    ign = config.get("ignition")
    version = ign.get("version") if isinstance(ign, Mapping) else None
    if not isinstance(version, str) or not is_accepted(version):
        raise _refuse(
            f"cannot translate from config version {version!r} (known: {', '.join(ACCEPTED_VERSIONS)})",
            _VERSION_PATH,
            "unsupported config version"
            if isinstance(version, str)
            else "invalid config version (couldn't parse)",
        )
    return version


def _covered(path: tuple[Any, ...], reported: list[tuple[Any, ...]]) -> bool:
    return any(path[: len(p)] == p or p[: len(path)] == path for p in reported)


def _add_target_validation(config: dict[str, Any], version: str, report: Report) -> None:
    """Re-validate the translated config under the target's rules; its errors refuse the translation."""
    reported = [e.path for e in report.errors]
    for entry in validate_dict(config, version=version).errors:
        if not _covered(entry.path, reported):
            report.entries.append(
                Entry(entry.severity, entry.code, entry.path, f"{entry.message} (under spec {version} rules)")
            )


def _dedupe(report: Report) -> Report:
    """One error per path (a value refused by two steps is listed once), warnings kept in order."""
    out = Report()
    seen: set[tuple[Any, ...]] = set()
    for entry in report.entries:
        if entry.severity == "error":
            if entry.path in seen:
                continue
            seen.add(entry.path)
        out.entries.append(entry)
    return out
