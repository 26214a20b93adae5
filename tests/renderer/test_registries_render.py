"""The image-registry kinds in a cluster directory: `99-<pool>-generated-registries` for the built-in pools (custom
pools take the worker's), and a refused document isolated as the MCO does it: the pools still render, keep the
registries MachineConfig of the last successful sync, and carry an `ImageConfigFailure` condition naming the
document at file:line and field."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from fleet.store import MemoryStore
from renderer.render import render_cluster
from server.status import pool_summary, tally
from tests.renderer.documents import NEW_WORKER_MC, image, rendered_files

IDMS = """\
apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
metadata:
  name: ubi9repo
spec:
  imageDigestMirrors:
  - mirrors:
    - {mirror}
    source: registry.access.redhat.com/ubi9/ubi-minimal
    mirrorSourcePolicy: {policy}
"""
ITMS = """\
apiVersion: config.openshift.io/v1
kind: ImageTagMirrorSet
metadata:
  name: tag-mirror
spec:
  imageTagMirrors:
  - mirrors:
    - example.io/example/ubi-minimal
    source: registry.access.redhat.com/ubi9/ubi-minimal
    mirrorSourcePolicy: AllowContactingSource
"""


def _image(sources: str, name: str = "cluster") -> str:
    return image("  registrySources:\n" + sources, name=name)


def _files(render: Any, pool: str) -> dict[str, bytes]:
    return rendered_files(render.pools[pool].rendered)


def _mirrors(render: Any, pool: str) -> dict[str, list[str]]:
    conf = tomllib.loads(_files(render, pool)["/etc/containers/registries.conf"].decode())
    return {r.get("location") or r["prefix"]: [m["location"] for m in r.get("mirror", [])] for r in conf["registry"]}


def test_built_in_pools_get_the_registries_machine_config_and_custom_pools_the_workers(cluster: Path) -> None:
    (cluster / "manifests/95-idms.yaml").write_text(IDMS.format(mirror="mirror.example.com/ubi", policy="NeverContactSource"))
    result = render_cluster(cluster, store=MemoryStore())
    assert result.ok, (result.errors, {p: r.errors for p, r in result.pools.items()})
    for pool in ("worker", "master", "infra"):
        assert _mirrors(result, pool)["registry.access.redhat.com/ubi9/ubi-minimal"] == ["mirror.example.com/ubi"]
    assert "99-worker-generated-registries" in result.pools["worker"].sources
    assert "99-master-generated-registries" in result.pools["master"].sources
    assert "99-worker-generated-registries" in result.pools["infra"].sources
    assert not any("infra-generated-registries" in s for s in result.pools["infra"].sources)
    conf = _files(result, "worker")["/etc/containers/registries.conf"].decode()
    assert 'location = "quay.io/fedora"' in conf  # the role template's own entry is kept
    assert "blocked = true" in conf
    assert "/etc/containers/policy.json" not in _files(result, "worker")  # nothing allowed or blocked
    explained = result.pools["worker"].rendered.provenance["storage.files[/etc/containers/registries.conf]"]
    assert explained.startswith("99-worker-generated-registries (manifests/95-idms.yaml:1)"), explained



@pytest.mark.parametrize(("value", "own"), [('""', True), ('"true"', False)])
def test_built_in_is_the_label_with_an_empty_value(cluster: Path, value: str, own: bool) -> None:
    # container_runtime_config_controller.go syncImageConfig lists the pools with the label selector
    # `machineconfiguration.openshift.io/mco-built-in=""` (AddLabelToSelector(..., builtInLabelKey, "")): another
    # value is not a built-in pool, which then takes the worker's registries MachineConfig through its selector
    pools = cluster / "manifests/00-pools.yaml"
    pools.write_text(pools.read_text().replace(
        '    pools.operator.machineconfiguration.openshift.io/infra: ""',
        '    pools.operator.machineconfiguration.openshift.io/infra: ""\n'
        f"    machineconfiguration.openshift.io/mco-built-in: {value}"))
    (cluster / "manifests/95-idms.yaml").write_text(IDMS.format(mirror="mirror.example.com/ubi", policy="NeverContactSource"))
    result = render_cluster(cluster, store=MemoryStore())
    assert result.ok, result.errors
    assert ("99-infra-generated-registries" in result.pools["infra"].sources) is own
    assert _mirrors(result, "infra")["registry.access.redhat.com/ubi9/ubi-minimal"] == ["mirror.example.com/ubi"]

def test_refused_document_keeps_the_last_sync_and_the_pools_render(cluster: Path) -> None:
    store = MemoryStore()
    idms = cluster / "manifests/95-idms.yaml"
    idms.write_text(IDMS.format(mirror="mirror.example.com/ubi", policy="NeverContactSource"))
    first = render_cluster(cluster, store=store)
    assert first.ok
    (cluster / "manifests/96-itms.yaml").write_text(ITMS)  # AllowContactingSource for the same source
    (cluster / "manifests/60-worker-new.yaml").write_text(NEW_WORKER_MC)
    second = render_cluster(cluster, store=store)
    worker = second.pools["worker"]
    assert worker.errors == () and worker.changed
    assert _files(second, "worker")["/etc/new"] == b"new"
    assert _mirrors(second, "worker") == _mirrors(first, "worker")  # the last successful sync
    assert any(e.startswith("manifests/96-itms.yaml:") and "conflicting mirrorSourcePolicy is set for the same "
               'source "registry.access.redhat.com/ubi9/ubi-minimal"' in e for e in second.errors), second.errors
    for pool in ("worker", "master"):
        condition = store.get_pool(pool).condition("ImageConfigFailure")
        assert condition is not None and condition.status == "True"
        assert condition.reason == "tag-mirror" and "manifests/96-itms.yaml:" in condition.message
    assert store.get_pool("worker").condition("RenderDegraded").status == "False"
    shown = {c["type"]: c for c in pool_summary(store.get_pool("worker"), tally("worker", []))["status"]["conditions"]}
    assert shown["ImageConfigFailure"]["status"] == "True"  # GET /pools carries it

    (cluster / "manifests/96-itms.yaml").unlink()
    idms.write_text(IDMS.format(mirror="mirror2.example.com/ubi", policy="NeverContactSource"))
    third = render_cluster(cluster, store=store)
    assert third.ok
    assert _mirrors(third, "worker")["registry.access.redhat.com/ubi9/ubi-minimal"] == ["mirror2.example.com/ubi"]
    assert store.get_pool("worker").condition("ImageConfigFailure").status == "False"


@pytest.mark.parametrize(("name", "text", "where", "message"), [
    ("wildcard mirror", IDMS.format(mirror="'*.example.com/ubi'", policy="AllowContactingSource"),
     "manifests/95-doc.yaml:8:", 'invalid format for mirror "*.example.com/ubi"'),
    ("source among its mirrors", IDMS.format(mirror="registry.access.redhat.com/ubi9/ubi-minimal",
                                             policy="NeverContactSource"),
     "manifests/95-doc.yaml:10:", "cannot set mirrorSourcePolicy: NeverContactSource if the source"),
    ("allowed and blocked", _image("    allowedRegistries: [a.io]\n    blockedRegistries: [b.io]"),
     "manifests/95-doc.yaml:7:", "invalid images config: only one of AllowedRegistries or BlockedRegistries may be "
     "specified"),
    ("invalid scope", _image("    insecureRegistries: ['*.a.io/x']"),
     "manifests/95-doc.yaml:7:", 'invalid entry for insecure registries "*.a.io/x"'),
    # openshift/api ImageDigestMirrors.mirrors is `+listType=set`: the API server refuses a repeated mirror
    ("repeated mirror", IDMS.format(mirror="m.example.com/ubi\n    - m.example.com/ubi", policy="AllowContactingSource"),
     "manifests/95-doc.yaml:9:", 'Duplicate value: "m.example.com/ubi"'),
    # openshift/api types_image.go containerRuntimeSearchRegistries: MinItems=1, Format=hostname, listType=set
    ("no search registry", _image("    containerRuntimeSearchRegistries: []"), "manifests/95-doc.yaml:7:",
     "spec.registrySources.containerRuntimeSearchRegistries in body should have at least 1 items"),
    ("search registry with a port", _image("    containerRuntimeSearchRegistries: [reg.io, 'reg.io:5000']"),
     "manifests/95-doc.yaml:7:", 'in body must be of type hostname: "reg.io:5000"'),
    ("repeated search registry", _image("    containerRuntimeSearchRegistries: [reg.io, reg.io]"),
     "manifests/95-doc.yaml:7:", 'Duplicate value: "reg.io"'),
    # go-openapi strfmt IsHostname counts a label's octets (Go's len): 32 letters 'é' are 64 bytes, over 63
    ("search registry label over 63 octets", _image(f"    containerRuntimeSearchRegistries: [{'é' * 32}.io]"),
     "manifests/95-doc.yaml:7:", f'in body must be of type hostname: "{"é" * 32}.io"'),
], ids=lambda v: v if isinstance(v, str) and len(v) < 30 else "")
def test_the_mcos_refusals_in_its_words(cluster: Path, name: str, text: str, where: str, message: str) -> None:
    (cluster / "manifests/95-doc.yaml").write_text(text)
    result = render_cluster(cluster, store=MemoryStore())
    assert all(r.errors == () for r in result.pools.values())
    assert any(e.startswith(where) and message in e for e in result.errors), result.errors
    assert "99-worker-generated-registries" not in result.pools["worker"].sources


def test_image_config_files(cluster: Path) -> None:
    (cluster / "manifests/95-image.yaml").write_text(_image(
        sources="    blockedRegistries: [untrusted.com]\n    containerRuntimeSearchRegistries: [reg1.io]"))
    (cluster / "manifests/96-other.yaml").write_text(_image(
        name="other", sources="    allowedRegistries: [x.io]"))
    result = render_cluster(cluster, store=MemoryStore())
    assert result.ok, result.errors
    files = _files(result, "worker")
    assert b'"untrusted.com": [\n        {\n          "type": "reject"' in files["/etc/containers/policy.json"]
    assert files["/etc/containers/registries.conf.d/01-image-searchRegistries.conf"] == \
        b'unqualified-search-registries = ["reg1.io"]\nshort-name-mode = ""\nadditional-layer-store-auth-helper = ""\n'
    assert any("manifests/96-other.yaml" in w and "reads only the Image named 'cluster'" in w for w in result.warnings)


def test_a_document_that_does_not_parse_refuses_the_sync_and_keeps_the_mirrors(cluster: Path) -> None:
    store = MemoryStore()
    idms = cluster / "manifests/95-idms.yaml"
    idms.write_text(IDMS.format(mirror="mirror.example.com/ubi", policy="AllowContactingSource"))
    first = render_cluster(cluster, store=store)
    idms.write_text(IDMS.format(mirror="mirror.example.com/ubi", policy="AllowContactingSource")
                    .replace("  - mirrors:\n    - mirror.example.com/ubi\n", "  - mirrors: mirror.example.com/ubi\n"))
    second = render_cluster(cluster, store=store)
    assert all(p.errors == () for p in second.pools.values())
    assert any(e.startswith("manifests/95-idms.yaml:7:") and "expected a list of strings" in e
               for e in second.errors), second.errors
    assert _mirrors(second, "worker") == _mirrors(first, "worker")  # not silently dropped from the nodes
    condition = store.get_pool("master").condition("ImageConfigFailure")
    assert condition is not None and condition.status == "True" and condition.reason == "ubi9repo"


def _entry(render: Any) -> dict[str, Any]:
    files = render.pools["worker"].rendered.spec.config["storage"]["files"]
    return next(f for f in files if f["path"] == "/etc/containers/registries.conf")


@pytest.mark.parametrize(("change", "safe"), [
    ("add an ImageDigestMirrorSet", True),
    ("add an ImageTagMirrorSet", False),
    ("block a registry", False),
], ids=lambda v: v if isinstance(v, str) else "")
def test_the_drain_decision_on_what_the_renderer_writes(cluster: Path, change: str, safe: bool) -> None:
    """fleet/registries_conf.py (MCO isSafeContainerRegistryConfChanges) judging the renderer's own output, as the
    openshift-docs state it: creating an IDMS does not drain, an ITMS or a blocked registry does."""
    from fleet.registries_conf import registries_change_is_safe

    store = MemoryStore()
    (cluster / "manifests/95-idms.yaml").write_text(IDMS.format(mirror="m.example.com/ubi",
                                                                 policy="AllowContactingSource"))
    before = _entry(render_cluster(cluster, store=store))
    extra = {"add an ImageDigestMirrorSet": IDMS.replace("ubi9repo", "other").format(
                 mirror="m.example.com/other", policy="AllowContactingSource").replace("ubi9/ubi-minimal", "other"),
             "add an ImageTagMirrorSet": ITMS.replace("ubi9/ubi-minimal", "other"),
             "block a registry": _image("    blockedRegistries: [untrusted.com]")}[change]
    (cluster / "manifests/96-change.yaml").write_text(extra)
    after = _entry(render_cluster(cluster, store=store))
    assert after != before
    assert registries_change_is_safe(before, after) is safe
    assert registries_change_is_safe(after, before) is False  # taking it away again always drains


def test_a_wildcard_source_over_a_more_precise_entry_is_the_mcos_internal_error(cluster: Path) -> None:
    (cluster / "manifests/95-doc.yaml").write_text(IDMS.format(mirror="mirror.example.com", policy="AllowContactingSource")
                                                   .replace("registry.access.redhat.com/ubi9/ubi-minimal", "'*.example.org'")
                                                   + "---\n" + _image("    blockedRegistries: [a.example.org/x]"))
    result = render_cluster(cluster, store=MemoryStore())
    assert any(e.startswith("manifests/95-doc.yaml:9:") and "internal error: mirrorsAdjustedForNestedScope for a "
               'wildcard scope "*.example.org"' in e for e in result.errors), result.errors
