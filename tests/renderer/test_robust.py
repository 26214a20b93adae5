"""Whatever a manifest holds, rendering reports problems instead of raising."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fleet.store import MemoryStore
from renderer.load import load_text
from renderer.render import render_cluster

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5000), st.text(max_size=6),
                    st.sampled_from(["/etc/x", "3.5.0", "data:,x", "gzip", "a.service", "worker"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["path", "mode", "contents", "source", "name", "files", "units", "storage",
                                     "systemd", "ignition", "version", "dropins", "x"]), inner, max_size=4)),
    max_leaves=12)
spec = st.fixed_dictionaries({}, optional={
    "config": st.one_of(values, st.fixed_dictionaries({"ignition": st.just({"version": "3.5.0"})},
                                                      optional={"storage": values, "systemd": values,
                                                                "passwd": values})),
    "kernelArguments": values, "extensions": values, "fips": values, "kernelType": values, "osImageURL": values,
})
manifest = st.fixed_dictionaries({
    "apiVersion": st.sampled_from(["machineconfiguration.openshift.io/v1", "v1"]),
    "kind": st.sampled_from(["MachineConfig", "MachineConfigPool", "KubeletConfig", "ContainerRuntimeConfig"]),
    "metadata": st.one_of(values, st.just({"name": "50-worker-x",
                                           "labels": {"machineconfiguration.openshift.io/role": "worker"}})),
    "spec": st.one_of(values, spec),
})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(manifest, min_size=1, max_size=3))
def test_render_never_raises_on_bad_manifests(tmp_path: Path, docs: list[dict[str, Any]]) -> None:
    root = tmp_path / "fuzz"
    (root / "manifests").mkdir(parents=True, exist_ok=True)
    (root / "cluster.yaml").write_text("name: fuzz\n")
    for old in (root / "manifests").iterdir():
        old.unlink()
    for i, doc in enumerate(docs):
        (root / "manifests" / f"{i}.json").write_text(json.dumps(doc))
    result = render_cluster(root, store=MemoryStore())
    for pool in result.pools.values():
        assert all(isinstance(e, str) and e for e in pool.errors)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("{}[]:,-&*!|>'\"#%@` \n\tabc01.<")), max_size=60))
def test_loading_any_text_never_raises(text: str) -> None:
    docs, problems = load_text(text, "manifests/x.yaml")
    for p in problems:
        assert p.format().startswith("manifests/x.yaml")
    for doc in docs:
        doc.locate(("spec", "config", 0))


def test_a_pool_manifest_with_an_unusable_name_degrades_every_pool(tmp_path: Path) -> None:
    """Found by the property above: `metadata.name: ""` once made the render raise from the store."""
    (tmp_path / "manifests").mkdir()
    (tmp_path / "cluster.yaml").write_text("name: x\n")
    (tmp_path / "manifests" / "pool.yaml").write_text(
        "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfigPool\nmetadata:\n  name: ''\nspec: {}\n")
    result = render_cluster(tmp_path, store=MemoryStore())
    assert set(result.pools) == {"master", "worker"}
    assert all(any("$.metadata.name" in e for e in p.errors) for p in result.pools.values())
