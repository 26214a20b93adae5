"""Problems found in the cluster directory, as data: where (file:line:col and $.field.path) and what.

Every stage (load, model, validate, merge) returns `Problem`s instead of raising, so that all of them are
collected and reported together; `render.py` decides what they mean for each pool.
"""

from __future__ import annotations

from dataclasses import dataclass

from ignition.report import path_str

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Problem:
    """One error or warning about user input; `code` is stable (tests assert it), `message` is for people."""

    code: str
    message: str
    source: str = ""          # "manifests/50-chrony.yaml" (relative to the cluster directory)
    path: Path = ()           # field path inside the YAML document
    line: int | None = None   # 1-based
    col: int | None = None    # 1-based
    severity: str = "error"   # "error" | "warning"

    def where(self) -> str:
        """`manifests/50-chrony.yaml:12:9` (as much of it as is known)."""
        if not self.source:
            return ""
        if self.line is None:
            return self.source
        return f"{self.source}:{self.line}:{self.col}" if self.col is not None else f"{self.source}:{self.line}"

    def format(self) -> str:
        """`manifests/50-chrony.yaml:12:9 $.spec.config.storage.files.0.path: path not absolute`."""
        head = " ".join(p for p in (self.where(), path_str(self.path) if self.path else "") if p)
        prefix = "warning: " if self.severity == "warning" else ""
        return f"{prefix}{head}: {self.message}" if head else f"{prefix}{self.message}"

    def __str__(self) -> str:
        return self.format()
