"""`systemd.quadlets` (base v0_8_exp: fcos 1.8.0-exp and the experimental specs built on it): Podman Quadlet
files written where Podman's systemd generator reads them.

Sugar step after the trees, as Butane's processQuadlets: a rootful quadlet goes to /etc/containers/systemd/,
any other to /etc/containers/systemd/users/. A template instance (`name@arg.ext`) becomes a link to its
template (`name@.ext`); every other quadlet becomes a file whose contents (`contents` or `contents_local`) are
a data URL, with no mode and no owner. A quadlet landing on a path the config already has (an explicit file,
a tree's node or an earlier quadlet) is `matching filesystem node has existing contents or different type`.
"""

from __future__ import annotations

from typing import Any

from butane import messages as m
from butane.checks import quadlet_template
from butane.context import Context
from butane.files import LocalFileError, make_data_url, read_local
from butane.trees import Tracker, add_translations

ROOTFUL_DIR = "/etc/containers/systemd"
USER_DIR = "/etc/containers/systemd/users"


def quadlet_path(rootful: bool, name: str) -> str:
    """Where a quadlet file goes (Butane's buildQuadletPath)."""
    return f"{ROOTFUL_DIR if rootful else USER_DIR}/{name}"


def process_quadlets(quadlets: list[dict[str, Any]], config: dict[str, Any], ctx: Context) -> None:
    """Add every quadlet to `config` as a file or link (errors at `$.systemd.quadlets.N`)."""
    if not quadlets:
        return
    tracker = Tracker(config)
    for i, quadlet in enumerate(quadlets):
        ypath = ("systemd", "quadlets", i)
        name = quadlet.get("name", "")
        dest = quadlet_path(quadlet.get("rootful") is True, name)
        template = quadlet_template(name)
        if template is not None:
            if tracker.exists(dest):
                ctx.problems.error(ypath, m.ERR_NODE_EXISTS)
                continue
            n = tracker.add("links", {"path": dest, "target": template})
            add_translations("links", n, ypath, ctx)
            ctx.translated(("storage", "links", n, "path"), ypath + ("name",))
            ctx.translated(("storage", "links", n, "target"), ypath)
            continue
        if tracker.exists(dest):
            ctx.problems.error(ypath, m.ERR_NODE_EXISTS)
            continue
        entry: dict[str, Any] = {"path": dest}
        n = tracker.add("files", entry)
        add_translations("files", n, ypath, ctx)
        ctx.translated(("storage", "files", n, "path"), ypath + ("name",))
        data = b""
        content_path: tuple[str | int, ...] = ypath
        if quadlet.get("contents_local"):
            content_path = ypath + ("contents_local",)
            try:
                data = read_local(quadlet["contents_local"], ctx.files_dir)
            except LocalFileError as exc:
                ctx.problems.error(content_path, str(exc))
                continue
        if quadlet.get("contents"):
            content_path = ypath + ("contents",)
            data = quadlet["contents"].encode("utf-8", "surrogateescape")
        url, compression = make_data_url(data, None, ctx.allow_compression)
        contents: dict[str, Any] = {"source": url}
        if compression is not None:
            contents["compression"] = compression
            ctx.translated(("storage", "files", n, "contents", "compression"), ypath)
        entry["contents"] = contents
        ctx.translated(("storage", "files", n, "contents", "source"), content_path)
        ctx.translated(("storage", "files", n, "contents"), content_path)
    if not config["storage"]:
        del config["storage"]
