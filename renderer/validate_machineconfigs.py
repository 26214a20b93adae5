"""Validation of each MachineConfig and of a pool's merged result (MCO `pkg/controller/common/helpers.go`: ValidateMachineConfig).

Each input MachineConfig:
- `kernelType` is one of "", `default`, `realtime`, `64k-pages` (`kernelType=<x> is invalid`);
- a given `spec.config` must have a supported `ignition.version` and pass Ignition's own validation
  (errors with the JSON path inside the manifest, so file:line:col is known); warnings stay warnings;
- no file mode above 0777 (`invalid mode 04755 for <path>, cannot exceed 0777`); files only, as the MCO's
  validateIgn3FileModes loops over `storage.files` alone: a directory keeps its setgid or sticky bit (02775, 01777);
- extensions are checked against the allow-list (cluster.yaml `extensionsAllowList`, default the MCO's
  supported extensions) only when the MachineConfig has a config, as the MCO does.
The merged result:
- `kernel-devel` with a non-default kernel type is refused;
- the merged Ignition config passes Ignition validation;
- its MachineConfig JSON is at most 1,572,864 bytes (`MaxMachineConfigSize`);
- it is reconcilable with the pool's current target (fleet/reconcile.py); when it is not, the
  source MachineConfig that alone is not reconcilable is named.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from fleet.reconcile import check_reconcilable
from fleet.rendered import MachineConfigSpec
from ignition.errors import IgnitionError
from ignition.report import Entry
from ignition.spec2 import SPEC2_VERSIONS, to_spec3
from ignition.validate import validate_dict
from ignition.versions import SUPPORTED_VERSIONS
from renderer.merge_machineconfigs import IGNITION_VERSION
from renderer.model import MachineConfig
from renderer.problems import Path, Problem

KERNEL_TYPES = ("", "default", "realtime", "64k-pages")
MAX_MACHINE_CONFIG_SIZE = 1572864
MAX_MODE = 0o777
# MCO IgnParseWrapper's list, with what this renderer really reads: spec 2.0-2.2 and 3.0-3.6
SUPPORTED_MESSAGE = "Supported spec versions: " + ", ".join(
    v.rsplit(".", 1)[0] for v in (*SPEC2_VERSIONS, *SUPPORTED_VERSIONS))


def mc_problem(mc: MachineConfig, code: str, path: Path, message: str, *, severity: str = "error") -> Problem:
    """A Problem about `mc` at `path` (inside the MachineConfig object), located in its manifest if it has one."""
    if mc.doc is not None:
        note = mc.doc.parsed_as(path) if severity == "error" else ""
        return mc.doc.problem(code, path, f"{message} ({note})" if note else message, severity=severity)
    return Problem(code=code, message=f"{mc.name}: {message}", source=mc.origin.source, path=path,
                   line=mc.origin.line, severity=severity)


def _config_path(mc: MachineConfig, inner: Sequence[str | int]) -> Path:
    return (*mc.config_path, *inner)


def _ignition_verdict(config: Mapping[str, Any]) -> list[tuple[str, Path, str, str]]:
    """(severity, path, code, message) of Ignition's verdict on a config dict."""
    ignition = config.get("ignition")
    version = ignition.get("version") if type(ignition) is dict or isinstance(ignition, Mapping) else None
    if not isinstance(version, str) or not version:
        return [("error", ("ignition", "version"), "invalid-version",
                 f"parsing Ignition config failed: invalid version. {SUPPORTED_MESSAGE}")]
    if version in SPEC2_VERSIONS:
        return _spec2_verdict(config)
    if version not in SUPPORTED_VERSIONS:
        return [("error", ("ignition", "version"), "unknown-version",
                 f"parsing Ignition config failed: unknown version {version!r}. {SUPPORTED_MESSAGE}")]
    try:
        entries = list(validate_dict(config).entries)
    except IgnitionError as exc:
        entries = list(exc.report.entries) or [Entry("error", "ignition", (), str(exc))]
    return [(e.severity, tuple(e.path), e.code, e.message) for e in entries]


def _spec2_verdict(config: Mapping[str, Any]) -> list[tuple[str, Path, str, str]]:
    """A spec-2 config is read, de-duplicated and converted as the MCO converts it (ignition.spec2); its
    problems are at the fields as written."""
    try:
        report = to_spec3(config, IGNITION_VERSION)[1]
    except IgnitionError as exc:
        report = exc.report
    return [(e.severity, tuple(e.path), e.code,
             f"parsing Ignition spec v2 failed: {e.message}" if e.severity == "error" else e.message)
            for e in report.entries]


def _modes(config: Mapping[str, Any]) -> list[tuple[Path, str, int]]:
    """File modes above 0777 (MCO validateIgn3FileModes / validateIgn2FileModes check `storage.files` only:
    Ignition itself allows special bits on a directory, and so does the MCO)."""
    out: list[tuple[Path, str, int]] = []
    storage = config.get("storage")
    if not (type(storage) is dict or isinstance(storage, Mapping)):
        return out
    entries = storage.get("files") or ()
    if type(entries) is list and set(map(type, entries)) == {dict}:  # (a JSON list of objects)
        modes = set(map(dict.get, entries, repeat("mode")))
        if max((m for m in modes if isinstance(m, int) and not isinstance(m, bool)), default=0) <= MAX_MODE:
            return out  # no mode above 0777: the whole list answered without a look at each entry
    for i, entry in enumerate(entries):
        if isinstance(entry, Mapping):
            mode = entry.get("mode")
            if isinstance(mode, int) and not isinstance(mode, bool) and mode > MAX_MODE:
                out.append((("storage", "files", i, "mode"), str(entry.get("path")), mode))
    return out


@dataclass(frozen=True)
class Verdict:
    """One input MachineConfig's problems (errors and warnings)."""

    problems: list[Problem]


def check_machine_config(mc: MachineConfig, *, allowed_extensions: Sequence[str]) -> Verdict:
    """Every problem of one input MachineConfig (errors and warnings)."""
    problems: list[Problem] = []
    spec = mc.spec
    if spec.kernel_type not in KERNEL_TYPES:
        problems.append(mc_problem(mc, "kernel-type", ("spec", "kernelType"),
                                   f"kernelType={spec.kernel_type} is invalid"))
    if mc.has_config:
        config = spec.config
        found = _ignition_verdict(config)
        for severity, path, code, message in found:
            problems.append(mc_problem(mc, code, _config_path(mc, path), message, severity=severity))
        for path, file_path, mode in _modes(config):
            hint = ""
            if set(str(mode)) <= set("01234567") and int(str(mode), 8) <= MAX_MODE:
                hint = f" (the decimal {mode} would be reasonable in octal: write 0{mode})"
            problems.append(mc_problem(mc, "mode-special-bits", _config_path(mc, path),
                                       f"invalid mode 0{mode:o} for {file_path}, cannot exceed 0777{hint}"))
        bad = [e for e in spec.extensions if e not in allowed_extensions]
        if bad:
            index = spec.extensions.index(bad[0])
            problems.append(mc_problem(mc, "extension-unsupported", ("spec", "extensions", index),
                                       f"invalid extensions found: [{' '.join(bad)}] "
                                       f"(allowed: {', '.join(allowed_extensions)})"))
    return Verdict(problems)


def validate_result(spec: MachineConfigSpec, configs: Sequence[MachineConfig], *, size: int,
                    pool: str) -> list[Problem]:
    """Problems of a pool's merged spec; `size` is the length of its MachineConfig JSON."""
    problems: list[Problem] = []
    if spec.kernel_type != "default" and "kernel-devel" in spec.extensions:
        culprit = next((m for m in configs if "kernel-devel" in m.spec.extensions), None)
        message = f"installing kernel-devel extension is not supported with kernelType: {spec.kernel_type}"
        if culprit is not None:
            problems.append(mc_problem(culprit, "kernel-devel", ("spec", "extensions",
                                                                 culprit.spec.extensions.index("kernel-devel")),
                                       message))
        else:
            problems.append(Problem("kernel-devel", message, path=("spec", "extensions")))
    for severity, path, code, message in _ignition_verdict(spec.config):
        if severity == "error":
            problems.append(Problem(code, f"merged config of pool {pool}: {message}",
                                    path=("spec", "config", *path)))
    if size > MAX_MACHINE_CONFIG_SIZE:
        problems.append(Problem("size", f"rendered MachineConfig of pool {pool} is {size} bytes, more than the "
                                f"limit of {MAX_MACHINE_CONFIG_SIZE}"))
    return problems


def reconcile_problems(current_name: str, current: MachineConfigSpec, new: MachineConfigSpec,
                       configs: Sequence[MachineConfig], *, overrides: Sequence[str] = ()) -> list[Problem]:
    """Problems when the new merged spec cannot be applied to nodes running `current` (MCO `pkg/controller/common/reconcile.go`)."""
    reasons = check_reconcilable(current, new, overrides=overrides)
    if not reasons:
        return []

    def failed(mc: MachineConfig, path: Path, reason: str) -> list[Problem]:
        return [mc_problem(mc, "not-reconcilable", path, f'reconciliation failed between current config '
                                                         f'"{current_name}" and base config "{mc.name}": {reason}')]

    for reason in reasons:
        if bool(current.fips) != bool(new.fips) and "FIPS" in reason:
            setter = next((m for m in configs if m.spec.fips), None)
            if setter is not None:
                return failed(setter, ("spec", "fips"), reason)
            continue
        for mc in configs:
            if not mc.has_config:
                continue
            alone = MachineConfigSpec(config=mc.spec.config, fips=current.fips)
            if reason in check_reconcilable(current, alone, overrides=overrides):
                return failed(mc, ("spec", "config"), reason)
    return [Problem("not-reconcilable", f'the new config is not reconcilable against current config '
                                        f'"{current_name}": {reasons[0]}')]
