"""The openshift variant: MachineConfig output, `openshift.*` fields, and the MCO's refusals.

Sugar step after the fcos translation (coreos/butane `config/openshift/v4_*/translate.go`). The Ignition config becomes
`spec.config` of a `machineconfiguration.openshift.io/v1` MachineConfig named by `metadata`;
`openshift.kernel_arguments/extensions/fips/kernel_type` become spec fields (ignored with a warning in raw
mode); `fips` adds a FIPS-compatible LUKS cipher before 4.20. The checks run on the fully desugared
config, in JSON space, because sugar (trees, boot_device) can generate what the MCO cannot apply.
"""

from __future__ import annotations

import re
from typing import Any

from butane import messages as m
from butane.context import Context
from butane.go_json import go_order
from ignition import schema as ign

API_VERSION = "machineconfiguration.openshift.io/v1"
KIND = "MachineConfig"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
_SPEC_FIELDS = (
    ("extensions", "extensions"),
    ("fips", "fips"),
    ("kernelArguments", "kernel_arguments"),
    ("kernelType", "kernel_type"),
)


def spec_fields(butane: dict[str, Any]) -> dict[str, Any]:
    """The MachineConfig spec fields (besides `config`) set by the `openshift` section."""
    section = butane.get("openshift") or {}
    out: dict[str, Any] = {}
    for json_name, yaml_name in _SPEC_FIELDS:
        value = section.get(yaml_name)
        if value is None or (isinstance(value, list) and not value):
            continue
        out[json_name] = value
    return out


def add_fips_options(config: dict[str, Any], fields: dict[str, Any], ctx: Context) -> None:
    """With `fips: true` (before 4.20), give LUKS volumes without a cipher option `--cipher aes-cbc-essiv:sha256`."""
    if fields.get("fips") is not True or ctx.spec.openshift_minor >= 20:
        return
    for i, luks in enumerate((config.get("storage") or {}).get("luks") or []):
        options = list(luks.get("options") or [])
        if any(o == "--cipher" or o.startswith("--cipher=") or o == "-c" for o in options):
            continue
        for j in range(2):
            ctx.translated(("storage", "luks", i, "options", len(options) + j), ("openshift", "fips"))
        if not options:
            ctx.translated(("storage", "luks", i, "options"), ("openshift", "fips"))
        luks["options"] = options + ["--cipher", "aes-cbc-essiv:sha256"]


def _error(ctx: Context, jpath: tuple[str | int, ...], message: str) -> None:
    ctx.problems.error(ctx.to_yaml(jpath), message)


def grub_to_contents(config: dict[str, Any], ctx: Context) -> None:
    """The MCO cannot append, so the generated GRUB `user.cfg` is written as contents (openshift 4.18+)."""
    for i, f in enumerate((config.get("storage") or {}).get("files") or []):
        if f.get("path") == "/boot/grub2/user.cfg":
            if len(f.get("append") or []) != 1:
                return
            f["contents"] = f.pop("append")[0]
            ctx.common(("storage", "files", i, "contents"), ("grub", "users"))
            return


def check_support(config: dict[str, Any], ctx: Context) -> None:
    """Errors for what RHCOS and the MCO refuse (Butane's validateRHCOSSupport and validateMCOSupport)."""
    storage = config.get("storage") or {}
    passwd = config.get("passwd") or {}
    minor = ctx.spec.openshift_minor
    for i, fs in enumerate(storage.get("filesystems") or []):
        if fs.get("format") == "btrfs":
            _error(ctx, ("storage", "filesystems", i, "format"), m.ERR_BTRFS)
    if minor >= 14:
        for i, fs in enumerate(storage.get("filesystems") or []):
            if fs.get("format") == "none":
                _error(ctx, ("storage", "filesystems", i, "format"), m.ERR_FORMAT_NONE)
    else:
        for i, _ in enumerate(storage.get("directories") or []):
            _error(ctx, ("storage", "directories", i), m.ERR_DIRECTORIES)
    for i, f in enumerate(storage.get("files") or []):
        if minor < 14 and f.get("append"):
            _error(ctx, ("storage", "files", i, "append"), m.ERR_FILE_APPEND)
        if minor < 10 and (f.get("contents") or {}).get("compression"):
            _error(ctx, ("storage", "files", i, "contents", "compression"), m.ERR_FILE_COMPRESSION)
        source = (f.get("contents") or {}).get("source")
        if source is not None:
            match = _SCHEME.match(source)
            scheme = match.group(1).lower() if match else ""
            if scheme != "data" and not (not match and ":" in source.split("/", 1)[0]):
                _error(ctx, ("storage", "files", i, "contents", "source"), m.ERR_FILE_SCHEME)
        mode = f.get("mode")
        if minor >= 10 and isinstance(mode, int) and mode & ~0o777:
            _error(ctx, ("storage", "files", i, "mode"), m.ERR_SPECIAL_MODE)
    if minor >= 14:
        for i, user in enumerate(passwd.get("users") or []):
            if user.get("name") != "core":
                _error(ctx, ("passwd", "users", i, "name"), m.ERR_USER_NAME)
        return
    for i, _ in enumerate(storage.get("links") or []):
        _error(ctx, ("storage", "links", i), m.ERR_LINKS)
    for i, _ in enumerate(passwd.get("groups") or []):
        _error(ctx, ("passwd", "groups", i), m.ERR_GROUPS)
    user_node = ign.node(ctx.spec.ignition, "passwd.users[]")
    allowed = {"name", "sshAuthorizedKeys"} | ({"passwordHash"} if minor >= 13 else set())
    for i, user in enumerate(passwd.get("users") or []):
        if user.get("name") != "core":
            _error(ctx, ("passwd", "users", i, "name"), m.ERR_USER_NAME)
            continue
        assert user_node is not None
        for name in go_order(user_node):
            if name in allowed or user.get(name) is None or user.get(name) == []:
                continue
            _error(ctx, ("passwd", "users", i, name), m.ERR_USER_FIELD)


_FILTERED_USER_FIELDS = ("gecos", "groups", "homeDir", "noCreateHome", "noLogInit", "noUserGroup", "primaryGroup",
                         "shell", "shouldExist", "system", "uid")  # fmt: skip


def check_filters(config: dict[str, Any], ctx: Context) -> None:
    """Errors for fields this openshift spec filters out entirely (Butane's FieldFilters, 4.14+), in the order
    its walk over the MachineConfig finds them; a filtered list is reported once, at the list."""
    if ctx.spec.openshift_minor < 14:
        return
    kargs = config.get("kernelArguments") or {}
    if kargs.get("shouldExist") or kargs.get("shouldNotExist"):
        _error(ctx, ("kernelArguments",), m.ERR_KERNEL_ARGUMENTS)
    passwd = config.get("passwd") or {}
    if passwd.get("groups"):
        _error(ctx, ("passwd", "groups"), m.ERR_GROUPS)
    user_node = ign.node(ctx.spec.ignition, "passwd.users[]")
    assert user_node is not None
    for i, user in enumerate(passwd.get("users") or []):
        for name in go_order(user_node):
            if name in _FILTERED_USER_FIELDS and user.get(name) is not None and user.get(name) != []:
                _error(ctx, ("passwd", "users", i, name), m.ERR_USER_FIELD)
    storage = config.get("storage") or {}
    if storage.get("directories"):
        _error(ctx, ("storage", "directories"), m.ERR_DIRECTORIES)
    for i, f in enumerate(storage.get("files") or []):
        if f.get("append"):
            _error(ctx, ("storage", "files", i, "append"), m.ERR_FILE_APPEND)
        if (f.get("contents") or {}).get("httpHeaders"):
            _error(ctx, ("storage", "files", i, "contents", "httpHeaders"), m.ERR_FILE_HEADERS)
    if storage.get("links"):
        _error(ctx, ("storage", "links"), m.ERR_LINKS)


# Butane's result.Spec field order (KernelArguments, Extensions, FIPS, KernelType): CheckForElidedFields walks
# the struct, so the raw-mode warnings come in this order, not in the alphabetical order of the output keys.
_SPEC_STRUCT_ORDER = (
    ("kernelArguments", "kernel_arguments"),
    ("extensions", "extensions"),
    ("fips", "fips"),
    ("kernelType", "kernel_type"),
)


def elided_warnings(fields: dict[str, Any], ctx: Context) -> None:
    """Raw mode: every `openshift` spec field that will not be written gets `field ignored in raw mode`."""
    for json_name, yaml_name in _SPEC_STRUCT_ORDER:
        if json_name in fields:
            ctx.problems.warn(("openshift", yaml_name), m.ERR_FIELD_ELIDED)


def machine_config(
    butane: dict[str, Any], ignition_json: dict[str, Any], fields: dict[str, Any]
) -> dict[str, Any]:
    """The MachineConfig document (JSON shape) wrapping an Ignition config."""
    meta = butane.get("metadata") or {}
    metadata: dict[str, Any] = {"name": meta.get("name", "")}
    if meta.get("labels"):
        metadata["labels"] = dict(meta["labels"])
    spec: dict[str, Any] = {"config": ignition_json}
    spec.update(fields)
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": spec}
