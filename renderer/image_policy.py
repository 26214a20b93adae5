"""/etc/containers/policy.json for allowed and blocked registries (MCO
`pkg/controller/container-runtime-config/helpers.go` `updatePolicyJSON`).

- Allowed and blocked registries both set is refused (`invalid images config: only one of AllowedRegistries or
  BlockedRegistries may be specified`), unless the allowed list is exactly the release payload's repository,
  which the controller adds itself when a blocked registry holds the payload but a mirror serves it.
- Allowed: `default` becomes `reject` and every allowed scope `insecureAcceptAnything`; blocked: `default`
  becomes `insecureAcceptAnything` and every blocked scope `reject`. The scopes replace the template's
  `docker` transport, and `atomic` gets the same scopes but those with three or more `/` (it cannot express them).
- The template's other transports are kept; the file is Go's `json.MarshalIndent(policy, "", "  ")`: `default`
  then `transports`, map keys sorted, two-space indent, no final newline.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from renderer.errors import RendererError

# policy.json of the MCO's templates (and TestUpdatePolicyJSON's): accept anything, docker-daemon too
DEFAULT_POLICY = b'{"default":[{"type":"insecureAcceptAnything"}],"transports":{"docker-daemon":{"":[{"type":' \
                 b'"insecureAcceptAnything"}]}}}'
ONLY_ONE = "invalid images config: only one of AllowedRegistries or BlockedRegistries may be specified"
_ACCEPT: dict[str, Any] = {"type": "insecureAcceptAnything"}
_REJECT: dict[str, Any] = {"type": "reject"}


class PolicyError(RendererError):
    """The MCO refuses this policy (its words)."""

    def __init__(self, message: str) -> None:
        super().__init__("", message)


def _go_json(value: Any) -> str:
    """encoding/json's MarshalIndent text: HTML characters escaped as Go escapes them."""
    text = json.dumps(value, indent=2, ensure_ascii=False, separators=(",", ": "))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _sorted(scopes: Mapping[str, Any]) -> dict[str, Any]:
    return {scope: scopes[scope] for scope in sorted(scopes)}


def update_policy(template: bytes, blocked: Sequence[str], allowed: Sequence[str], payload_repo: str | None) -> bytes:
    """The policy.json the MCO writes over the role's template for these allowed and blocked scopes."""
    if allowed and blocked and not (len(allowed) == 1 and allowed[0] == payload_repo):
        raise PolicyError(ONLY_ONE)
    try:
        policy = json.loads(template)
    except (ValueError, UnicodeDecodeError) as exc:
        raise PolicyError(f"error decoding policy json: {exc}") from exc
    if not isinstance(policy, dict) or not isinstance(policy.get("transports", {}), dict):
        raise PolicyError("error decoding policy json: not a policy object")
    transports = dict(policy.get("transports") or {})
    default = policy.get("default", [])
    scopes: dict[str, Any] = {}
    if allowed:
        default = [_REJECT]
        scopes.update({reg: [_ACCEPT] for reg in allowed})
    if blocked:
        default = [_ACCEPT]
        scopes.update({reg: [_REJECT] for reg in blocked})
    if scopes:
        transports["docker"] = _sorted(scopes)
        transports["atomic"] = _sorted({k: v for k, v in scopes.items() if k.count("/") < 3})
    out = {"default": default, "transports": {name: _sorted(transports[name]) if isinstance(transports[name], dict)
                                              else transports[name] for name in sorted(transports)}}
    return _go_json(out).encode()
