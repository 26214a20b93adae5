"""TLS security profiles -> the kubelet's `tlsMinVersion` and `tlsCipherSuites`, as the MCO writes them.

MCO `pkg/controller/common/helpers.go: GetSecurityProfileCiphers`: the profile's type picks a spec from
openshift/api `config/v1/types_tlssecurityprofile.go: TLSProfiles` (Old, Intermediate, Modern) or the
`custom` block (Custom); no profile, or Custom without its block, means Intermediate. The OpenSSL cipher
names are mapped to IANA names with library-go `pkg/crypto: OpenSSLToIANACipherSuites`, which leaves
out the names it does not map (the TLS 1.3 suites, which Go does not let one configure, and DHE ones).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

TLS_VERSIONS = ("VersionTLS10", "VersionTLS11", "VersionTLS12", "VersionTLS13")
PROFILE_TYPES = ("Old", "Intermediate", "Modern", "Custom")

_TLS13 = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256")
_ECDHE_AEAD = ("ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
               "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305")
PROFILES: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "Old": ("VersionTLS10", (*_TLS13, *_ECDHE_AEAD, "ECDHE-ECDSA-AES128-SHA256", "ECDHE-RSA-AES128-SHA256",
                             "ECDHE-ECDSA-AES128-SHA", "ECDHE-RSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA384",
                             "ECDHE-RSA-AES256-SHA384", "ECDHE-ECDSA-AES256-SHA", "ECDHE-RSA-AES256-SHA",
                             "AES128-GCM-SHA256", "AES256-GCM-SHA384", "AES128-SHA256", "AES256-SHA256",
                             "AES128-SHA", "AES256-SHA", "DES-CBC3-SHA")),
    "Intermediate": ("VersionTLS12", (*_TLS13, *_ECDHE_AEAD)),
    "Modern": ("VersionTLS13", _TLS13),
}
OPENSSL_TO_IANA: Mapping[str, str] = {
    "ECDHE-ECDSA-AES128-GCM-SHA256": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "ECDHE-RSA-AES128-GCM-SHA256": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "ECDHE-ECDSA-AES256-GCM-SHA384": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "ECDHE-RSA-AES256-GCM-SHA384": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305": "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    "ECDHE-RSA-CHACHA20-POLY1305": "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    "ECDHE-ECDSA-AES128-SHA256": "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
    "ECDHE-RSA-AES128-SHA256": "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
    "AES128-GCM-SHA256": "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "AES256-GCM-SHA384": "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "AES128-SHA256": "TLS_RSA_WITH_AES_128_CBC_SHA256",
    "ECDHE-ECDSA-AES128-SHA": "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "ECDHE-RSA-AES128-SHA": "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "ECDHE-ECDSA-AES256-SHA": "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "ECDHE-RSA-AES256-SHA": "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "AES128-SHA": "TLS_RSA_WITH_AES_128_CBC_SHA",
    "AES256-SHA": "TLS_RSA_WITH_AES_256_CBC_SHA",
    "DES-CBC3-SHA": "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
}


def iana_ciphers(ciphers: Sequence[str]) -> list[str]:
    """library-go OpenSSLToIANACipherSuites: mapped names in order, unknown ones left out."""
    return [OPENSSL_TO_IANA[c] for c in ciphers if c in OPENSSL_TO_IANA]


def profile_settings(profile: Mapping[str, Any] | None) -> tuple[str, list[str]]:
    """(tlsMinVersion, tlsCipherSuites) for a checked `tlsSecurityProfile` (see `profile_problems`)."""
    kind = (profile or {}).get("type") or "Intermediate"
    if kind == "Custom":
        custom = (profile or {}).get("custom")
        if isinstance(custom, Mapping):
            return str(custom.get("minTLSVersion") or ""), iana_ciphers(list(custom.get("ciphers") or ()))
        kind = "Intermediate"
    version, ciphers = PROFILES.get(kind, PROFILES["Intermediate"])
    return version, iana_ciphers(ciphers)


def profile_problems(profile: Any) -> list[tuple[tuple[str, ...], str]]:
    """(path under the profile, message) for what the API server's schema refuses in a profile."""
    if not isinstance(profile, Mapping):
        return [((), "must be an object")]
    out: list[tuple[tuple[str, ...], str]] = []
    kind = profile.get("type")
    if kind not in (None, "", *PROFILE_TYPES):
        out.append((("type",), f'Unsupported value: "{kind}": supported values: '
                                + ", ".join(f'"{t}"' for t in PROFILE_TYPES)))
    custom = profile.get("custom")
    if custom is not None:
        if not isinstance(custom, Mapping):
            out.append((("custom",), "must be an object"))
        else:
            version = custom.get("minTLSVersion")
            if version not in (None, *TLS_VERSIONS):
                out.append((("custom", "minTLSVersion"), f'Unsupported value: "{version}": supported values: '
                                                         + ", ".join(f'"{v}"' for v in TLS_VERSIONS)))
            ciphers = custom.get("ciphers")
            if ciphers is not None and (not isinstance(ciphers, list)
                                        or not all(isinstance(c, str) for c in ciphers)):
                out.append((("custom", "ciphers"), "must be a list of cipher names"))
    for key in profile:
        if key not in ("type", "old", "intermediate", "modern", "custom"):
            out.append(((str(key),), f'unknown field "{key}"'))
    return out
