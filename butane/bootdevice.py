"""fcos `boot_device` (1.3+) and `grub` (1.5+): generated storage merged under the user's config.

Sugar step after the base translation (coreos/butane `config/fcos/v1_*/translate.go`). `boot_device.mirror` partitions every
listed disk like the OS image (BIOS-BOOT or PReP, ESP, boot, root; `wipeTable: true`), builds RAID1
`md-boot` (`--metadata=1.0`) and `md-root`, vfat ESPs and an ext4 `boot` filesystem on `/dev/md/md-boot`;
`boot_device.luks` encrypts root (`luks-root`, wiped) with Clevis (tpm2/tang/threshold) or CEX; the root
filesystem is xfs `root` on `/dev/mapper/root` (LUKS) or `/dev/md/md-root`. `grub.users` appends a
superusers/password_pbkdf2 `user.cfg` and mounts `/boot`. The generated config is an Ignition *parent*
of the user's (Butane's MergeTranslatedConfigs), so explicit user entries override generated fields.
Afterwards partitions with reserved labels but the wrong number are warned about.
"""

from __future__ import annotations

from typing import Any

from butane import messages as m
from butane.context import Context
from butane.files import make_data_url

RESERVED_GUID = "8DA63339-0007-60C0-C436-083AC8230908"
BIOS_GUID = "21686148-6449-6E6F-744E-656564454649"
PREP_GUID = "9E1A2D38-C612-4316-AA26-8B49521E5A8B"
ESP_GUID = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
RESERVED_MIB, BIOS_MIB, PREP_MIB, ESP_MIB, BOOT_MIB = 1, 1, 4, 127, 384
_RESERVED_NUMBERS = {"BIOS-BOOT": 1, "PowerPC-PReP-boot": 1, "EFI-SYSTEM": 2, "boot": 3, "root": 4}


def _part(label: str, size: int | None, guid: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"label": label}
    if size is not None:
        out["sizeMiB"] = size
    if guid is not None:
        out["typeGuid"] = guid
    return out


def render_boot_device(boot: dict[str, Any], src: Context) -> dict[str, Any] | None:
    """The storage Butane generates for `boot_device` (sources recorded in `src`), or None when unused."""
    luks_in = boot.get("luks") or {}
    want_luks = (
        luks_in.get("tpm2") is True
        or bool(luks_in.get("tang"))
        or (luks_in.get("cex") or {}).get("enabled") is True
    )
    devices = (boot.get("mirror") or {}).get("devices") or []
    if not want_luks and not devices:
        return None
    layout = boot.get("layout")
    bios = efi = prep = False
    if layout in (None, "x86_64"):
        bios = efi = True
    elif layout == "aarch64":
        efi = True
    elif layout == "ppc64le":
        prep = True
    storage: dict[str, Any] = {}
    disks: list[dict[str, Any]] = []
    filesystems: list[dict[str, Any]] = []
    if devices:
        for i, device in enumerate(devices):
            n = len(disks) + 1
            parts = []
            if bios:
                parts.append(_part(f"bios-{n}", BIOS_MIB, BIOS_GUID))
            elif prep:
                parts.append(_part(f"prep-{n}", PREP_MIB, PREP_GUID))
            else:
                parts.append(_part(f"reserved-{n}", RESERVED_MIB, RESERVED_GUID))
            if efi:
                parts.append(_part(f"esp-{n}", ESP_MIB, ESP_GUID))
            else:
                parts.append(_part(f"reserved-{n}", RESERVED_MIB, RESERVED_GUID))
            parts.append(_part(f"boot-{n}", BOOT_MIB, None))
            parts.append(_part(f"root-{n}", None, None))
            src.common(("storage", "disks", len(disks)), ("boot_device", "mirror", "devices", i))
            disks.append({"device": device, "partitions": parts, "wipeTable": True})
            if efi:
                src.common(
                    ("storage", "filesystems", len(filesystems)), ("boot_device", "mirror", "devices", i)
                )
                filesystems.append(
                    {
                        "device": f"/dev/disk/by-partlabel/esp-{n}",
                        "format": "vfat",
                        "label": f"esp-{n}",
                        "wipeFilesystem": True,
                    }
                )
        count = len(disks)
        storage["raid"] = [
            {
                "devices": [f"/dev/disk/by-partlabel/boot-{k + 1}" for k in range(count)],
                "level": "raid1",
                "name": "md-boot",
                "options": ["--metadata=1.0"],
            },
            {
                "devices": [f"/dev/disk/by-partlabel/root-{k + 1}" for k in range(count)],
                "level": "raid1",
                "name": "md-root",
            },
        ]
        src.common(("storage", "raid"), ("boot_device", "mirror"))
        src.common(("storage", "filesystems", len(filesystems)), ("boot_device", "mirror"))
        filesystems.append(
            {"device": "/dev/md/md-boot", "format": "ext4", "label": "boot", "wipeFilesystem": True}
        )
    if want_luks:
        if layout == "s390x-eckd":
            device = luks_in.get("device", "") + "2"
        elif layout == "s390x-zfcp":
            device = luks_in.get("device", "") + "4"
        elif devices:
            device = "/dev/md/md-root"
        else:
            device = "/dev/disk/by-partlabel/root"
        luks: dict[str, Any] = {}
        if (luks_in.get("cex") or {}).get("enabled") is True:
            luks["cex"] = {"enabled": True}
        else:
            clevis = {k: luks_in[k] for k in ("tang", "threshold", "tpm2") if k in luks_in}
            if clevis:
                luks["clevis"] = clevis
        luks["device"] = device
        if "discard" in luks_in:
            luks["discard"] = luks_in["discard"]
        luks.update({"label": "luks-root", "name": "root", "wipeVolume": True})
        storage["luks"] = [luks]
        src.common(("storage", "luks"), ("boot_device", "luks"))
        for key in ("tang", "threshold", "tpm2"):
            src.translated(("storage", "luks", 0, "clevis", key), ("boot_device", "luks", key))
    root_device = "/dev/mapper/root" if want_luks else "/dev/md/md-root"
    src.common(("storage", "filesystems", len(filesystems)), ("boot_device",))
    filesystems.append({"device": root_device, "format": "xfs", "label": "root", "wipeFilesystem": True})
    if disks:
        storage["disks"] = disks
    storage["filesystems"] = filesystems
    src.common(("storage",), ("boot_device",))
    return {"storage": storage}


def grub_config(users: list[dict[str, Any]]) -> str:
    """The `user.cfg` Butane writes for `grub.users`."""
    names = " ".join(u.get("name", "") for u in users)
    commands = "\n".join(f"password_pbkdf2 {u.get('name', '')} {u.get('password_hash', '')}" for u in users)
    return f'# Generated by Butane\n\nset superusers="{names}"\n' + commands + "\n"


def render_grub(users: list[dict[str, Any]], ctx: Context, src: Context) -> dict[str, Any] | None:
    """The `/boot` filesystem and the appended `user.cfg` for `grub.users`, or None without users."""
    if not users:
        return None
    url, compression = make_data_url(grub_config(users).encode(), None, ctx.allow_compression)
    resource: dict[str, Any] = {"source": url}
    if compression is not None:
        resource["compression"] = compression
    src.common(("storage",), ("grub", "users"))
    return {
        "storage": {
            "filesystems": [{"device": "/dev/disk/by-label/boot", "format": "ext4", "path": "/boot"}],
            "files": [{"path": "/boot/grub2/user.cfg", "append": [resource]}],
        }
    }


def partition_warnings(config: dict[str, Any], ctx: Context) -> None:
    """Butane's per-partition checks after boot_device (fcos 1.3+ ToIgn3_xUnvalidated), in its order.

    A partition labelled `root` that fills the free space (no or zero size) is constrained when any *other*
    partition of the disk is auto-positioned (no or zero start): Butane 0.29 looks at every other partition, not
    only the later ones. A smaller explicit size than 8 GiB is too small; that warning's path names the YAML
    field `size_mib` directly, so it keeps the output's indexes. Then, on disks whose table is not wiped, a
    reserved label with another partition number is warned about."""
    for i, disk in enumerate((config.get("storage") or {}).get("disks") or []):
        parts = disk.get("partitions") or []
        for p, part in enumerate(parts):
            label = part.get("label")
            if label is None:
                continue
            if label == "root":
                if not part.get("sizeMiB"):
                    if any(not other.get("startMiB") for o, other in enumerate(parts) if o != p):
                        ctx.problems.warn(
                            ctx.to_yaml(("storage", "disks", i, "partitions", p, "label")),
                            m.ERR_ROOT_CONSTRAINED,
                        )
                elif part["sizeMiB"] < 8192:
                    ctx.problems.warn(("storage", "disks", i, "partitions", p, "size_mib"), m.ERR_ROOT_TOO_SMALL)
            if disk.get("wipeTable") is not True and label in _RESERVED_NUMBERS:
                if part.get("number", 0) != _RESERVED_NUMBERS[label]:
                    ctx.problems.warn(
                        ctx.to_yaml(("storage", "disks", i, "partitions", p, "label")),
                        m.ERR_WRONG_PARTITION_NUMBER,
                    )


def apply(butane: dict[str, Any], config: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """boot_device, the partition-number warnings, then grub, as fcos 1.3+ translates them."""
    if ctx.spec.fcos_minor < 3:
        return config
    src = Context(ctx.spec, ctx.files_dir)
    rendered = render_boot_device(butane.get("boot_device") or {}, src)
    if rendered is not None:
        ctx.parent_sources = src
        config = ctx.merge_under(rendered, config)
    partition_warnings(config, ctx)
    users = (butane.get("grub") or {}).get("users") or []
    src = Context(ctx.spec, ctx.files_dir)
    rendered = render_grub(users, ctx, src)
    if rendered is not None:
        ctx.parent_sources = src
        config = ctx.merge_under(rendered, config)
    return config
