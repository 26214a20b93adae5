"""Failure kinds of the applier: temporary ones are retried, permanent ones degrade the node with a message.

Every error carries `path`: the config field, file or endpoint it is about, so the Degraded message
says where.
"""

from __future__ import annotations


class ApplyError(Exception):
    """Base: something the applier could not do; `path` names the object."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


class TemporaryError(ApplyError):
    """Worth retrying (server away, lock held, network), not sooner than `delay` seconds (0: the backoff decides)."""

    def __init__(self, path: str, message: str, *, delay: float = 0.0) -> None:
        super().__init__(path, message)
        self.delay = delay


class PermanentError(ApplyError):
    """Retrying will not help until the config or the node changes: the node goes Degraded."""


class Unreconcilable(PermanentError):
    """The change cannot be applied on a running node (MCO `pkg/controller/common/reconcile.go`: isConfigReconcilable); nothing was changed."""
