"""The cluster's CA bundles on every node, as the MCO puts them there: `99-<pool>-generated-trusted-ca`.

- The user CA bundle: key `ca-bundle.crt` of the ConfigMap `user-ca-bundle` in `openshift-config` (MCO
  `pkg/operator/sync.go` `syncRenderConfig`: `getCAsFromConfigMap("openshift-config", "user-ca-bundle",
  "ca-bundle.crt")`, into `ControllerConfig.spec.additionalTrustBundle`), which must hold at least one PEM
  certificate (`configmap openshift-config/user-ca-bundle doesn't have a valid PEM bundle`), is written to
  /etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt (MCO `pkg/daemon/certificate_writer.go`,
  mode 0644 as `writeFileAtomicallyWithDefaults` writes a new file). A value that decodes as base64 is
  decoded first, as `getCAsFromConfigMap` does.
- The proxy's trusted CA: when the `Proxy` config `cluster` names a ConfigMap in `spec.trustedCA` other than
  `user-ca-bundle`, its `ca-bundle.crt` is appended to the same file (`syncRenderConfig`: "this is the trusted
  bundle specific for proxy things"; `proxy.Spec.TrustedCA.Name != "user-ca-bundle"`). Unlike `user-ca-bundle`,
  whose absence is no error, a missing named ConfigMap is (`getCAsFromConfigMap` returns the NotFound error and
  the sync fails: `configmap "NAME" not found`), as is a missing key or a bundle without a certificate.
- The registry CAs: every key of the ConfigMap in `openshift-config` that the `Image` config `cluster` names in
  `spec.additionalTrustedCA` (`sync.go`: `imgRegistryUsrData`, keys in sorted order, `data` then
  `binaryData`) is a registry host, `..` standing for `:` before a port; its certificate is written to
  /etc/docker/certs.d/<host[:port]>/ca.crt (`certificate_writer.go`, `imageCAFilePath`). A name that names no
  ConfigMap is the MCO's warning (`could not find configmap specified in image.config.openshift.io/cluster
  with the name ...`), and nothing is written.

The MCO's daemon writes these outside any MachineConfig; here they travel in the rendered config, so every
pool gets them (the MachineConfig is labelled with the pool as role). A change to the user bundle restarts
coreos-update-ca-trust and CRI-O (the MCO's default disruption policy for that path); a registry CA change
takes a reboot unless the cluster's nodeDisruptionPolicy names /etc/docker/certs.d. A refused ConfigMap is an
`ImageConfigFailure` and the pools keep the bundles of the last successful render.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

from cryptography import x509

from renderer.generated import Failure, Generated, file_entry, generated_machine_config
from renderer.model import MachineConfigPool
from renderer.problems import Problem
from renderer.registries_generated import CONDITION
from renderer.registries_model import CONFIG_NAMESPACE, ConfigMap, ImageConfig, ProxyConfig

USER_CA_BUNDLE = "/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt"
USER_CA_CONFIGMAP, USER_CA_KEY = "user-ca-bundle", "ca-bundle.crt"
REGISTRY_CA_DIR = "/etc/docker/certs.d"
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._")
_BEGIN, _END = "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----"


def _value(text: str) -> bytes:
    """A ConfigMap value as the MCO reads it: base64-decoded when it is base64 (Go's `StdEncoding.DecodeString`,
    which skips '\r' and '\n', so a value wrapped in lines is base64 too), else the text."""
    try:
        return base64.b64decode(text.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return text.encode()


def has_certificate(pem: bytes) -> bool:
    """Go's `CertPool.AppendCertsFromPEM`: at least one CERTIFICATE block that parses."""
    lines = pem.decode("utf-8", "replace").splitlines()
    body: list[str] | None = None
    for line in lines:
        line = line.strip()
        if line == _BEGIN:
            body = []
        elif line == _END and body is not None:
            try:
                x509.load_der_x509_certificate(base64.b64decode("".join(body), validate=True))
                return True
            except (binascii.Error, ValueError):
                pass
            body = None
        elif body is not None:
            body.append(line)
    return False


def _problem(cm: ConfigMap, path: tuple[str, ...], message: str, code: str, severity: str = "error") -> Problem:
    if cm.doc is not None:
        return cm.doc.problem(code, path, message, severity=severity)
    return Problem(code, message, cm.origin.source, path, cm.origin.line, severity=severity)


Refusal = tuple[str, str, Problem]  # (kind, name) of the refused document, and why


def _bundle(cm: ConfigMap) -> tuple[bytes, Problem | None]:
    """`ca-bundle.crt` of a ConfigMap as `getCAsFromConfigMap` reads it, and the MCO's refusal of it (if any)."""
    if USER_CA_KEY in cm.binary:
        bundle = cm.binary[USER_CA_KEY]
    elif USER_CA_KEY in cm.data:
        bundle = _value(cm.data[USER_CA_KEY])
    else:
        return b"", _problem(cm, ("data",), f"{USER_CA_KEY} not found in {CONFIG_NAMESPACE}/{cm.name}", "ca-bundle-key")
    if bundle and not has_certificate(bundle):
        return b"", _problem(cm, ("data", USER_CA_KEY), f"configmap {CONFIG_NAMESPACE}/{cm.name} doesn't have a valid "
                             "PEM bundle", "ca-bundle-pem")
    return bundle, None


def _proxy_bundle(maps: dict[str, ConfigMap], proxy: ProxyConfig | None) -> tuple[bytes, Refusal | None]:
    """The proxy's trusted CA bundle (b"" when the Proxy names none, or `user-ca-bundle`), or its refusal."""
    name = proxy.trusted_ca if proxy is not None else ""
    if not name or name == USER_CA_CONFIGMAP:
        return b"", None
    assert proxy is not None
    cm = maps.get(name)
    if cm is None:
        message = f'configmap "{name}" not found'
        path = ("spec", "trustedCA", "name")
        problem = proxy.doc.problem("ca-configmap", path, message) if proxy.doc is not None else \
            Problem("ca-configmap", message, proxy.origin.source, path, proxy.origin.line)
        return b"", ("Proxy", proxy.name, problem)
    bundle, refused = _bundle(cm)
    return bundle, (("ConfigMap", cm.name, refused) if refused is not None else None)


def trust_files(config_maps: Sequence[ConfigMap], image: ImageConfig | None,
                proxy: ProxyConfig | None = None) -> tuple[list[tuple[str, bytes]], list[Refusal], list[Problem]]:
    """(path, contents) of the CA files, refusals by (kind, name) of the refused document, and warnings."""
    maps = {cm.name: cm for cm in config_maps if cm.namespace == CONFIG_NAMESPACE}
    files: list[tuple[str, bytes]] = []
    refusals: list[Refusal] = []
    warnings: list[Problem] = []
    trusted = b""
    user = maps.get(USER_CA_CONFIGMAP)
    if user is not None:
        trusted, refused = _bundle(user)
        if refused is not None:
            refusals.append(("ConfigMap", user.name, refused))
    proxy_bundle, proxy_refused = _proxy_bundle(maps, proxy)
    if proxy_refused is not None:
        refusals.append(proxy_refused)
    trusted += proxy_bundle
    if trusted:
        files.append((USER_CA_BUNDLE, trusted))
    name = image.additional_ca if image is not None else ""
    if name:
        cm = maps.get(name)
        if cm is None:
            assert image is not None
            where = image.doc.problem("ca-configmap", ("spec", "additionalTrustedCA", "name"), "", severity="warning") \
                if image.doc is not None else Problem("ca-configmap", "", image.origin.source, severity="warning")
            warnings.append(Problem(where.code, "could not find configmap specified in image.config.openshift.io/"
                                    f"cluster with the name {name}", where.source, where.path, where.line,
                                    where.col, severity="warning"))
        else:
            entries: list[tuple[str, bytes, tuple[str, ...]]] = [(k, _value(cm.data[k]), ("data", k))
                                                                  for k in sorted(cm.data)]
            entries += [(k, cm.binary[k], ("binaryData", k)) for k in sorted(cm.binary)]
            for key, data, path in entries:
                if not set(key) <= _KEY_CHARS or key in (".", ".."):
                    refusals.append(("ConfigMap", cm.name, _problem(cm, path, "a ConfigMap key must consist of "
                                     f"alphanumeric characters, '-', '_' or '.': {key!r}", "ca-key")))
                    continue
                files.append((f"{REGISTRY_CA_DIR}/{key.replace('..', ':')}/ca.crt", data))
    return files, refusals, warnings


def generate_trust_bundles(config_maps: Sequence[ConfigMap], image: ImageConfig | None,
                           pools: Sequence[MachineConfigPool], *,
                           broken: Sequence[tuple[str, str, tuple[Problem, ...]]] = (),
                           proxy: ProxyConfig | None = None) -> Generated:
    """Every pool's `99-<pool>-generated-trusted-ca` (module docstring), refusals and warnings; `broken`:
    ConfigMaps of openshift-config and Proxy configs that did not parse (kind, name, errors), refused as the API
    server would."""
    files, refusals, warnings = trust_files(config_maps, image, proxy)
    configs: dict[str, tuple[Any, ...]] = {}
    failures: dict[str, tuple[Failure, ...]] = {}
    origin = next((cm.origin for cm in config_maps if cm.namespace == CONFIG_NAMESPACE), None)
    for pool in (p for p in pools if not p.broken):
        name = f"99-{pool.name}-generated-trusted-ca"
        if refusals or broken:
            by_doc: dict[tuple[str, str], list[Problem]] = {}
            for kind, doc_name, problem in refusals:
                by_doc.setdefault((kind, doc_name), []).append(problem)
            for kind, doc_name, errors in broken:
                by_doc.setdefault((kind, doc_name), []).extend(errors)
            failures[pool.name] = tuple(Failure(kind, doc_name, name, tuple(found), condition=CONDITION)
                                        for (kind, doc_name), found in by_doc.items())
        elif files and origin is not None:
            configs[pool.name] = (generated_machine_config(name, pool.name, [file_entry(p, d) for p, d in files],
                                                           origin),)
    return Generated(configs=configs, problems={"": tuple(warnings)}, failures=failures)
