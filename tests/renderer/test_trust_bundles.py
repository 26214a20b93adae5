"""The CA bundles the MCO puts on every node (MCO `pkg/operator/sync.go`, `pkg/daemon/certificate_writer.go`): the
`user-ca-bundle` ConfigMap's `ca-bundle.crt` in the ca-trust anchors, the `additionalTrustedCA` ConfigMap's keys
under /etc/docker/certs.d, both from `openshift-config`; the ConfigMap the cluster `Proxy` names in
`spec.trustedCA` appended to the user bundle (MCO `pkg/operator/sync.go` `syncRenderConfig`); a bundle without a
certificate is refused in the MCO's words and the pools keep the last successful render's."""

from __future__ import annotations

import base64
from pathlib import Path

from fleet.store import MemoryStore
from renderer.render import render_cluster
from renderer.trust_bundles import has_certificate
from server.certs import init_certs
from tests.renderer.documents import image
from tests.renderer.documents import rendered_files as _files

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  namespace: {namespace}
data:
{data}
"""
IMAGE = image("  additionalTrustedCA:\n    name: registry-config")


def _pem(tmp: Path) -> str:
    init_certs(tmp / "certs", dns=["registry.example.com"])
    return (tmp / "certs" / "ca.crt").read_text()


def _data(**entries: str) -> str:
    return "\n".join(f"  {key}: |\n" + "".join(f"    {line}\n" for line in value.splitlines())
                     for key, value in entries.items())


def test_pem_check_is_go_append_certs_from_pem(tmp_path: Path) -> None:
    pem = _pem(tmp_path)
    assert has_certificate(pem.encode())
    assert has_certificate(b"junk\n" + pem.encode() + b"more junk\n")
    assert not has_certificate(b"-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n")
    assert not has_certificate(b"")


def test_user_bundle_and_registry_cas_reach_every_pool(cluster: Path, tmp_path: Path) -> None:
    pem = _pem(tmp_path)
    manifests = cluster / "manifests"
    (manifests / "95-user-ca.yaml").write_text(CONFIGMAP.format(name="user-ca-bundle", namespace="openshift-config",
                                                                 data=_data(**{"ca-bundle.crt": pem})))
    (manifests / "95-registry-ca.yaml").write_text(CONFIGMAP.format(
        name="registry-config", namespace="openshift-config",
        data=_data(**{"registry.example.com": pem}) + "\n  registry-with-port.example.com..5000: "
        + base64.b64encode(pem.encode()).decode()))
    (manifests / "95-image.yaml").write_text(IMAGE)
    result = render_cluster(cluster, store=MemoryStore())
    assert result.ok, result.errors
    for pool in ("worker", "master", "infra"):
        files = _files(result.pools[pool].rendered)
        assert files["/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt"] == pem.encode()
        assert files["/etc/docker/certs.d/registry.example.com/ca.crt"] == pem.encode()
        assert files["/etc/docker/certs.d/registry-with-port.example.com:5000/ca.crt"] == pem.encode()
        assert f"99-{pool}-generated-trusted-ca" in result.pools[pool].sources
    entry = next(f for f in result.pools["worker"].rendered.spec.config["storage"]["files"]
                 if f["path"].endswith("openshift-config-user-ca-bundle.crt"))
    assert entry["mode"] == 0o644


def test_a_bundle_without_a_certificate_is_refused_and_the_last_one_kept(cluster: Path, tmp_path: Path) -> None:
    pem = _pem(tmp_path)
    store = MemoryStore()
    user = cluster / "manifests" / "95-user-ca.yaml"
    user.write_text(CONFIGMAP.format(name="user-ca-bundle", namespace="openshift-config",
                                     data=_data(**{"ca-bundle.crt": pem})))
    assert render_cluster(cluster, store=store).ok
    user.write_text(CONFIGMAP.format(name="user-ca-bundle", namespace="openshift-config",
                                     data=_data(**{"ca-bundle.crt": "not a certificate"})))
    second = render_cluster(cluster, store=store)
    assert all(p.errors == () for p in second.pools.values())
    assert any(e.startswith("manifests/95-user-ca.yaml:") and "configmap openshift-config/user-ca-bundle doesn't "
               "have a valid PEM bundle" in e for e in second.errors), second.errors
    files = _files(second.pools["worker"].rendered)
    assert files["/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt"] == pem.encode()
    condition = store.get_pool("worker").condition("ImageConfigFailure")
    assert condition is not None and condition.status == "True" and condition.reason == "user-ca-bundle"


def test_missing_configmap_and_other_namespaces_are_warnings(cluster: Path, tmp_path: Path) -> None:
    (cluster / "manifests" / "95-image.yaml").write_text(IMAGE)
    (cluster / "manifests" / "96-elsewhere.yaml").write_text(CONFIGMAP.format(
        name="user-ca-bundle", namespace="default", data=_data(**{"ca-bundle.crt": _pem(tmp_path)})))
    result = render_cluster(cluster, store=MemoryStore())
    assert result.ok, result.errors
    assert any("could not find configmap specified in image.config.openshift.io/cluster with the name "
               "registry-config" in w for w in result.warnings), result.warnings
    assert any("manifests/96-elsewhere.yaml" in w and "not in the openshift-config namespace" in w
               for w in result.warnings)
    assert "/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt" not in \
        _files(result.pools["worker"].rendered)


PROXY = """\
apiVersion: config.openshift.io/v1
kind: Proxy
metadata:
  name: cluster
spec:
  httpsProxy: http://proxy.example.com:3128
  trustedCA:
    name: {name}
"""
USER_BUNDLE = "/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt"


def test_the_proxys_trusted_ca_is_appended_to_the_user_bundle(cluster: Path, tmp_path: Path) -> None:
    """`syncRenderConfig`: trustBundle = user-ca-bundle's ca-bundle.crt, then (when `proxy.Spec.TrustedCA.Name` is
    neither "" nor "user-ca-bundle") the named ConfigMap's, into ControllerConfig `additionalTrustBundle`, which
    `certificate_writer.go` writes to openshift-config-user-ca-bundle.crt."""
    user, proxy = _pem(tmp_path / "user"), _pem(tmp_path / "proxy")
    assert user != proxy
    manifests = cluster / "manifests"
    (manifests / "95-user-ca.yaml").write_text(CONFIGMAP.format(name="user-ca-bundle", namespace="openshift-config",
                                                                 data=_data(**{"ca-bundle.crt": user})))
    (manifests / "95-proxy-ca.yaml").write_text(CONFIGMAP.format(name="proxy-ca", namespace="openshift-config",
                                                                  data=_data(**{"ca-bundle.crt": proxy})))
    (manifests / "95-proxy.yaml").write_text(PROXY.format(name="proxy-ca"))
    result = render_cluster(cluster, store=MemoryStore())
    assert result.ok, result.errors
    for pool in ("worker", "master", "infra"):
        assert _files(result.pools[pool].rendered)[USER_BUNDLE] == (user + proxy).encode()
    assert any("manifests/95-proxy.yaml" in w and "spec.httpsProxy is not applied" in w for w in result.warnings)
    (manifests / "95-proxy.yaml").write_text(PROXY.format(name="user-ca-bundle"))  # named twice: written once
    again = render_cluster(cluster, store=MemoryStore())
    assert again.ok and _files(again.pools["worker"].rendered)[USER_BUNDLE] == user.encode()
    (manifests / "95-user-ca.yaml").unlink()  # the proxy's bundle alone
    (manifests / "95-proxy.yaml").write_text(PROXY.format(name="proxy-ca"))
    alone = render_cluster(cluster, store=MemoryStore())
    assert alone.ok and _files(alone.pools["worker"].rendered)[USER_BUNDLE] == proxy.encode()


def test_a_trusted_ca_naming_no_configmap_is_refused_and_the_last_bundle_kept(cluster: Path, tmp_path: Path) -> None:
    """Unlike `user-ca-bundle` (NotFound tolerated), `getCAsFromConfigMap` for the Proxy's ConfigMap returns the
    lister's NotFound error and the sync fails."""
    proxy = _pem(tmp_path)
    manifests = cluster / "manifests"
    (manifests / "95-proxy-ca.yaml").write_text(CONFIGMAP.format(name="proxy-ca", namespace="openshift-config",
                                                                  data=_data(**{"ca-bundle.crt": proxy})))
    (manifests / "95-proxy.yaml").write_text(PROXY.format(name="proxy-ca"))
    store = MemoryStore()
    assert render_cluster(cluster, store=store).ok
    (manifests / "95-proxy.yaml").write_text(PROXY.format(name="proxy-cas"))
    second = render_cluster(cluster, store=store)
    assert any(e.startswith("manifests/95-proxy.yaml:") and 'configmap "proxy-cas" not found' in e
               for e in second.errors), second.errors
    assert _files(second.pools["worker"].rendered)[USER_BUNDLE] == proxy.encode()
    condition = store.get_pool("worker").condition("ImageConfigFailure")
    assert condition is not None and condition.status == "True" and condition.reason == "cluster"


def test_base64_values_wrapped_in_lines_are_decoded_as_go_decodes_them(cluster: Path, tmp_path: Path) -> None:
    # sync.go getCAsFromConfigMap and the registry CAs decode a value with base64.StdEncoding.DecodeString, which
    # ignores '\r' and '\n': `base64`'s 76-column output (a YAML block) is the certificate, not text to refuse
    pem = _pem(tmp_path)
    wrapped = base64.encodebytes(pem.encode()).decode()
    assert "\n" in wrapped.strip()
    manifests = cluster / "manifests"
    (manifests / "95-user-ca.yaml").write_text(CONFIGMAP.format(name="user-ca-bundle", namespace="openshift-config",
                                                                 data=_data(**{"ca-bundle.crt": wrapped})))
    (manifests / "95-registry-ca.yaml").write_text(CONFIGMAP.format(name="registry-config", namespace="openshift-config",
                                                                     data=_data(**{"registry.example.com": wrapped})))
    (manifests / "95-image.yaml").write_text(IMAGE)
    result = render_cluster(cluster, store=MemoryStore())
    assert result.ok, result.errors
    files = _files(result.pools["worker"].rendered)
    assert files["/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt"] == pem.encode()
    assert files["/etc/docker/certs.d/registry.example.com/ca.crt"] == pem.encode()
