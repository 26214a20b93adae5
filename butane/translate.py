"""Butane values (YAML space) -> Ignition dict (JSON space): the base copy and its leaf sugar.

Third step of the pipeline. Every Butane field with an Ignition counterpart is copied under its camelCase
name; resource `inline`/`local` become `source` (+ `compression`), `contents_local` becomes `contents`,
`ssh_authorized_keys_local` adds keys. Every generated JSON path that does not simply mirror a YAML path
is recorded in a translation map, so errors found in the output point back at the YAML that caused them.
"""

from __future__ import annotations

import re
from typing import Any

from butane import messages as m
from butane.checks import check_embedded_config
from butane.context import RESOURCE_TYPES, Context, JPath, butane_type
from butane.files import LocalFileError, make_data_url, read_local
from butane.report import YPath
from butane.schema import BNode
from ignition.dataurl import escape

_LINE_SPLIT = re.compile(r"\r?\n")


def copy(value: Any, node: BNode, ypath: YPath, jpath: JPath, ctx: Context) -> Any:
    """The Ignition form of a Butane value (objects keep only fields Ignition has)."""
    if node.kind == "list":
        assert node.item is not None
        return [copy(v, node.item, ypath + (i,), jpath + (i,), ctx) for i, v in enumerate(value)]
    if node.kind != "object":
        return value
    out: dict[str, Any] = {}
    for key, member in node.fields.items():
        if member.json is not None and key in value:
            out[member.json] = copy(value[key], member.node, ypath + (key,), jpath + (member.json,), ctx)
    kind = butane_type(node)
    if kind in RESOURCE_TYPES:
        _resource(value, out, ypath, jpath, ctx)
    elif kind in ("Unit", "Dropin"):
        _contents_local(value, out, ypath, jpath, ctx)
    elif kind == "PasswdUser":
        _ssh_keys_local(value, out, ypath, jpath, ctx)
    return out


def _resource(value: dict[str, Any], out: dict[str, Any], ypath: YPath, jpath: JPath, ctx: Context) -> None:
    for name in ("local", "inline"):
        if name not in value:
            continue
        if name == "local":
            try:
                data = read_local(value["local"], ctx.files_dir)
            except LocalFileError as exc:
                ctx.problems.error(ypath + ("local",), str(exc))
                return
            # Before base v0_7, translateResource tests `$.local` for the `$.ignition.config` prefix, which
            # never matches: local merge/replace configs are not validated.
            if jpath[:2] == ("ignition", "config") and ctx.spec.base >= 7:
                check_embedded_config(data, ctx.spec.ignition, ypath, "local", ctx.problems, translated=True)
        else:
            data = value["inline"].encode("utf-8", "surrogateescape")
        if ctx.spec.base == 1:
            # base v0_1 (fcos 1.0) has only file `inline`, written as a plain URL-escaped data URL: the
            # smallest-encoding choice and the explicit `compression: ""` came with fcos 1.1's MakeDataURL.
            out["source"] = "data:," + escape(data)
            ctx.translated(jpath + ("source",), ypath + (name,))
            continue
        url, compression = make_data_url(data, out.get("compression"), ctx.allow_compression)
        out["source"] = url
        ctx.translated(jpath + ("source",), ypath + (name,))
        if compression is not None:
            out["compression"] = compression
            ctx.translated(jpath + ("compression",), ypath + (name,))


def _contents_local(
    value: dict[str, Any], out: dict[str, Any], ypath: YPath, jpath: JPath, ctx: Context
) -> None:
    local = value.get("contents_local")
    if not local:
        return
    try:
        data = read_local(local, ctx.files_dir)
    except LocalFileError as exc:
        ctx.problems.error(ypath + ("contents_local",), str(exc))
        return
    ctx.translated(jpath + ("contents",), ypath + ("contents_local",))
    out["contents"] = data.decode("utf-8", "replace")


def _ssh_keys_local(
    value: dict[str, Any], out: dict[str, Any], ypath: YPath, jpath: JPath, ctx: Context
) -> None:
    files = value.get("ssh_authorized_keys_local") or []
    if not files:
        return
    here = ypath + ("ssh_authorized_keys_local",)
    ctx.translated(jpath + ("sshAuthorizedKeys",), here)
    if not ctx.files_dir:
        ctx.problems.error(here, m.ERR_NO_FILES_DIR)
        return
    keys = out.setdefault("sshAuthorizedKeys", [])
    for i, name in enumerate(files):
        try:
            data = read_local(name, ctx.files_dir)
        except LocalFileError as exc:
            ctx.problems.error(here + (i,), str(exc))
            continue
        for line in _LINE_SPLIT.split(data.decode("utf-8", "replace")):
            if line:
                ctx.translated(jpath + ("sshAuthorizedKeys", len(keys)), here + (i,))
                keys.append(line)
