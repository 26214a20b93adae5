"""Builders for the registries tests: mirror sets and image configs as the manifests would give them."""

from __future__ import annotations

from collections.abc import Sequence

from renderer.registries_model import ICSP, IDMS, ITMS, ImageConfig, MirrorRule, MirrorSet
from renderer.shape import Origin

Rule = tuple[str, Sequence[str]] | tuple[str, Sequence[str], str]


def mirror_set(kind: str, *rules: Rule, name: str = "test") -> MirrorSet:
    """A mirror set of `kind` with (source, mirrors[, mirrorSourcePolicy]) rules."""
    key = {IDMS: "imageDigestMirrors", ITMS: "imageTagMirrors", ICSP: "repositoryDigestMirrors"}[kind]
    return MirrorSet(kind, name, tuple(MirrorRule(r[0], tuple(r[1]), r[2] if len(r) > 2 else "",  # type: ignore[misc]
                                                  ("spec", key, i)) for i, r in enumerate(rules)),
                     Origin(f"manifests/{name}.yaml", 1))


def idms(*rules: Rule, name: str = "idms") -> MirrorSet:
    """An ImageDigestMirrorSet."""
    return mirror_set(IDMS, *rules, name=name)


def itms(*rules: Rule, name: str = "itms") -> MirrorSet:
    """An ImageTagMirrorSet."""
    return mirror_set(ITMS, *rules, name=name)


def icsp(*rules: Rule, name: str = "icsp") -> MirrorSet:
    """An ImageContentSourcePolicy."""
    return mirror_set(ICSP, *rules, name=name)


def image(*, allowed: Sequence[str] | None = None, blocked: Sequence[str] | None = None,
          insecure: Sequence[str] | None = None, search: Sequence[str] | None = None) -> ImageConfig:
    """The Image `cluster`."""
    def t(v: Sequence[str] | None) -> tuple[str, ...] | None:
        return None if v is None else tuple(v)
    return ImageConfig("cluster", t(allowed), t(blocked), t(insecure), t(search), "", Origin("manifests/image.yaml", 1))
