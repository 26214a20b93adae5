"""What every part of the agent shares: how it runs on this node (`AgentSettings`) and what a sync ended with
(`SyncResult`). applier/agent.py composes the parts; the flow is described there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from applier.hooks import Hooks
from fleet.disruption_policy import DisruptionPolicy


@dataclass(frozen=True)
class AgentSettings:
    """How the agent runs on this node.

    root: the node's filesystem (`/` live); state_dir: defaults to <root>/etc/machine-config-daemon;
    backend: which OS backend manages images and kernel arguments; reboot_command: shell command run
    to reboot (default `systemctl reboot` on `/`, none elsewhere); reboot_wait: seconds a requested reboot
    may take before it is requested again; drift: `repair` or `report`; policy: disruption policy overriding
    the one the rendered config carries; rollback: roll back to the previous deployment when post-reboot
    verification fails.
    """

    node: str
    root: Path = Path("/")
    state_dir: Path | None = None
    pool: str | None = None
    reboot_command: str | None = None
    reboot_wait: float = 300.0
    drift: str = "repair"
    interval: float = 60.0
    policy: DisruptionPolicy | None = None
    overrides: tuple[str, ...] = ()
    hooks: Hooks = field(default_factory=Hooks)
    rollback: bool = False
    durable: bool = True

    @property
    def state_path(self) -> Path:
        """The state directory."""
        return self.state_dir or self.root / "etc" / "machine-config-daemon"


@dataclass(frozen=True)
class SyncResult:
    """What one sync ended with."""

    state: str  # Done | Working | Degraded
    message: str
    current: str
    desired: str
    rebooting: bool = False
    changed: bool = False
    staged: str = ""  # the config whose OS image this sync pulled before its slot (applier/prestage.py)


LogFn = Callable[[str], None]


def no_log(message: str) -> None:
    """The default log of the agent's parts: messages go nowhere (the CLI passes its own)."""
