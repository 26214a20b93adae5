"""Butane's own checks, in YAML space (before translation): decimal-looking modes, embedded Ignition configs,
quadlet names, the boot device and OpenShift's CEX and FCOS root rules (Butane config/*/validate.go).

They run over the Butane document's values (butane/transpile.py calls `validate`); the copy into
Ignition's shape is butane/translate.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

from butane import messages as m
from butane.context import RESOURCE_TYPES, butane_type
from butane.report import Problems, YPath
from butane.schema import BNode
from butane.variants import parse_semver
from ignition.decode import json_kind
from ignition.go_json_syntax import syntax_error
from ignition.validate import validate_dict


def check_decimal_mode(mode: int, directory: bool) -> bool:
    """True when `mode` looks like octal digits written in decimal (`644`), as Butane warns."""
    if mode < 0 or mode > 7777:
        return False
    corrected = 0
    for divisor in (1000, 100, 10, 1):
        digit = (mode // divisor) % 10
        if digit > 7:
            return False
        corrected = (corrected << 3) | digit
    return not _typical_mode(mode, directory) and _typical_mode(corrected, directory)


def _typical_mode(mode: int, directory: bool) -> bool:
    if mode == 0:
        return True
    had_r = had_w = had_x = False
    for perm in (mode & 0o7, (mode & 0o70) >> 3, (mode & 0o700) >> 6):
        r, w, x = bool(perm & 4), bool(perm & 2), bool(perm & 1)
        if (not r and had_r) or (not w and had_w) or (not x and had_x):
            return False
        if x and had_r and not had_x:
            return False
        if (w or x) and not r:
            return False
        had_r, had_w, had_x = had_r or r, had_w or w, had_x or x
    if not had_r:
        return False
    if directory:
        if not had_x or mode & 0o4000:
            return False
        if mode & 0o3000 and not had_w:
            return False
    else:
        if mode & 0o6000:
            if not had_x or mode & 2:
                return False
        if mode & 0o1000:
            return False
    return True


def _embedded_parse_error(raw: bytes, config: Any, version: str) -> str | None:
    """Go's json.Unmarshal error for an embedded config read into this spec's types.Config, or None."""
    if config is _UNPARSABLE:
        found = syntax_error(raw)
        return found[0] if found is not None else "unexpected end of JSON input"
    if config is None:  # `null` unmarshals into a struct as a no-op
        return None
    if not isinstance(config, dict):
        return f"json: cannot unmarshal {json_kind(config)} into Go value of type types.Config"
    for entry in validate_dict(config, version=version).entries:
        if entry.code == "json-type":
            return entry.message
    return None


_UNPARSABLE = object()


def check_embedded_config(
    raw: bytes, version: str, path: YPath, field: str, problems: Problems, *, translated: bool = False
) -> None:
    """A merged/replaced Ignition config given inline (Resource.Validate) or locally (translateResource, base
    v0_7+) is checked as Butane's ValidateIgnitionConfig does (Butane 0.24+).

    It is first unmarshalled into this spec's types.Config: a JSON or type error is reported at the config's
    root (plus `config is not valid` at the field, for inline). An `unsupported config version` skips the rest
    with a warning; any other version problem does not. Ignition's own report is then merged as it comes: for
    inline, Resource.Validate merges it without a prefix, so its paths are the embedded config's own
    (`$.storage.files.0.path`); for local, the translator prefixes it with the resource's path."""
    prefix: YPath = path if translated else ()
    try:
        config: Any = json.loads(raw)
    except ValueError:
        config = _UNPARSABLE
    parse_error = _embedded_parse_error(raw, config, version)
    if parse_error is not None:
        problems.error(prefix, parse_error)
        if not translated:
            problems.error(path + (field,), "config is not valid")
        return
    ign = config.get("ignition") if isinstance(config, dict) else None
    embedded = ign.get("version") if isinstance(ign, dict) else None
    canonical = parse_semver(embedded) if isinstance(embedded, str) else None
    if canonical is not None and canonical != parse_semver(version):
        version_path = path + ("version",) if not translated else path + (field, "version")
        problems.warn(version_path, m.ERR_UNKNOWN_IGNITION_VERSION)
        return
    entries = list(validate_dict(config or {}, version=version).entries)
    if canonical is None:  # Ignition.Validate: ErrInvalidVersion, reported first, and validation goes on
        problems.error(prefix + ("ignition", "version"), "invalid config version (couldn't parse)")
    for entry in entries:
        where = prefix + tuple(entry.path)
        if entry.severity == "error":
            problems.error(where, entry.message, code=entry.code)
        else:
            problems.warn(where, entry.message, code=entry.code)


def validate(
    value: Any, node: BNode, path: YPath, problems: Problems, spec_version: str | None = None
) -> None:
    """Butane's Validate() methods over the whole document, parents before children, in field order."""
    if node.kind == "list" and isinstance(value, list):
        assert node.item is not None
        for i, item in enumerate(value):
            validate(item, node.item, path + (i,), problems, spec_version)
        return
    if node.kind != "object" or not isinstance(value, dict):
        return
    kind = butane_type(node)
    if kind in RESOURCE_TYPES:
        sources, last = 0, ""
        for name in ("local", "inline", "source"):
            if name in value:
                sources, last = sources + 1, name
        if sources > 1:
            # Resource.Validate (base v0_2+) names the last source set and stops there: an embedded config
            # given alongside another source is not checked. FileContents.Validate (base v0_1, fcos 1.0)
            # names `inline`, the only sugar it has.
            problems.error(path + ("inline" if kind == "FileContents" else last,), m.ERR_TOO_MANY_SOURCES)
        elif path[:2] == ("ignition", "config") and last == "inline" and spec_version is not None:
            check_embedded_config(value["inline"].encode("utf-8", "surrogateescape"), spec_version, path, "inline",
                                  problems)  # fmt: skip
    elif kind in ("File", "Directory") and isinstance(value.get("mode"), int):
        if check_decimal_mode(value["mode"], kind == "Directory"):
            problems.warn(path + ("mode",), m.ERR_DECIMAL_MODE)
    elif kind == "Tree" and not value.get("local"):
        problems.error(path, m.ERR_TREE_NO_LOCAL)
    elif kind in ("Unit", "Dropin") and "contents" in value and "contents_local" in value:
        problems.error(path + ("contents_local",), m.ERR_TOO_MANY_SYSTEMD_SOURCES)
    elif kind == "Quadlet":
        _validate_quadlet(value, path, problems)
    elif kind == "Filesystem" and value.get("with_mount_unit") is True:
        if not value.get("format"):
            problems.error(path + ("format",), m.ERR_MOUNT_UNIT_NO_FORMAT)
        elif (value["format"] != "swap" or not _swap_units(node)) and not value.get("path"):
            problems.error(path + ("path",), m.ERR_MOUNT_UNIT_NO_PATH)
    elif kind == "Metadata":
        if not value.get("name"):
            problems.error(path + ("name",), m.ERR_NAME_REQUIRED)
        if not (value.get("labels") or {}).get(m.ROLE_LABEL):
            problems.error(path + ("labels",), m.ERR_ROLE_REQUIRED)
    elif kind == "OpenShift" and value.get("kernel_type", "") not in ("", "default", "realtime"):
        problems.error(path + ("kernel_type",), m.ERR_INVALID_KERNEL_TYPE)
    elif kind == "BootDevice":
        _validate_boot_device(value, node, path, problems)
    elif kind == "GrubUser":
        if not value.get("name"):
            problems.error(path + ("name",), m.ERR_GRUB_USER_NAME)
        if not value.get("password_hash"):
            problems.error(path + ("password_hash",), m.ERR_GRUB_PASSWORD)
    elif kind == "Config" and "boot_device" in node.fields:
        if _minor(node, "metadata") >= 19:
            _validate_openshift_cex(value, path, problems, _minor(node, "metadata"))
        _validate_fcos_root(value, node, path, problems)
    for key, member in node.fields.items():
        if key in value:
            validate(value[key], member.node, path + (key,), problems, spec_version)


QUADLET_EXTENSIONS = (".container", ".volume", ".network", ".kube", ".image", ".build", ".pod", ".artifact")


def quadlet_template(name: str) -> str | None:
    """The template a quadlet instance name links to (`sleepy@100.container` -> `sleepy@.container`), or None.

    Butane's quadletBaseTemplate: the first `@` and the first `.` of the name, whatever their order; an `@`
    right before the `.` is the template itself."""
    at, dot = name.find("@"), name.find(".")
    if at == -1 or at + 1 == dot:
        return None
    return f"{name[:at]}@.{name[dot + 1 :]}"


def _validate_quadlet(value: dict[str, Any], path: YPath, problems: Problems) -> None:
    """Butane's Quadlet.Validate (base/v0_8_exp/validate.go), in its order: an extension podman-systemd.unit
    does not know is the only error reported; a template instance (it becomes a link) refuses `contents` and
    `contents_local`, each at its own key; any other quadlet takes at most one of the two."""
    name = value.get("name", "")
    if not name.endswith(QUADLET_EXTENSIONS):
        problems.error(path + ("name",), m.ERR_QUADLET_BAD_EXTENSION)
        return
    if quadlet_template(name) is not None:
        for key in ("contents", "contents_local"):
            if key in value:
                problems.error(path + (key,), m.ERR_TEMPLATE_INSTANCE_CONTENTS)
    elif "contents" in value and "contents_local" in value:
        problems.error(path + ("contents_local",), m.ERR_TOO_MANY_SYSTEMD_SOURCES)


def _swap_units(filesystem: BNode) -> bool:
    """Swap units exist from base v0_4 (fcos 1.4): their Filesystem schema has `format: none`'s spec 3.3."""
    return filesystem.go.startswith("v0_") and int(filesystem.go.split(".")[0][3:]) >= 4


_DASD = re.compile(r"/dev/dasd[a-z]$")
_SD = re.compile(r"/dev/sd[a-z]$")
_MOUNTPOINTS = re.compile(r"^/(etc|var)(/|$)")
ROOT_DISK = "/dev/disk/by-id/coreos-boot-disk"


def _validate_boot_device(value: dict[str, Any], node: BNode, path: YPath, problems: Problems) -> None:
    """Butane's BootDevice.Validate (fcos v1_3..v1_7), in its order: mirror without layout, the layout switch,
    s390x mirroring, CEX, then the mirror's own check; BootDeviceLuks.Validate (v1_7+) runs after, when the
    walker reaches `luks`. Every layout error is reported at `layout` (s390x layout names are values, not paths)."""
    layout = value.get("layout")
    luks = value.get("luks") or {}
    mirrors = (value.get("mirror") or {}).get("devices") or []
    s390 = "device" in node.fields["luks"].node.fields  # fcos 1.6+ knows the s390x layouts
    minor = _minor_of(node)
    if mirrors and layout is None:
        # A warning in the stable specs that had boot_device before the check existed; an error from v1_7.
        if minor >= 7:
            problems.error(path + ("mirror",), m.ERR_MIRROR_REQUIRES_LAYOUT)
        else:
            problems.warn(path + ("mirror",), m.ERR_MIRROR_REQUIRES_LAYOUT)
    if layout is not None:
        if layout in ("aarch64", "ppc64le", "x86_64"):
            pass
        elif s390 and layout in ("s390x-eckd", "s390x-zfcp"):
            pattern = _DASD if layout == "s390x-eckd" else _SD
            if not luks.get("device"):
                problems.error(path + ("layout",), m.ERR_NO_LUKS_DEVICE)
            elif not pattern.search(luks["device"]):
                problems.error(path + ("layout",), m.ERR_LUKS_DEVICE_NAME)
        elif s390 and layout == "s390x-virt":
            pass
        else:
            problems.error(path + ("layout",), m.ERR_UNKNOWN_LAYOUT if s390 else m.ERR_UNKNOWN_LAYOUT_LEGACY)
        if s390 and layout.startswith("s390x") and mirrors:
            problems.error(path + ("layout",), m.ERR_MIRROR_NOT_SUPPORTED)
    cex = (luks.get("cex") or {}).get("enabled") is True
    clevis = luks.get("tpm2") is True or bool(luks.get("tang"))
    if s390 and cex:
        if layout is None:
            problems.error(path + ("luks", "cex"), m.ERR_CEX_ARCHITECTURE)
        elif not layout.startswith("s390x"):
            problems.error(path + ("layout",), m.ERR_CEX_ARCHITECTURE)
        if clevis:
            problems.error(path + ("luks",), m.ERR_CEX_WITH_CLEVIS)
    if len(mirrors) == 1:
        problems.error(path + ("mirror", "devices"), m.ERR_TOO_FEW_MIRRORS)
    # BootDeviceLuks.Validate counts a tang entry only when it differs from the zero Tang struct.
    tang_set = any(_tang_set(t) for t in luks.get("tang") or [])
    if minor >= 7 and luks.get("device") and not (cex or tang_set or luks.get("tpm2") is True):
        # BootDeviceLuks.Validate appends "luks" to its own path.
        problems.error(path + ("luks", "luks"), m.ERR_NO_LUKS_METHOD)


_CEX_KARG = "rd.luks.key=/etc/luks/cex.key"


def _validate_openshift_cex(value: dict[str, Any], path: YPath, problems: Problems, minor: int) -> None:
    """openshift 4.19+ Config.Validate: CEX on the boot device, or on a storage.luks volume named root, needs
    the key-file kernel argument in openshift.kernel_arguments. Through 4.22 the two checks are independent,
    so both set give the error twice (config/openshift/v4_21/validate.go); 4.23.0-experimental folds them
    into one flag and reports it once (config/openshift/v4_23_exp/validate.go, Config.Validate)."""
    kargs = (value.get("openshift") or {}).get("kernel_arguments") or []
    if _CEX_KARG in kargs:
        return
    boot_luks = (value.get("boot_device") or {}).get("luks") or {}
    boot_cex = ((boot_luks.get("cex") or {}).get("enabled")) is True
    luks = (value.get("storage") or {}).get("luks") or []
    root_cex = any(isinstance(v, dict) and v.get("name") == "root" and (v.get("cex") or {}).get("enabled") is True
                   for v in luks)  # fmt: skip
    found = [boot_cex or root_cex] if minor >= 23 else [boot_cex, root_cex]
    for _ in filter(None, found):
        problems.error(path + ("openshift", "kernel_arguments"), m.ERR_MISSING_CEX_KARG)


def _tang_set(entry: Any) -> bool:
    """Whether a tang entry is not Go's zero Tang{} (url "" is the zero URL; the other fields are pointers)."""
    if not isinstance(entry, dict):
        return False
    return bool(entry.get("url")) or any(entry.get(k) is not None for k in ("thumbprint", "advertisement"))


def _minor(node: BNode, field: str) -> int:
    """The spec minor encoded in a section's Go package name (`v1_6.BootDevice` -> 6, `v4_14.Metadata` -> 14)."""
    return int(node.fields[field].node.go.split(".")[0].split("_")[1]) if field in node.fields else 0


def _minor_of(node: BNode) -> int:
    return int(node.go.split(".")[0].split("_")[1])


def _validate_fcos_root(value: dict[str, Any], node: BNode, path: YPath, problems: Problems) -> None:
    """Checks of the whole fcos config (fcos 1.6+, openshift 4.14+): partitions reused by label outside the
    boot disk, mirrored disks and wiped tables; mount units outside /etc and /var."""
    if _minor(node, "boot_device") < 6 and _minor(node, "metadata") < 14:
        return
    storage = value.get("storage") or {}
    mirrored = set(((value.get("boot_device") or {}).get("mirror") or {}).get("devices") or [])
    for i, disk in enumerate(storage.get("disks") or []):
        device = disk.get("device", "")
        if device != ROOT_DISK and device not in mirrored and disk.get("wipe_table") is not True:
            for p, part in enumerate(disk.get("partitions") or []):
                if not part.get("number") and part.get("label") is not None:
                    problems.warn(
                        path + ("storage", "disks", i, "partitions", p, "number"), m.ERR_REUSE_BY_LABEL
                    )
    for i, fs in enumerate(storage.get("filesystems") or []):
        mount = fs.get("path")
        if mount is not None and not _MOUNTPOINTS.match(mount) and fs.get("with_mount_unit") is True:
            problems.error(path + ("storage", "filesystems", i, "path"), m.ERR_MOUNT_POINT_FORBIDDEN)
