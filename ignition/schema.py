"""Per-version description of every field of the Ignition spec 3.0.0 ... 3.6.0 (+ 3.7.0-experimental).

The schema is the single source of truth the parser (JSON types, unknown keys), the validator (duplicate keys),
merge and translate walk. It mirrors Ignition's Go types (`config/v3_X/types/schema.go`), because Go's
`encoding/json` decides what a document means: a *pointer* field treats JSON `null`/absent as "unset", a
non-pointer field turns `null` into its zero value (`""`, `0`, `false`).

A field path is ``"storage.files[].contents.source"`` or a tuple such as ``("storage", "files", 0, "contents")``
(ints and ``"[]"`` both step into a list item). The shapes (`Node`, `Field`, list keys, key spaces) are in
ignition/schema_nodes.py.
"""

from __future__ import annotations

from functools import cache

from ignition.schema_nodes import (
    BOOLEAN,
    INTEGER,
    KEY_PARTITION,
    KEY_VALUE,
    KEYSPACE_KARGS,
    KEYSPACE_NODES,
    STRING,
    Field,
    Node,
    list_of,
    member,
    obj,
    strings,
    walk,
)
from ignition.versions import version_index


def _build(version: str) -> Node:
    """The tree of one version, written as the Go types read (conditions name the version that changed)."""
    v = version_index(version)
    V31, V32, V33, V34, V35 = (version_index(x) for x in ("3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0"))

    verification = obj("Verification", member("hash", STRING))
    header = obj("HTTPHeader", member("name", STRING, pointer=False), member("value", STRING))
    headers = list_of(header, "name", "types.HTTPHeaders")
    resource = obj(
        "Resource",
        member("compression", STRING),
        member("httpHeaders", headers),
        member("source", STRING),
        member("verification", verification),
    )
    if v < V31:
        config_ref = obj("ConfigReference", member("source", STRING), member("verification", verification))
        ca_ref = obj("CaReference", member("source", STRING, pointer=False), member("verification", verification))
        file_contents = obj(
            "FileContents", member("compression", STRING), member("source", STRING), member("verification", verification)
        )
        merge_item, replace, ca, contents = config_ref, config_ref, ca_ref, file_contents
    else:
        merge_item = replace = ca = contents = resource

    ignition = obj(
        "Ignition",
        member(
            "config",
            obj(
                "IgnitionConfig",
                member("merge", list_of(merge_item, "source", f"[]types.{merge_item.go}")),
                member("replace", replace),
            ),
        ),
        member(
            "proxy",
            obj(
                "Proxy",
                member("httpProxy", STRING),
                member("httpsProxy", STRING),
                member("noProxy", strings("NoProxyItem")),
            ),
        )
        if v >= V31
        else None,
        member(
            "security",
            obj(
                "Security",
                member("tls", obj("TLS", member("certificateAuthorities", list_of(ca, "source", f"[]types.{ca.go}")))),
            ),
        ),
        member("timeouts", obj("Timeouts", member("httpResponseHeaders", INTEGER), member("httpTotal", INTEGER))),
        member("version", STRING, pointer=False),
    )

    partition = obj(
        "Partition",
        member("guid", STRING),
        member("label", STRING),
        member("number", INTEGER, pointer=False),
        member("resize", BOOLEAN) if v >= V32 else None,
        member("shouldExist", BOOLEAN),
        member("sizeMiB", INTEGER),
        member("startMiB", INTEGER),
        member("typeGuid", STRING),
        member("wipePartitionEntry", BOOLEAN),
    )
    disk = obj(
        "Disk",
        member("device", STRING, pointer=False),
        member("partitions", list_of(partition, KEY_PARTITION, "[]types.Partition")),
        member("wipeTable", BOOLEAN),
    )
    owner_user = obj("NodeUser", member("id", INTEGER), member("name", STRING))
    owner_group = obj("NodeGroup", member("id", INTEGER), member("name", STRING))

    def node_fields() -> list[Field]:
        return [
            member("group", owner_group),
            member("overwrite", BOOLEAN),
            member("path", STRING, pointer=False),
            member("user", owner_user),
        ]

    file = obj(
        "File",
        *node_fields(),
        member("append", list_of(contents, None, f"[]types.{contents.go}")),
        member("contents", contents),
        member("mode", INTEGER),
    )
    directory = obj("Directory", *node_fields(), member("mode", INTEGER))
    link = obj(
        "Link", *node_fields(), member("hard", BOOLEAN), member("target", STRING, pointer=v >= V33)
    )
    filesystem = obj(
        "Filesystem",
        member("device", STRING, pointer=False),
        member("format", STRING),
        member("label", STRING),
        member("mountOptions", strings("MountOption", dedup=False)) if v >= V31 else None,
        member("options", strings("FilesystemOption", dedup=False)),
        member("path", STRING),
        member("uuid", STRING),
        member("wipeFilesystem", BOOLEAN),
    )
    raid = obj(
        "Raid",
        member("devices", strings("Device")),
        member("level", STRING, pointer=v >= V33),
        member("name", STRING, pointer=False),
        member("options", strings("RaidOption", dedup=False)),
        member("spares", INTEGER),
    )
    luks = None
    if v >= V32:
        tang = obj(
            "Tang",
            member("advertisement", STRING) if v >= V34 else None,
            member("thumbprint", STRING),
            member("url", STRING, pointer=False),
        )
        custom = obj(
            "ClevisCustom" if v >= V33 else "Custom",  # 3.2's *Custom, renamed in 3.3
            member("config", STRING, pointer=v >= V33),
            member("needsNetwork", BOOLEAN),
            member("pin", STRING, pointer=v >= V33),
        )
        clevis = obj(
            "Clevis",
            member("custom", custom),
            member("tang", list_of(tang, "url", "[]types.Tang")),
            member("threshold", INTEGER),
            member("tpm2", BOOLEAN),
        )
        luks = obj(
            "Luks",
            member("cex", obj("Cex", member("enabled", BOOLEAN))) if v >= V35 else None,
            member("clevis", clevis),
            member("device", STRING),
            member("discard", BOOLEAN) if v >= V34 else None,
            member("keyFile", resource),
            member("label", STRING),
            member("name", STRING, pointer=False),
            member("openOptions", strings("OpenOption")) if v >= V34 else None,
            member("options", strings("LuksOption", dedup=False)),
            member("uuid", STRING),
            member("wipeVolume", BOOLEAN),
        )
    storage = obj(
        "Storage",
        member("directories", list_of(directory, "path", "[]types.Directory", KEYSPACE_NODES)),
        member("disks", list_of(disk, "device", "[]types.Disk")),
        member("files", list_of(file, "path", "[]types.File", KEYSPACE_NODES)),
        member("filesystems", list_of(filesystem, "device", "[]types.Filesystem")),
        member("links", list_of(link, "path", "[]types.Link", KEYSPACE_NODES)),
        member("luks", list_of(luks, "name", "[]types.Luks")) if luks is not None else None,
        member("raid", list_of(raid, "name", "[]types.Raid")),
    )
    dropin = obj("Dropin", member("contents", STRING), member("name", STRING, pointer=False))
    unit = obj(
        "Unit",
        member("contents", STRING),
        member("dropins", list_of(dropin, "name", "[]types.Dropin")),
        member("enabled", BOOLEAN),
        member("mask", BOOLEAN),
        member("name", STRING, pointer=False),
    )
    user = obj(
        "PasswdUser",
        member("gecos", STRING),
        member("groups", strings("Group")),
        member("homeDir", STRING),
        member("name", STRING, pointer=False),
        member("noCreateHome", BOOLEAN),
        member("noLogInit", BOOLEAN),
        member("noUserGroup", BOOLEAN),
        member("passwordHash", STRING),
        member("primaryGroup", STRING),
        member("shell", STRING),
        member("shouldExist", BOOLEAN) if v >= V32 else None,
        member("sshAuthorizedKeys", strings("SSHAuthorizedKey")),
        member("system", BOOLEAN),
        member("uid", INTEGER),
    )
    group = obj(
        "PasswdGroup",
        member("gid", INTEGER),
        member("name", STRING, pointer=False),
        member("passwordHash", STRING),
        member("shouldExist", BOOLEAN) if v >= V32 else None,
        member("system", BOOLEAN),
    )
    kargs = None
    if v >= V33:
        kargs_list = list_of(Node("string", "types.KernelArgument"), KEY_VALUE, "[]types.KernelArgument", KEYSPACE_KARGS)
        kargs = obj("KernelArguments", member("shouldExist", kargs_list), member("shouldNotExist", kargs_list))
    return obj(
        "Config",
        member("ignition", ignition),
        member("kernelArguments", kargs) if kargs is not None else None,
        member(
            "passwd",
            obj(
                "Passwd",
                member("groups", list_of(group, "name", "[]types.PasswdGroup")),
                member("users", list_of(user, "name", "[]types.PasswdUser")),
            ),
        ),
        member("storage", storage),
        member("systemd", obj("Systemd", member("units", list_of(unit, "name", "[]types.Unit")))),
    )


@cache
def root(version: str) -> Node:
    """The schema tree (the `Config` object) of an accepted version; KeyError for others."""
    return _build(version)


def _split(path: str | tuple[str | int, ...]) -> list[str | int]:
    if isinstance(path, tuple):
        return list(path)
    out: list[str | int] = []
    for part in path.split("."):
        if not part:
            continue
        while part.endswith("[]"):
            part = part[:-2]
            if part:
                out.append(part)
            part = ""
            out.append("[]")
        if part:
            out.append(part)
    return out


def node(version: str, path: str | tuple[str | int, ...]) -> Node | None:
    """The node at a field path in `version` (see the module docstring), or None when the field is absent."""
    current: Node | None = root(version)
    for step in _split(path):
        if current is None:
            return None
        if isinstance(step, int) or step == "[]":
            current = current.item if current.kind == "list" else None
        else:
            member = current.fields.get(step) if current.kind == "object" else None
            current = member.node if member else None
    return current


@cache
def fields(version: str) -> frozenset[str]:
    """Every field path of `version`, objects and lists included ("storage", "storage.files[].path", ...)."""
    return frozenset(path for path, _ in walk(root(version)))
