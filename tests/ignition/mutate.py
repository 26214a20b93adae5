"""A seeded mutator of corpus configs: each mutation is one small edit of the kind that hits a validation rule.

Used by the differential test to produce a few hundred configs that the real `ignition-validate` labels.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

PATHS = ["/etc/a", "etc/a", "/etc/a/", "/etc//a", "/etc/./a", "/etc/../a", "", "/", "/etc/a b", "/etc/systemd/system/x.service"]
SOURCES = [
    "data:,hello", "data:,a%20b", "data:,a b", "data:,%zz", "data:;base64,aGVsbG8=", "data:;base64,aGVsbG8",
    "data:text/plain;charset=utf-8,x", "data:text,x", "data:", "http://example.com/x", "https://[::1]:80/x",
    "http://a b/", "http://x:port/", "tftp://h/f", "s3://b/k", "s3://b/k?versionId=", "s3://b/k?versionId=v1",
    "gs://b/o", "file:///etc/passwd", "ftp://h/f", "", "%zz", "1http://x", "arn:aws:s3:::b/k", "HTTP://X/y",
    "data:;base64,aGk\n", "http://x/%41", "http://x/%4",
]
HASHES = ["sha512-" + "a" * 128, "sha512-" + "a" * 127, "sha256-" + "b" * 64, "sha256-abc", "md5-" + "c" * 32, "sha512:ab", ""]
MODES: list[Any] = [420, 493, -1, 4095, 4096, 2541, 1023, 0, "420", 420.5, True, None]
UNIT_NAMES = ["a.service", "a.socket", "a", "a.conf", "a@.service", "a@b.service", "b.timer", "c.mount"]
UNIT_CONTENTS = ["[Unit]\nA=b\n", "[Unit]\nA=b\n[Install]\nWantedBy=x\n", "[Unit\nA=b", "[Unit]\nFoo\n", "[Unit] junk\n", "", "x=" + "y" * 2100]
FORMATS: list[Any] = ["ext4", "xfs", "vfat", "swap", "btrfs", "none", "", "zfs", None]
LABELS = ["root", "a" * 12, "a" * 13, "a" * 16, "a" * 17, "lab:el", "a" * 37]
LEVELS: list[Any] = ["raid1", "raid0", "linear", "5", "raid7", "", None]
UNKNOWN_KEYS = ["foo", "Path", "MODE", "kernelArguments", "luks", "httpHeaders"]


def _lists(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], list[Any]]]:
    out: list[tuple[tuple[Any, ...], list[Any]]] = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_lists(v, path + (k,)))
    elif isinstance(node, list):
        out.append((path, node))
        for i, v in enumerate(node):
            out.extend(_lists(v, path + (i,)))
    return out


def _objects(node: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if isinstance(node, dict):
        out.append(node)
        for v in node.values():
            out.extend(_objects(v))
    elif isinstance(node, list):
        for v in node:
            out.extend(_objects(v))
    return out


def _section(parent: dict[str, Any], key: str, empty: Any) -> Any:
    """parent[key], replaced by `empty` when an earlier mutation left it of the wrong type."""
    value = parent.get(key)
    if type(value) is not type(empty):
        value = parent[key] = empty
    return value


def _storage(cfg: dict[str, Any]) -> dict[str, Any]:
    return _section(cfg, "storage", {})


def mutate(cfg: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One random, rule-targeted edit of a deep copy of `cfg`."""
    cfg = copy.deepcopy(cfg)
    kind = rng.randrange(19)
    st = _storage(cfg)
    if kind == 0:
        _section(st, "files", []).append({"path": rng.choice(PATHS), "mode": rng.choice(MODES)})
    elif kind == 1:
        f: dict[str, Any] = {"path": "/etc/f", "contents": {"source": rng.choice(SOURCES)}}
        if rng.random() < 0.5:
            f["contents"]["compression"] = rng.choice(["gzip", "", "xz"])
        if rng.random() < 0.4:
            f["contents"]["verification"] = {"hash": rng.choice(HASHES)}
        if rng.random() < 0.3:
            f["overwrite"] = True
            if rng.random() < 0.5:
                del f["contents"]
        _section(st, "files", []).append(f)
    elif kind == 2:
        link: dict[str, Any] = {"path": rng.choice(["/etc", "/etc/l", "/x"]), "target": rng.choice(["/etc/a", "a", "", "/d"])}
        if rng.random() < 0.5:
            link["hard"] = True
        _section(st, "links", []).append(link)
        if rng.random() < 0.5:
            _section(st, "directories", []).append({"path": rng.choice(["/d", "/etc/l/x", "/x/a"])})
    elif kind == 3:
        parts = [
            {k: v for k, v in (("number", rng.choice([0, 1, 2])), ("label", rng.choice(LABELS + [None])),
                                ("startMiB", rng.choice([None, 0, 10, 20])), ("sizeMiB", rng.choice([None, 0, 15])),
                                ("shouldExist", rng.choice([None, False])), ("guid", rng.choice([None, "bad", "01234567-89AB-CDEF-EDCB-A98765432101"])))
             if v is not None}
            for _ in range(rng.randrange(1, 4))
        ]
        _section(st, "disks", []).append({"device": rng.choice(["/dev/sda", "", "dev/sda"]), "partitions": parts, "wipeTable": rng.random() < 0.5})
    elif kind == 4:
        fs: dict[str, Any] = {"device": rng.choice(["/dev/sda", "/dev/sdb1", "sdb", ""])}
        fmt = rng.choice(FORMATS)
        if fmt is not None:
            fs["format"] = fmt
        if rng.random() < 0.6:
            fs["label"] = rng.choice(LABELS)
        if rng.random() < 0.4:
            fs["path"] = rng.choice(PATHS)
        if rng.random() < 0.3:
            fs["wipeFilesystem"] = True
        _section(st, "filesystems", []).append(fs)
    elif kind == 5:
        raid: dict[str, Any] = {"name": rng.choice(["md0", "md1"]), "devices": rng.choice([[], ["/dev/sda"], ["sda", "/dev/sdb"], ["/dev/a", "/dev/a"]])}
        level = rng.choice(LEVELS)
        if level is not None:
            raid["level"] = level
        if rng.random() < 0.4:
            raid["spares"] = rng.choice([0, 1])
        _section(st, "raid", []).append(raid)
    elif kind == 6:
        unit: dict[str, Any] = {"name": rng.choice(UNIT_NAMES)}
        if rng.random() < 0.8:
            unit["contents"] = rng.choice(UNIT_CONTENTS)
        if rng.random() < 0.5:
            unit["enabled"] = True
        if rng.random() < 0.3:
            unit["dropins"] = [{"name": rng.choice(["a.conf", "a.txt"]), "contents": rng.choice(UNIT_CONTENTS)}]
        _section(_section(cfg, "systemd", {}), "units", []).append(unit)
    elif kind == 7:
        lists = [(p, lst) for p, lst in _lists(cfg) if lst]
        if lists:
            _, lst = rng.choice(lists)
            lst.append(copy.deepcopy(rng.choice(lst)))
    elif kind == 8:
        objs = _objects(cfg)
        rng.choice(objs)[rng.choice(UNKNOWN_KEYS)] = rng.choice([1, "x", {}, None])
    elif kind == 9:
        objs = [o for o in _objects(cfg) if o]
        if objs:
            o = rng.choice(objs)
            key = rng.choice(sorted(o))
            if key not in ("ignition", "version"):
                del o[key]
    elif kind == 10:
        objs = [o for o in _objects(cfg) if o]
        o = rng.choice(objs)
        key = rng.choice(sorted(o))
        if key not in ("ignition", "version"):
            o[key] = rng.choice([None, "x", 1, [], {}, True])
    elif kind == 11:
        _section(_section(cfg, "passwd", {}), "users", []).append(
            {"name": rng.choice(["core", "a", ""]), "sshAuthorizedKeys": rng.choice([["k"], ["k", "k"], []]), "groups": rng.choice([["g", "g"], ["wheel"]])}
        )
    elif kind == 12:
        ign = _section(cfg, "ignition", {})
        choice = rng.randrange(4)
        ref: dict[str, Any] = {"source": rng.choice(SOURCES)} if rng.random() < 0.7 else {}
        if rng.random() < 0.4:
            ref["verification"] = {"hash": rng.choice(HASHES)}
        if rng.random() < 0.2:
            ref["compression"] = rng.choice(["gzip", "xz"])
        if rng.random() < 0.2:
            ref["httpHeaders"] = [{"name": "A", "value": "b"}]
        if choice == 0:
            _section(ign, "config", {})["merge"] = [ref]
        elif choice == 1:
            _section(_section(ign, "security", {}), "tls", {})["certificateAuthorities"] = [ref]
        elif choice == 2:
            _section(ign, "config", {})["replace"] = ref
        else:
            ign["proxy"] = {rng.choice(["httpProxy", "httpsProxy"]): rng.choice(["http://p", "https://p", "ftp://p", "", "http://[::1"])}
    elif kind == 13:
        _section(st, "directories", []).append({"path": rng.choice(PATHS), "mode": rng.choice(MODES)})
    elif kind == 14:
        who = rng.choice(["user", "group"])
        _section(st, "files", []).append({"path": "/etc/o", who: rng.choice([{"id": 0, "name": "root"}, {"id": 0}, {"name": ""}, {"id": 1, "name": ""}])})
    elif kind == 16:
        luks: dict[str, Any] = {"name": rng.choice(["data", "a/b", ""]), "device": rng.choice(["/dev/sdb", "", "sdb", None])}
        if luks["device"] is None:
            del luks["device"]
        clevis: dict[str, Any] = {}
        if rng.random() < 0.5:
            clevis["tang"] = [{k: v for k, v in (("url", rng.choice(["http://t", "https://t", "ftp://t", "", "http://[::1"])),
                                                ("thumbprint", rng.choice(["abc", "", None]))) if v is not None}]
        if rng.random() < 0.4:
            clevis["tpm2"] = rng.choice([True, False])
        if rng.random() < 0.3:
            clevis["threshold"] = rng.choice([0, 1, 2])
        if rng.random() < 0.5:
            clevis["custom"] = {k: v for k, v in (("pin", rng.choice(["tpm2", "sss", "foo", "", None])),
                                                  ("config", rng.choice(["{}", "", None])),
                                                  ("needsNetwork", rng.choice([True, False, None]))) if v is not None}
        if clevis or rng.random() < 0.2:
            luks["clevis"] = clevis
        if rng.random() < 0.3:
            luks["keyFile"] = {"source": rng.choice(SOURCES)}
        if rng.random() < 0.3:
            luks["label"] = rng.choice(["l", "x" * 48])
        _section(st, "luks", []).append(luks)
    elif kind == 17:
        kargs = _section(cfg, "kernelArguments", {})
        _section(kargs, rng.choice(["shouldExist", "shouldNotExist"]), []).append(rng.choice(["quiet", "a b", "quiet"]))
    elif kind == 18:
        objs = [o for o in _objects(cfg) if o]
        o = rng.choice(objs)
        key = rng.choice(sorted(o))
        if key not in ("ignition", "version"):
            trick = rng.randrange(4)
            if trick == 0:
                o[key.upper()] = o[key]
            elif trick == 1:
                o[key] = None
            elif trick == 2 and isinstance(o[key], int) and not isinstance(o[key], bool):
                o[key] = rng.choice([float(o[key]), -0, 2**63, -(2**63)])
            else:
                o[key.capitalize()] = rng.choice([None, 1, "x"])
    else:
        f = {"path": "/etc/h", "contents": {"source": rng.choice(SOURCES), "httpHeaders": [{"name": rng.choice(["A", ""]), "value": rng.choice(["v", ""])}]}}
        _section(st, "files", []).append(f)
    return cfg


def generate(seeds: list[dict[str, Any]], count: int, seed: int = 2) -> list[tuple[str, str]]:
    """`count` (id, JSON text) configs: a corpus seed, 1-3 mutations, relabelled to a random 3.0-3.3 version."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    for n in range(count):
        cfg = copy.deepcopy(rng.choice(seeds))
        for _ in range(rng.randrange(1, 4)):
            cfg = mutate(cfg, rng)
        version = rng.choice(["3.0.0", "3.1.0", "3.2.0", "3.3.0"])
        _section(cfg, "ignition", {})["version"] = version
        out.append((f"gen{n:03d}-{version}", json.dumps(cfg)))
    return out


_URL_PREFIXES = [
    "http://", "https://", "HTTP://", "tftp://", "s3://", "gs://", "data:", "data:,", "data:;base64,", "data:text/plain,",
    "data:text/plain;charset=utf-8;base64,", "data:x-foo/bar,", 'data:image/png;a="b c",', "data:application/json;x=%41,",
    "arn:aws:s3:::", "", "ftp://", "http:", "http:/x", "//x", "a:b", ":x",
]
_URL_CHARS = "abcXYZ019/.:@?#%[]&=;,+-_~ \"{}|\\^`\t\n\x7f!$'()*é"
_UNIT_PIECES = ["[Unit]", "[Install]", "[Service]", "\n", "\r\n", "\r", "A=b", "Foo", "#c", "; c", "\\", "\\\n", " ", "=", "[", "]",
                "x", "WantedBy=a", "é", "\t", "x" * 700]


def fuzz_sources(count: int, seed: int = 3) -> list[tuple[str, str]]:
    """Configs whose only interesting part is one random URL: file source, proxy, source with headers, Tang URL."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    for n in range(count):
        src = rng.choice(_URL_PREFIXES) + "".join(rng.choice(_URL_CHARS) for _ in range(rng.randrange(14)))
        kind = rng.randrange(4)
        cfg: dict[str, Any] = {"ignition": {"version": "3.3.0"}}
        if kind == 0:
            cfg["storage"] = {"files": [{"path": "/a", "contents": {"source": src}}]}
        elif kind == 1:
            cfg["ignition"]["proxy"] = {"httpsProxy": src}
        elif kind == 2:
            cfg["storage"] = {"files": [{"path": "/a", "contents": {"source": src, "httpHeaders": [{"name": "a", "value": "b"}]}}]}
        else:
            cfg["storage"] = {"luks": [{"name": "a", "device": "/dev/a", "clevis": {"tang": [{"url": src, "thumbprint": "x"}]}}]}
        out.append((f"url{n:03d}", json.dumps(cfg)))
    return out


def fuzz_units(count: int, seed: int = 5) -> list[tuple[str, str]]:
    """Configs with one random unit file (sections, comments, continuations, CR/LF, long lines) and maybe a dropin."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    for n in range(count):
        text = "".join(rng.choice(_UNIT_PIECES) for _ in range(rng.randrange(12)))
        unit: dict[str, Any] = {"name": rng.choice(["a.service", "t@.service", "t@x.service", "a.conf", "b"]), "contents": text}
        if rng.random() < 0.5:
            unit["enabled"] = True
        if rng.random() < 0.3:
            unit["dropins"] = [{"name": rng.choice(["d.conf", "d"]), "contents": text[::-1]}]
        out.append((f"unit{n:03d}", json.dumps({"ignition": {"version": "3.3.0"}, "systemd": {"units": [unit]}})))
    return out


_STRUCT_NULLS = [("storage",), ("systemd",), ("passwd",), ("kernelArguments",), ("ignition", "config"), ("ignition", "security"),
                 ("ignition", "timeouts"), ("ignition", "proxy"), ("storage", "files", 0, "user"), ("storage", "files", 0, "contents"),
                 ("storage", "files", 0, "contents", "verification"), ("systemd", "units", 0), ("storage", "luks", 0, "clevis"),
                 ("storage", "luks", 0, "clevis", "custom")]
_WRONG_ITEMS = [("storage", "raid", 0, "devices"), ("storage", "raid", 0, "options"), ("storage", "filesystems", 0, "options"),
                ("storage", "filesystems", 0, "mountOptions"), ("storage", "luks", 0, "options"), ("passwd", "users", 0, "groups"),
                ("passwd", "users", 0, "sshAuthorizedKeys"), ("ignition", "proxy", "noProxy"), ("kernelArguments", "shouldExist")]


def _shape_base() -> dict[str, Any]:
    return {
        "ignition": {"version": "3.3.0", "config": {"merge": [{"source": "data:,", "x": 1}]}, "timeouts": {"httpTotal": 1}},
        "storage": {"files": [{"path": "/f", "mode": 420, "user": {"id": 0}, "contents": {"source": "data:,", "y": 1}}],
                    "raid": [{"name": "md0", "level": "raid1", "devices": ["/dev/a"]}],
                    "filesystems": [{"device": "/dev/b", "format": "ext4"}],
                    "luks": [{"name": "l", "device": "/dev/c", "clevis": {"custom": {"pin": "sss", "config": "{}"}}}]},
        "systemd": {"units": [{"name": "a\\x2d.service", "enabled": True, "contents": "[Unit]\n", "z": 1}]},
        "passwd": {"users": [{"name": "core", "groups": ["g"], "sshAuthorizedKeys": ["k"]}]},
        "kernelArguments": {"shouldExist": ["a"]},
    }


def _reach(cfg: Any, path: tuple[Any, ...]) -> Any:
    """The value at `path`, or None when an earlier edit nulled or replaced a step on the way."""
    for step in path:
        try:
            cfg = cfg[step]
        except (KeyError, TypeError, IndexError):
            return None
    return cfg


def fuzz_shapes(count: int, seed: int = 7) -> list[tuple[str, str]]:
    """Configs Go reads in ways a walk of the JSON does not: a null struct ("context tree does not match"), the
    same section under an odd-cased key (Go decodes both, but warns only of keys under the exact one), a mode
    out of range with special bits, a wrong JSON type in a list of a named string type, a null through an odd-cased
    key on 3.2's pointer structs, a number beyond float64; relabelled to 3.0-3.3."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    for n in range(count):
        cfg = _shape_base()
        for _ in range(rng.randrange(1, 3)):
            kind = rng.randrange(5)
            if kind == 4:  # 3.2 holds clevis and custom through pointers: a later odd-cased null unsets them
                luks = _reach(cfg, ("storage", "luks", 0))
                if isinstance(luks, dict) and isinstance(luks.get("clevis"), dict):
                    clevis = luks["clevis"]
                    if isinstance(clevis.get("custom"), dict):
                        clevis["custom"]["pin"] = "bogus"
                    (luks if rng.random() < 0.5 else clevis)[rng.choice(["Clevis", "Custom"])] = None
            elif kind == 0:
                path = rng.choice(_STRUCT_NULLS)
                parent = _reach(cfg, path[:-1])
                if isinstance(parent, dict) or (isinstance(parent, list) and isinstance(path[-1], int) and path[-1] < len(parent)):
                    parent[path[-1]] = None  # type: ignore[index]
            elif kind == 1:
                path = rng.choice([p for p in _STRUCT_NULLS if len(p) < 4])
                parent = _reach(cfg, path[:-1])
                if isinstance(parent, dict) and path[-1] in parent:
                    variant = rng.choice([str(path[-1]).upper(), str(path[-1]).capitalize()])
                    parent[variant] = rng.choice([copy.deepcopy(parent[path[-1]]), None, {}, {"q": 1}])
            elif kind == 2:
                f = _reach(cfg, ("storage", "files", 0))
                if isinstance(f, dict):
                    f["mode"] = rng.choice([-1, 8191, 4096, 0o17777, 2541])
            else:
                lst = _reach(cfg, rng.choice(_WRONG_ITEMS))
                if isinstance(lst, list):
                    lst.append(rng.choice([1, [None], {}, True]))
        version = rng.choice(["3.0.0", "3.1.0", "3.2.0", "3.3.0"])
        cfg["ignition"]["version"] = version
        text = json.dumps(cfg)
        if rng.random() < 0.15:  # a number beyond float64 in an unknown key: Go then reports no unused key, no position
            text = text[:-1] + ', "huge": ' + rng.choice(["1e400", "-1E+999", "1" + "0" * 320, "1e308"]) + "}"
        out.append((f"shape{n:03d}-{version}", text))
    return out
