"""Base MachineConfigs of each role from `templates/<role>/<mc-name>/`, as the MCO's template controller does.

Layout (one MachineConfig per sub-directory, named after it, labelled with the role):

    templates/<role>/00-<role>/files/*.yaml        one Ignition file each:
        {path, mode, user: {name}, group: {name}, contents: {inline | source, compression}}
    templates/<role>/00-<role>/units/*.yaml        one systemd unit each:
        {name, enabled, mask, contents, dropins: [{name, contents}]}
    templates/<role>/01-<role>-kubelet/...
    templates/<role>/01-<role>-container-runtime/...

Every snippet is a jinja2 template (StrictUndefined: a missing value is an error naming the template and
line) rendered with the cluster.yaml values plus `role`, then read as YAML. Snippets are merged in
file-name order; every file gets `overwrite: true`. Roles without a directory (custom pools such as
`infra`) get no base MachineConfigs of their own: their pools select the worker ones, and where a
role's own rendering of a template is needed (the kubelet config a KubeletConfig is merged over) the
worker templates are rendered with `role` set to the custom role.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path as FsPath
from typing import Any

import jinja2

from fleet.rendered import MachineConfigSpec
from ignition.dataurl import encode_data_url
from renderer.cluster import Cluster
from renderer.load import load_text
from renderer.merge_machineconfigs import IGNITION_VERSION
from renderer.model import GENERATED_BY, ROLE_LABEL, MachineConfig, Origin
from renderer.problems import Problem

TEMPLATES_DIR = "templates"
CONTROLLER_VERSION = "machine-config-renderer/1"
_FILE_KEYS = {"path", "mode", "user", "group", "overwrite", "contents"}
_UNIT_KEYS = {"name", "enabled", "mask", "contents", "dropins"}


@dataclass(frozen=True)
class TemplateSet:
    """The rendered snippets of one role: MachineConfigs in name order, and problems."""

    machine_configs: tuple[MachineConfig, ...]
    problems: tuple[Problem, ...]


def template_roles(cluster_dir: FsPath) -> list[str]:
    """Roles that have a template directory, sorted."""
    root = cluster_dir / TEMPLATES_DIR
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


@lru_cache(maxsize=8)
def _environment(cluster_dir: FsPath) -> jinja2.Environment:
    """One environment per cluster directory, so a template is compiled once for every role and machine that
    renders it (jinja2 reloads a template whose file changed)."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(cluster_dir)), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, autoescape=False)


def _template_line(exc: BaseException, filename: str) -> int | None:
    """The template line an exception was raised on (jinja2 rewrites tracebacks to template frames)."""
    tb: types.TracebackType | None = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _render_snippet(env: jinja2.Environment, cluster_dir: FsPath, rel: str,
                    context: Mapping[str, Any]) -> tuple[Any, list[Problem]]:
    """Render one snippet and read it as a single YAML document."""
    filename = str(cluster_dir / rel)
    try:
        text = env.get_template(rel).render(**context)
    except jinja2.TemplateSyntaxError as exc:
        return None, [Problem("template-syntax", f"template syntax error: {exc.message}", rel, (), exc.lineno)]
    except jinja2.UndefinedError as exc:
        return None, [Problem("template-undefined", f"template uses an undefined value: {exc.message}", rel, (),
                              _template_line(exc, filename))]
    except jinja2.TemplateError as exc:
        return None, [Problem("template-error", f"template error: {exc}", rel, (), _template_line(exc, filename))]
    docs, problems = load_text(text, rel)
    if problems:
        return None, [Problem(p.code, f"{p.message} (in the rendered template output)", p.source, p.path,
                              p.line, p.col) for p in problems]
    if len(docs) != 1:
        return None, [Problem("documents", f"a template snippet must be one YAML document, found {len(docs)}", rel)]
    return docs[0], []


def _file_entry(doc: Any, rel: str) -> tuple[dict[str, Any] | None, list[Problem]]:
    data = doc.data
    if not isinstance(data, Mapping):
        return None, [doc.problem("json-type", (), "a file snippet must be a mapping with path and contents")]
    problems = [doc.problem("unused-key", (k,), f"unused key {k}", severity="warning") for k in data
                if k not in _FILE_KEYS]
    path = data.get("path")
    if not isinstance(path, str) or not path:
        problems.append(doc.problem("required", ("path",), "path is required"))
        return None, problems
    entry: dict[str, Any] = {"path": path, "overwrite": True}
    if "mode" in data:
        mode = data["mode"]
        if isinstance(mode, bool) or not isinstance(mode, int):
            problems.append(doc.problem("json-type", ("mode",), f"mode must be an integer (write it as 0644), "
                                        f"got {mode!r}"))
            return None, problems
        entry["mode"] = mode
    for key in ("user", "group"):
        if key in data:
            entry[key] = data[key]
    contents = data.get("contents") or {}
    if not isinstance(contents, Mapping):
        problems.append(doc.problem("json-type", ("contents",), "contents must be a mapping (inline or source)"))
        return None, problems
    if "inline" in contents and "source" in contents:
        problems.append(doc.problem("contents", ("contents",), "only one of inline and source can be set"))
        return None, problems
    out: dict[str, Any] = {}
    if "inline" in contents:
        inline = contents["inline"]
        if not isinstance(inline, str):
            problems.append(doc.problem("json-type", ("contents", "inline"), "inline contents must be a string"))
            return None, problems
        out["source"] = encode_data_url(inline.encode())
    elif "source" in contents:
        out["source"] = contents["source"]
    if contents.get("compression"):
        out["compression"] = contents["compression"]
    entry["contents"] = out
    return entry, problems


def _unit_entry(doc: Any) -> tuple[dict[str, Any] | None, list[Problem]]:
    data = doc.data
    if not isinstance(data, Mapping):
        return None, [doc.problem("json-type", (), "a unit snippet must be a mapping with a name")]
    problems = [doc.problem("unused-key", (k,), f"unused key {k}", severity="warning") for k in data
                if k not in _UNIT_KEYS]
    name = data.get("name")
    if not isinstance(name, str) or not name:
        problems.append(doc.problem("required", ("name",), "name is required"))
        return None, problems
    unit = {k: data[k] for k in ("name", "enabled", "mask", "contents") if k in data}
    dropins = data.get("dropins")
    if dropins is not None:
        if not isinstance(dropins, list):
            problems.append(doc.problem("json-type", ("dropins",), "dropins must be a list"))
            return None, problems
        unit["dropins"] = [dict(d) if isinstance(d, Mapping) else d for d in dropins]
    return unit, problems


@dataclass(frozen=True)
class Snippets:
    """The Ignition config one template directory's `files/` and `units/` snippets make, with each entry's
    origin (a provenance key -> `file:1`), and the problems found."""

    config: dict[str, Any]
    origins: dict[str, str]
    problems: tuple[Problem, ...]


def render_snippets(cluster_dir: FsPath, directory: FsPath, context: Mapping[str, Any]) -> Snippets:
    """Render the snippets under `directory/files` and `directory/units` with `context` (module docstring)."""
    env = _environment(cluster_dir)
    files: list[dict[str, Any]] = []
    units: list[dict[str, Any]] = []
    origins: dict[str, str] = {}
    problems: list[Problem] = []
    for kind in ("files", "units"):
        sub = directory / kind
        if not sub.is_dir():
            continue
        for snippet in sorted(p for p in sub.iterdir() if p.is_file() and not p.name.startswith(".")):
            rel = snippet.relative_to(cluster_dir).as_posix()
            doc, found = _render_snippet(env, cluster_dir, rel, context)
            problems.extend(found)
            if doc is None:
                continue
            if kind == "files":
                entry, found = _file_entry(doc, rel)
                if entry is not None:
                    files = [f for f in files if f["path"] != entry["path"]] + [entry]
                    origins[f"storage.files[{entry['path']}]"] = f"{rel}:1"
            else:
                entry, found = _unit_entry(doc)
                if entry is not None:
                    units = [u for u in units if u["name"] != entry["name"]] + [entry]
                    origins[f"systemd.units[{entry['name']}]"] = f"{rel}:1"
                    for dropin in entry.get("dropins") or ():
                        if isinstance(dropin, Mapping) and "name" in dropin:
                            origins[f"systemd.units[{entry['name']}].dropins[{dropin['name']}]"] = f"{rel}:1"
            problems.extend(found)
    config: dict[str, Any] = {"ignition": {"version": IGNITION_VERSION}}
    if files:
        config["storage"] = {"files": sorted(files, key=lambda f: f["path"])}
    if units:
        config["systemd"] = {"units": sorted(units, key=lambda u: u["name"])}
    return Snippets(config, origins, tuple(problems))


def render_text(cluster_dir: FsPath, rel: str, context: Mapping[str, Any]) -> tuple[Any, list[Problem]]:
    """One template file of the cluster directory rendered with `context` and read as one YAML document
    (its `Document`, or None and the problems)."""
    return _render_snippet(_environment(cluster_dir), cluster_dir, rel, context)


def render_role(cluster_dir: FsPath, cluster: Cluster, role: str, *, template_role: str | None = None) -> TemplateSet:
    """The base MachineConfigs of `role`, rendered from `templates/<template_role or role>/`."""
    source_role = template_role or role
    root = cluster_dir / TEMPLATES_DIR / source_role
    context = {**cluster.values, "role": role, "cluster": cluster.values}
    configs: list[MachineConfig] = []
    problems: list[Problem] = []
    if not root.is_dir():
        return TemplateSet((), ())
    for mc_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        name = mc_dir.name.replace(source_role, role) if source_role != role else mc_dir.name
        snippets = render_snippets(cluster_dir, mc_dir, context)
        problems.extend(snippets.problems)
        # the cluster's OS image on every template MachineConfig, as the MCO's template controller sets it
        # (pkg/controller/template/render.go generateMachineConfigForName): MergeMachineConfigs takes the last
        # non-empty one, so a MachineConfig sorting before a template of its role does not override it
        origins = {**snippets.origins, "osImageURL": "cluster.yaml:osImageURL"} if cluster.os_image_url \
            else snippets.origins
        configs.append(MachineConfig(
            name=name, labels={ROLE_LABEL: role}, annotations={GENERATED_BY: CONTROLLER_VERSION},
            spec=MachineConfigSpec(config=snippets.config, os_image_url=cluster.os_image_url), has_config=True,
            origin=Origin(mc_dir.relative_to(cluster_dir).as_posix() + "/"),
            entry_origins=origins))
    return TemplateSet(tuple(configs), tuple(problems))


def ssh_machine_config(cluster: Cluster, role: str) -> MachineConfig | None:
    """`99-<role>-ssh`: the cluster's SSH keys for `core`, as the installer creates it."""
    if not cluster.ssh_keys:
        return None
    config = {"ignition": {"version": IGNITION_VERSION},
              "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": list(cluster.ssh_keys)}]}}
    return MachineConfig(name=f"99-{role}-ssh", labels={ROLE_LABEL: role},
                         annotations={GENERATED_BY: CONTROLLER_VERSION},
                         spec=MachineConfigSpec(config=config), has_config=True,
                         origin=Origin("cluster.yaml"), entry_origins={"passwd.users[core]": "cluster.yaml:sshKeys"})
