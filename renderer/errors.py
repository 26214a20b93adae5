"""The renderer's exceptions: one base (RendererError), each case a subclass. `mco` maps them to exit codes in
one table (cli/errors.py). Problems inside a cluster directory are not exceptions but data (problems.py):
these are raised only when the directory cannot be rendered at all, or internally between stages."""

from __future__ import annotations


class RendererError(Exception):
    """Base of the renderer's exceptions; `path` names the file or object concerned."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


class ClusterUnusable(RendererError):
    """The cluster directory cannot be rendered at all: what `render_cluster` and `load_inputs` raise."""


class ClusterDirectoryMissing(ClusterUnusable):
    """The cluster directory, or its cluster.yaml, does not exist."""


class ClusterFileInvalid(ClusterUnusable):
    """cluster.yaml was read and is not a usable cluster file; `problems` say where (file:line:col, field)."""

    def __init__(self, problems: list) -> None:  # type: ignore[type-arg]  # list[problems.Problem]
        super().__init__("cluster.yaml", "; ".join(p.format() for p in problems))
        self.problems = problems


class StoreWriteFailed(ClusterUnusable):
    """The store could not be read or written during a render (nothing was half-written)."""
