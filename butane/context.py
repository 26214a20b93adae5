"""What one Butane translation carries along (butane/translate.py and the sugar modules): the spec,
the files directory, the problems found and the translation map from JSON paths back to YAML paths."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from butane.report import Problems, YPath
from butane.schema import BNode, snake
from butane.variants import Spec
from ignition.merge import CHILD, merge_with_transcript

JPath = tuple[str | int, ...]
RESOURCE_TYPES = ("Resource", "FileContents", "ConfigReference", "CaReference")


@dataclass
class Context:
    """What one translation needs: the spec, the files directory, where problems and translations go."""

    spec: Spec
    files_dir: str | None
    allow_compression: bool = True
    problems: Problems = field(default_factory=Problems)
    tmap: dict[JPath, YPath] = field(default_factory=dict)
    prefixes: dict[JPath, YPath] = field(default_factory=dict)
    commons: dict[JPath, YPath] = field(default_factory=dict)
    parent_sources: Any = None  # a Context holding the sources of a generated parent config (merge_under)

    def translated(self, jpath: JPath, ypath: YPath) -> None:
        """Record that output `jpath` came from input `ypath`."""
        self.tmap[tuple(jpath)] = tuple(ypath)

    def prefix(self, jprefix: JPath, yprefix: YPath) -> None:
        """Record that everything under output `jprefix` mirrors input `yprefix` (a moved list item)."""
        self.prefixes[tuple(jprefix)] = tuple(yprefix)

    def to_yaml(self, jpath: JPath) -> YPath:
        """The input path an output path came from (Butane's TranslateReportPaths, snake_case fallback)."""
        jpath = tuple(jpath)
        if jpath in self.tmap:
            return self.tmap[jpath]
        for cut in range(len(jpath), 0, -1):
            head = jpath[:cut]
            if head in self.commons:
                return self.commons[head]
            if head in self.prefixes:
                return self.prefixes[head] + snake_path(jpath[cut:])
        return snake_path(jpath)

    def common(self, jprefix: JPath, ypath: YPath) -> None:
        """Record that everything under output `jprefix` was generated from input `ypath` (Butane's
        AddFromCommonSource)."""
        self.commons[tuple(jprefix)] = tuple(ypath)

    def merge_under(self, parent: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
        """Ignition-merge `config` onto generated `parent` (Butane's MergeTranslatedConfigs), keeping every
        output path's source: parent paths keep their recorded sources, child paths their old ones."""
        parent = {**parent, "ignition": {"version": self.spec.ignition}}
        merged, transcript = merge_with_transcript(parent, config)
        old_child = Context(
            self.spec, self.files_dir, tmap=self.tmap, prefixes=self.prefixes, commons=self.commons
        )
        old_parent = self.parent_sources
        tmap: dict[JPath, YPath] = {}
        for origin in transcript:
            source = tuple(origin.source)
            result = tuple(origin.result)
            ypath = old_child.to_yaml(source) if origin.side == CHILD else old_parent.to_yaml(source)
            tmap.setdefault(result, ypath)
            if len(source) == len(result):
                for k in range(1, len(result)):
                    origin_head = source[:k]
                    head_y = (
                        old_child.to_yaml(origin_head)
                        if origin.side == CHILD
                        else old_parent.to_yaml(origin_head)
                    )
                    tmap.setdefault(result[:k], head_y)
        self.tmap, self.prefixes, self.commons = tmap, {}, {}
        self.parent_sources = Context(self.spec, self.files_dir)
        return merged


def snake_path(path: JPath) -> YPath:
    return tuple(snake(p) if isinstance(p, str) else p for p in path)


def butane_type(node: BNode) -> str:
    return node.go.split(".")[-1]


# ---- the copy, with leaf sugar ---------------------------------------------------------------------------
