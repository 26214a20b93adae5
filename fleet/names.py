"""Object names: Kubernetes DNS names, the one check for every name that crosses a boundary.

Where it sits: pool, node and rendered-config names in the stores and on the server's routes, MachineConfig
names in manifests, the pool of a pointer config and a machine's hostname all follow apimachinery's
`IsDNS1123Subdomain` and `IsDNS1123Label` (k8s.io/apimachinery/pkg/util/validation/validation.go): lowercase
`a-z`, `0-9` and `-`, each dot-separated label starting and ending with a letter or digit; a subdomain at
most 253 characters, a label at most 63. Names arrive from the network: the whole string is checked
(one character class, no backtracking, no end anchor that a final newline slips past), then where dots
and hyphens stand.
"""

from __future__ import annotations

import re

__all__ = ["DNS_LABEL_MAX", "DNS_SUBDOMAIN_MAX", "MAX_NAME", "is_dns_label", "is_dns_subdomain", "valid_name"]

DNS_SUBDOMAIN_MAX = 253
DNS_LABEL_MAX = 63
# Names the stores keep: a directory store writes each object as `<name>.json` through a temporary name,
# which must stay under the file systems' 255-byte limit.
MAX_NAME = 236
_SUBDOMAIN_CHARS = re.compile(r"[-a-z0-9.]+")
_LABEL_CHARS = re.compile(r"[-a-z0-9]+")
_EDGES = frozenset("-.")


def is_dns_label(name: object, max_length: int = DNS_LABEL_MAX) -> bool:
    """Whether `name` is an RFC 1123 DNS label (`IsDNS1123Label`)."""
    return (isinstance(name, str) and 0 < len(name) <= max_length and _LABEL_CHARS.fullmatch(name) is not None
            and name[0] != "-" and name[-1] != "-")


def is_dns_subdomain(name: object, max_length: int = DNS_SUBDOMAIN_MAX) -> bool:
    """Whether `name` is an RFC 1123 DNS subdomain name (`IsDNS1123Subdomain`) of at most `max_length`."""
    return (isinstance(name, str) and 0 < len(name) <= max_length and _SUBDOMAIN_CHARS.fullmatch(name) is not None
            and name[0] not in _EDGES and name[-1] not in _EDGES
            and ".." not in name and ".-" not in name and "-." not in name)


def valid_name(name: object) -> bool:
    """Whether `name` can name a stored object: a DNS subdomain name of at most MAX_NAME characters."""
    return is_dns_subdomain(name, MAX_NAME)
