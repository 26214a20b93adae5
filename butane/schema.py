"""The Butane schema of one spec: the snake_case mirror of its Ignition spec plus Butane's sugar fields.

Built from `ignition.schema` (the Go types of each Ignition spec) so the two never drift: every Ignition
field `fooBar` becomes the Butane field `foo_bar` (Butane's `Snake()`: `sizeMiB` -> `size_mib`), then the sugar
of the base version is added (`inline`/`local` on resources, `storage.trees`, `with_mount_unit`,
`contents_local`, `ssh_authorized_keys_local`, `systemd.quadlets`) and the variant's own sections (`openshift`, `metadata`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from butane.variants import Spec
from ignition import schema as ign
from ignition import schema_nodes

_SNAKE = re.compile(r"(MiB|[A-Z])")


def snake(name: str) -> str:
    """Butane's camelCase -> snake_case rule (`sshAuthorizedKeys` -> `ssh_authorized_keys`)."""
    return _SNAKE.sub(r"_\1", name).lower()


@dataclass(eq=False)
class BField:
    """One member of a Butane object: its YAML key, its node, and the Ignition key it copies to (if any)."""

    key: str
    node: BNode
    pointer: bool = True
    json: str | None = None


@dataclass(eq=False)
class BNode:
    """The expected shape of a YAML value: object, list, string, integer, boolean or strmap (map of strings)."""

    kind: str
    go: str
    fields: dict[str, BField] = field(default_factory=dict)
    item: BNode | None = None

    def add(self, key: str, node: BNode, pointer: bool = True) -> None:
        """Add a sugar field (no Ignition counterpart)."""
        self.fields[key] = BField(key, node, pointer, None)


def _scalar(kind: str, go: str) -> BNode:
    return BNode(kind, go)


def _go_name(go: str, pkg: str) -> str:
    return go.replace("types.", f"{pkg}.")


def _convert(node: schema_nodes.Node, pkg: str) -> BNode:
    if node.kind == "object":
        out = BNode("object", f"{pkg}.{node.go}")
        for name, member in node.fields.items():
            out.fields[snake(name)] = BField(snake(name), _convert(member.node, pkg), member.pointer, name)
        return out
    if node.kind == "list":
        assert node.item is not None
        item = _convert(node.item, pkg)
        go = _go_name(node.go, pkg)
        if node.item.kind == "string" and go.startswith("[]"):
            item = _scalar("string", go[2:])
        return BNode("list", go, item=item)
    go = {"string": "string", "integer": "int", "boolean": "bool"}[node.kind]
    return _scalar(node.kind, go)


def _resources(node: BNode, pkg: str) -> list[BNode]:
    """Every Resource-like object below `node` (file contents, append items, merge/replace, CAs, key files)."""
    out: list[BNode] = []
    seen: set[int] = set()

    def visit(n: BNode) -> None:
        if id(n) in seen:
            return
        seen.add(id(n))
        if n.kind == "object":
            if n.go.split(".")[-1] in ("Resource", "FileContents", "ConfigReference", "CaReference"):
                out.append(n)
            for f in n.fields.values():
                visit(f.node)
        elif n.kind == "list" and n.item is not None:
            visit(n.item)

    visit(node)
    return out


STRING = _scalar("string", "string")
INTEGER = _scalar("integer", "int")
BOOLEAN = _scalar("boolean", "bool")


def _owner(pkg: str, name: str) -> BNode:
    node = BNode("object", f"{pkg}.{name}")
    node.add("id", INTEGER)
    node.add("name", STRING)
    return node


def _boot_device(spec: Spec) -> BNode:
    """fcos `boot_device` (1.3+): layout, luks (tang, threshold, tpm2; discard 1.5+; device, cex 1.6+), mirror."""
    pkg = f"v1_{spec.fcos_minor}"
    tang = BNode("object", f"{pkg}.Tang")
    tang.add("url", STRING, pointer=False)
    tang.add("thumbprint", STRING)
    if spec.base >= 5:
        tang.add("advertisement", STRING)
    luks = BNode("object", f"{pkg}.BootDeviceLuks")
    if spec.fcos_minor >= 6:
        cex = BNode("object", f"{pkg}.Cex")
        cex.add("enabled", BOOLEAN)
        luks.add("cex", cex, pointer=False)
        luks.add("device", STRING)
    if spec.fcos_minor >= 5:
        luks.add("discard", BOOLEAN)
    luks.add("tang", BNode("list", f"[]{pkg}.Tang", item=tang))
    luks.add("threshold", INTEGER)
    luks.add("tpm2", BOOLEAN)
    mirror = BNode("object", f"{pkg}.BootDeviceMirror")
    mirror.add("devices", BNode("list", "[]string", item=STRING))
    boot = BNode("object", f"{pkg}.BootDevice")
    boot.add("layout", STRING)
    boot.add("luks", luks, pointer=False)
    boot.add("mirror", mirror, pointer=False)
    return boot


@cache
def butane_root(spec: Spec) -> BNode:
    """The Butane schema tree of a spec (root object: version, variant, the Ignition sections, sugar)."""
    pkg = spec.package
    root = _convert(ign.root(spec.ignition), pkg)
    ign_section = root.fields.pop("ignition").node
    ign_section.fields.pop("version", None)
    fields = {"version": BField("version", STRING, False), "variant": BField("variant", STRING, False)}
    fields["ignition"] = BField("ignition", ign_section, True, "ignition")
    fields.update(root.fields)
    root.fields = fields
    for res in _resources(root, pkg):
        kind = res.go.split(".")[-1]
        if spec.base >= 2 or kind == "FileContents":
            res.add("inline", STRING)
        if spec.base >= 2:
            res.add("local", STRING)
    storage = root.fields["storage"].node
    systemd = root.fields["systemd"].node
    passwd = root.fields["passwd"].node
    if spec.base >= 2:
        tree = BNode("object", f"{pkg}.Tree")
        tree.add("local", STRING, pointer=False)
        tree.add("path", STRING)
        if spec.base >= 7:
            tree.add("user", _owner(pkg, "NodeUser"))
            tree.add("group", _owner(pkg, "NodeGroup"))
            tree.add("file_mode", INTEGER)
            tree.add("dir_mode", INTEGER)
        storage.add("trees", BNode("list", f"[]{pkg}.Tree", item=tree))
        fs_item = storage.fields["filesystems"].node.item
        assert fs_item is not None
        fs_item.add("with_mount_unit", BOOLEAN)
    if spec.base >= 5:  # fcos 1.5: contents_local and ssh_authorized_keys_local
        unit = systemd.fields["units"].node.item
        assert unit is not None
        unit.add("contents_local", STRING)
        dropin = unit.fields["dropins"].node.item
        assert dropin is not None
        dropin.add("contents_local", STRING)
        user = passwd.fields["users"].node.item
        assert user is not None
        user.add("ssh_authorized_keys_local", BNode("list", "[]string", item=STRING))
    if spec.base >= 8:  # base v0_8_exp (Butane 0.28): systemd.quadlets, Podman Quadlet files
        quadlet = BNode("object", f"{pkg}.Quadlet")
        quadlet.add("contents", STRING)
        quadlet.add("contents_local", STRING)
        quadlet.add("name", STRING, pointer=False)
        quadlet.add("rootful", BOOLEAN, pointer=False)
        systemd.add("quadlets", BNode("list", f"[]{pkg}.Quadlet", item=quadlet))
    if spec.fcos_minor >= 3:
        root.fields["boot_device"] = BField("boot_device", _boot_device(spec), False)
    if spec.fcos_minor >= 5:
        grub_user = BNode("object", f"v1_{spec.fcos_minor}.GrubUser")
        grub_user.add("name", STRING, pointer=False)
        grub_user.add("password_hash", STRING)
        grub = BNode("object", f"v1_{spec.fcos_minor}.Grub")
        grub.add("users", BNode("list", f"[]v1_{spec.fcos_minor}.GrubUser", item=grub_user))
        root.fields["grub"] = BField("grub", grub, False)
    if spec.is_openshift:
        meta = BNode("object", f"v4_{spec.openshift_minor}.Metadata")
        meta.fields["name"] = BField("name", STRING, False)
        meta.fields["labels"] = BField("labels", BNode("strmap", "map[string]string", item=STRING), False)
        root.fields["metadata"] = BField("metadata", meta, False)
        osh = BNode("object", f"v4_{spec.openshift_minor}.OpenShift")
        osh.add("kernel_arguments", BNode("list", "[]string", item=STRING), pointer=False)
        osh.add("extensions", BNode("list", "[]string", item=STRING), pointer=False)
        osh.add("fips", BOOLEAN)
        osh.add("kernel_type", STRING)
        root.fields["openshift"] = BField("openshift", osh, False)
    return root
