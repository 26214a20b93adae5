"""fleet/registries_conf.py: the drain decision for a registries.conf change, the cases of MCO
`pkg/daemon/drain_test.go` TestIsDrainRequired (those with only the CRI-O reload action) against
`pkg/daemon/drain.go` isSafeContainerRegistryConfChanges as it reads pull-from-mirror. Both files are decoded into
sysregistriesv2 structs there, so a key left out equals its zero value."""

from __future__ import annotations

from typing import Any

import pytest

from fleet.registries_conf import REGISTRIES_CONF, registries_change_is_safe
from renderer.generated import file_entry

REPO, REPO1 = "example.com/repo/test-img", "example.com/repo1/test-img1"
MIRROR, MIRROR1 = "mirror.com/repo/test-img", "mirror.com/repo1/test-img1"


def conf(*registries: str, search: tuple[str, ...] = ("example.com", "foo.com")) -> str:
    """A registries.conf with these `[[registry]]` tables."""
    return "unqualified-search-registries = [" + ", ".join(f'"{s}"' for s in search) + "]\n" + "".join(registries)


def reg(location: str, *mirrors: str, by_digest: bool | None = None, prefix: str = "", blocked: bool = False,
        pull: str = "") -> str:
    """A `[[registry]]` table as drain_test.go writes them; `pull` is every mirror's pull-from-mirror."""
    lines = ["[[registry]]", f'  prefix = "{prefix}"', f'  location = "{location}"']
    lines += [f"  mirror-by-digest-only = {str(by_digest).lower()}"] if by_digest is not None else []
    lines += ["  blocked = true"] if blocked else []
    for mirror in mirrors:
        lines += ["  [[registry.mirror]]", f'    location = "{mirror}"']
        lines += [f'    pull-from-mirror = "{pull}"'] if pull else []
    return "\n".join(lines) + "\n"


MC1 = conf(reg(REPO, MIRROR, by_digest=True), reg(REPO1, MIRROR1, by_digest=True))
MC2 = conf(reg(REPO, MIRROR, by_digest=True), reg(REPO1, MIRROR1, "mirror1.com/repo1/test-img1", by_digest=True))
MC3 = conf(reg(REPO, MIRROR, by_digest=True))
MC4 = conf(reg(REPO, MIRROR, by_digest=True), search=("example.com", "foo.com", "bar.com"))
MC6 = conf(reg(REPO, MIRROR, by_digest=True), reg(REPO1, by_digest=False))
MC7 = conf(reg(REPO, by_digest=True), reg(REPO1, MIRROR, by_digest=False))
MC8 = conf(reg(REPO, prefix="bar.com"))
MC9 = conf(reg(REPO, prefix="bar.com", blocked=True))
MC10 = conf(reg(REPO))
SEARCH = conf()
# a template's entry written without the keys the MCO's encoder writes, then the same entry as it writes it
BARE = SEARCH + '[[registry]]\nlocation = "quay.io/team"\n'
WRITTEN = SEARCH + """
[[registry]]
  prefix = ""
  location = "quay.io/team"
  blocked = false
  insecure = false
  [[registry.mirror]]
    location = "mirror.example.net/team"
    pull-from-mirror = "digest-only"
"""


def _entry(text: str) -> dict[str, Any]:
    return file_entry(REGISTRIES_CONF, text.encode())


@pytest.mark.parametrize(("old", "new", "safe"), [
    (MC1, MC1, True),     # no change in registry config
    # a new registry with mirror-by-digest-only and a mirror without pull-from-mirror: upstream's case expected no
    # drain when drain.go read mirror-by-digest-only; its allDigestOnlyMirror now asks every mirror of a new entry
    # for pull-from-mirror = "digest-only" (mirror-by-digest-only counts only for an entry without mirrors)
    (MC3, MC1, False),
    (MC3, conf(reg(REPO, MIRROR, by_digest=True), reg(REPO1, MIRROR1, pull="digest-only")), True),
    (MC3, conf(reg(REPO, MIRROR, by_digest=True), reg("example.com/other", by_digest=True)), True),
    (MC3, MC6, False),    # a new registry with mirror-by-digest-only set to false
    (MC1, MC3, False),    # a registry removed
    (MC1, MC2, True),     # a mirror added to a registry with mirror-by-digest-only
    (MC6, MC7, False),    # a mirror added to a registry without mirror-by-digest-only
    (MC2, MC1, False),    # a mirror removed
    (MC4, MC3, False),    # an unqualified-search-registries entry removed
    (MC3, MC4, True),     # an unqualified-search-registries entry added
    (MC8, MC10, False),   # a prefix changed
    (MC8, MC9, False),    # blocked changed
    (MC1, MC6, False),    # mirror-by-digest-only changed (and the mirror removed)
    # not upstream: a key left out is its zero value, as toml.Decode into sysregistriesv2.Registry leaves it
    (BARE, WRITTEN, True),
    (WRITTEN.replace('"digest-only"', '""'), WRITTEN.replace('    pull-from-mirror = "digest-only"\n', ""), True),
], ids=lambda v: None)
def test_is_drain_required_for_registries_conf(old: str, new: str, safe: bool) -> None:
    assert registries_change_is_safe(_entry(old), _entry(new)) is safe
