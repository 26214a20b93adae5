"""Per-version description of every field of the Ignition spec 3.0.0 ... 3.6.0 (+ 3.7.0-experimental).

The schema is the single source of truth the parser (JSON types, unknown keys), the validator (duplicate keys),
merge and translate walk. It mirrors Ignition's Go types (`config/v3_X/types/schema.go`), because Go's
`encoding/json` decides what a document means: a *pointer* field treats JSON `null`/absent as "unset", a
non-pointer field turns `null` into its zero value (`""`, `0`, `false`).

API
---
``root(version) -> Node``
    the tree for one version; the root is the `Config` object.
``node(version, path) -> Node | None``
    the node at a field path: ``"storage.files[].contents.source"`` or a tuple path such as
    ``("storage", "files", 0, "contents")`` (ints and ``"[]"`` both step into a list item). ``None`` if absent.
``fields(version) -> frozenset[str]``
    every field path of that version, objects and lists included: ``"storage"``, ``"storage.files"``,
    ``"storage.files[].path"``, ``"storage.files[].append[].source"``, ...
``introduced(path) -> str | None``
    the first version whose `fields()` holds `path`.
``Node``
    ``kind``: ``"object" | "list" | "string" | "integer" | "boolean"``;
    ``fields``: name -> `Field` (objects); ``item``: the item `Node` (lists);
    ``key``: how a list is deduplicated and merged (see below); ``keyspace``: lists sharing one key space;
    ``go``: the Go type name, used in Go-style type errors; ``match(json_key)``: the field a JSON key sets,
    with Go's case-insensitive matching (exact name first).
``Field``
    ``name``, ``node``, ``pointer`` (scalars: a Go pointer, so null/absent means unset rather than the zero
    value; object fields are always True here -- Go's null on a struct value is a no-op, which decode.py applies).

List keys (``Node.key`` on a list node; Ignition's `Key()` and `IgnoreDuplicates()`):
    ``"<field>"``   items are objects keyed by that field (`path`, `device`, `name`, `source`, `url`);
    ``"$value"``    items are strings keyed by their own value;
    ``"$partition"``  `number:N` when number != 0, else `label:<label>`, else `""`;
    ``None``        not deduplicated, concatenated on merge (`append`, `options`, `mountOptions`).
Shared key spaces (``Node.keyspace``): ``"storage.nodes"`` (files, directories, links by path) and
``"kernelArguments"`` (shouldExist, shouldNotExist).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType

from ignition.versions import ACCEPTED_VERSIONS, version_index

KEY_VALUE = "$value"
KEY_PARTITION = "$partition"
KEYSPACE_NODES = "storage.nodes"
KEYSPACE_KARGS = "kernelArguments"


def _fold(name: str) -> str:
    """Go's simple case folding for JSON key matching (`ſ` folds to `s`, the Kelvin sign to `k`)."""
    return name.lower().replace("\u017f", "s").replace("\u212a", "k")


@dataclass(frozen=True, eq=False)
class Field:
    """One named member of an object node."""

    name: str
    node: Node
    pointer: bool = True


@dataclass(frozen=True, eq=False)
class Node:
    """A JSON value's expected shape in one spec version."""

    kind: str
    go: str
    fields: Mapping[str, Field] = field(default_factory=lambda: MappingProxyType({}))
    item: Node | None = None
    key: str | None = None
    keyspace: str | None = None
    _folded: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def match(self, json_key: str) -> str | None:
        """Field name a JSON object key sets (Go's `encoding/json`: exact match, else case-insensitive)."""
        if json_key in self.fields:
            return json_key
        return self._folded.get(_fold(json_key))

    @property
    def is_scalar(self) -> bool:
        """True for string, integer and boolean nodes."""
        return self.kind in ("string", "integer", "boolean")


STRING = Node("string", "string")
INTEGER = Node("integer", "int")
BOOLEAN = Node("boolean", "bool")


def _obj(go: str, *members: Field | None) -> Node:
    present = {m.name: m for m in members if m is not None}
    return Node(
        "object",
        go,
        fields=MappingProxyType(present),
        _folded=MappingProxyType({_fold(n): n for n in present}),
    )


def _list(item: Node, key: str | None, go: str, keyspace: str | None = None) -> Node:
    return Node("list", go, item=item, key=key, keyspace=keyspace)


def _f(name: str, node: Node, pointer: bool = True) -> Field:
    return Field(name, node, pointer)


def _strings(go: str, dedup: bool = True) -> Node:
    """A list of a named Go string type: Go's type errors name the item type (`of type types.Device`)."""
    return _list(Node("string", f"types.{go}"), KEY_VALUE if dedup else None, f"[]types.{go}")


def _build(version: str) -> Node:
    """The tree of one version, written as the Go types read (conditions name the version that changed)."""
    v = version_index(version)
    V31, V32, V33, V34, V35 = (version_index(x) for x in ("3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0"))

    verification = _obj("Verification", _f("hash", STRING))
    header = _obj("HTTPHeader", _f("name", STRING, pointer=False), _f("value", STRING))
    headers = _list(header, "name", "types.HTTPHeaders")
    resource = _obj(
        "Resource",
        _f("compression", STRING),
        _f("httpHeaders", headers),
        _f("source", STRING),
        _f("verification", verification),
    )
    if v < V31:
        config_ref = _obj("ConfigReference", _f("source", STRING), _f("verification", verification))
        ca_ref = _obj("CaReference", _f("source", STRING, pointer=False), _f("verification", verification))
        file_contents = _obj(
            "FileContents", _f("compression", STRING), _f("source", STRING), _f("verification", verification)
        )
        merge_item, replace, ca, contents = config_ref, config_ref, ca_ref, file_contents
    else:
        merge_item = replace = ca = contents = resource

    ignition = _obj(
        "Ignition",
        _f(
            "config",
            _obj(
                "IgnitionConfig",
                _f("merge", _list(merge_item, "source", f"[]types.{merge_item.go}")),
                _f("replace", replace),
            ),
        ),
        _f(
            "proxy",
            _obj(
                "Proxy",
                _f("httpProxy", STRING),
                _f("httpsProxy", STRING),
                _f("noProxy", _strings("NoProxyItem")),
            ),
        )
        if v >= V31
        else None,
        _f(
            "security",
            _obj(
                "Security",
                _f("tls", _obj("TLS", _f("certificateAuthorities", _list(ca, "source", f"[]types.{ca.go}")))),
            ),
        ),
        _f("timeouts", _obj("Timeouts", _f("httpResponseHeaders", INTEGER), _f("httpTotal", INTEGER))),
        _f("version", STRING, pointer=False),
    )

    partition = _obj(
        "Partition",
        _f("guid", STRING),
        _f("label", STRING),
        _f("number", INTEGER, pointer=False),
        _f("resize", BOOLEAN) if v >= V32 else None,
        _f("shouldExist", BOOLEAN),
        _f("sizeMiB", INTEGER),
        _f("startMiB", INTEGER),
        _f("typeGuid", STRING),
        _f("wipePartitionEntry", BOOLEAN),
    )
    disk = _obj(
        "Disk",
        _f("device", STRING, pointer=False),
        _f("partitions", _list(partition, KEY_PARTITION, "[]types.Partition")),
        _f("wipeTable", BOOLEAN),
    )
    owner_user = _obj("NodeUser", _f("id", INTEGER), _f("name", STRING))
    owner_group = _obj("NodeGroup", _f("id", INTEGER), _f("name", STRING))

    def node_fields() -> list[Field]:
        return [
            _f("group", owner_group),
            _f("overwrite", BOOLEAN),
            _f("path", STRING, pointer=False),
            _f("user", owner_user),
        ]

    file = _obj(
        "File",
        *node_fields(),
        _f("append", _list(contents, None, f"[]types.{contents.go}")),
        _f("contents", contents),
        _f("mode", INTEGER),
    )
    directory = _obj("Directory", *node_fields(), _f("mode", INTEGER))
    link = _obj(
        "Link", *node_fields(), _f("hard", BOOLEAN), _f("target", STRING, pointer=v >= V33)
    )
    filesystem = _obj(
        "Filesystem",
        _f("device", STRING, pointer=False),
        _f("format", STRING),
        _f("label", STRING),
        _f("mountOptions", _strings("MountOption", dedup=False)) if v >= V31 else None,
        _f("options", _strings("FilesystemOption", dedup=False)),
        _f("path", STRING),
        _f("uuid", STRING),
        _f("wipeFilesystem", BOOLEAN),
    )
    raid = _obj(
        "Raid",
        _f("devices", _strings("Device")),
        _f("level", STRING, pointer=v >= V33),
        _f("name", STRING, pointer=False),
        _f("options", _strings("RaidOption", dedup=False)),
        _f("spares", INTEGER),
    )
    luks = None
    if v >= V32:
        tang = _obj(
            "Tang",
            _f("advertisement", STRING) if v >= V34 else None,
            _f("thumbprint", STRING),
            _f("url", STRING, pointer=False),
        )
        custom = _obj(
            "ClevisCustom" if v >= V33 else "Custom",  # 3.2's *Custom, renamed in 3.3
            _f("config", STRING, pointer=v >= V33),
            _f("needsNetwork", BOOLEAN),
            _f("pin", STRING, pointer=v >= V33),
        )
        clevis = _obj(
            "Clevis",
            _f("custom", custom),
            _f("tang", _list(tang, "url", "[]types.Tang")),
            _f("threshold", INTEGER),
            _f("tpm2", BOOLEAN),
        )
        luks = _obj(
            "Luks",
            _f("cex", _obj("Cex", _f("enabled", BOOLEAN))) if v >= V35 else None,
            _f("clevis", clevis),
            _f("device", STRING),
            _f("discard", BOOLEAN) if v >= V34 else None,
            _f("keyFile", resource),
            _f("label", STRING),
            _f("name", STRING, pointer=False),
            _f("openOptions", _strings("OpenOption")) if v >= V34 else None,
            _f("options", _strings("LuksOption", dedup=False)),
            _f("uuid", STRING),
            _f("wipeVolume", BOOLEAN),
        )
    storage = _obj(
        "Storage",
        _f("directories", _list(directory, "path", "[]types.Directory", KEYSPACE_NODES)),
        _f("disks", _list(disk, "device", "[]types.Disk")),
        _f("files", _list(file, "path", "[]types.File", KEYSPACE_NODES)),
        _f("filesystems", _list(filesystem, "device", "[]types.Filesystem")),
        _f("links", _list(link, "path", "[]types.Link", KEYSPACE_NODES)),
        _f("luks", _list(luks, "name", "[]types.Luks")) if luks is not None else None,
        _f("raid", _list(raid, "name", "[]types.Raid")),
    )
    dropin = _obj("Dropin", _f("contents", STRING), _f("name", STRING, pointer=False))
    unit = _obj(
        "Unit",
        _f("contents", STRING),
        _f("dropins", _list(dropin, "name", "[]types.Dropin")),
        _f("enabled", BOOLEAN),
        _f("mask", BOOLEAN),
        _f("name", STRING, pointer=False),
    )
    user = _obj(
        "PasswdUser",
        _f("gecos", STRING),
        _f("groups", _strings("Group")),
        _f("homeDir", STRING),
        _f("name", STRING, pointer=False),
        _f("noCreateHome", BOOLEAN),
        _f("noLogInit", BOOLEAN),
        _f("noUserGroup", BOOLEAN),
        _f("passwordHash", STRING),
        _f("primaryGroup", STRING),
        _f("shell", STRING),
        _f("shouldExist", BOOLEAN) if v >= V32 else None,
        _f("sshAuthorizedKeys", _strings("SSHAuthorizedKey")),
        _f("system", BOOLEAN),
        _f("uid", INTEGER),
    )
    group = _obj(
        "PasswdGroup",
        _f("gid", INTEGER),
        _f("name", STRING, pointer=False),
        _f("passwordHash", STRING),
        _f("shouldExist", BOOLEAN) if v >= V32 else None,
        _f("system", BOOLEAN),
    )
    kargs = None
    if v >= V33:
        kargs_list = _list(Node("string", "types.KernelArgument"), KEY_VALUE, "[]types.KernelArgument", KEYSPACE_KARGS)
        kargs = _obj("KernelArguments", _f("shouldExist", kargs_list), _f("shouldNotExist", kargs_list))
    return _obj(
        "Config",
        _f("ignition", ignition),
        _f("kernelArguments", kargs) if kargs is not None else None,
        _f(
            "passwd",
            _obj(
                "Passwd",
                _f("groups", _list(group, "name", "[]types.PasswdGroup")),
                _f("users", _list(user, "name", "[]types.PasswdUser")),
            ),
        ),
        _f("storage", storage),
        _f("systemd", _obj("Systemd", _f("units", _list(unit, "name", "[]types.Unit")))),
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


def walk(start: Node, prefix: str = "") -> Iterator[tuple[str, Node]]:
    """Every (field path, node) below `start`, depth first, in field-name order."""
    if start.kind == "object":
        for name in sorted(start.fields):
            child = start.fields[name].node
            here = f"{prefix}.{name}" if prefix else name
            yield here, child
            yield from walk(child, here)
    elif start.kind == "list" and start.item is not None:
        yield from walk(start.item, prefix + "[]")


@cache
def fields(version: str) -> frozenset[str]:
    """Every field path of `version`, e.g. "storage.files[].contents.source"."""
    return frozenset(path for path, _ in walk(root(version)))


@cache
def _introduced() -> Mapping[str, str]:
    first: dict[str, str] = {}
    for version in ACCEPTED_VERSIONS:
        for path in fields(version):
            first.setdefault(path, version)
    return MappingProxyType(first)


def introduced(path: str) -> str | None:
    """The first version that has field path `path` ("storage.luks" -> "3.2.0"), or None if none has it."""
    return _introduced().get(path)
