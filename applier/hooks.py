"""Drain / uncordon hooks around a reboot (for example `kubectl drain {node} --ignore-daemonsets
--delete-emptydir-data`), run through the shell with a timeout; `{node}` is replaced by the node name and
NODE is set in the environment. No hook configured means nothing runs.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from applier.errors import PermanentError


@dataclass(frozen=True)
class Hooks:
    """The configured commands (empty = none) and their timeout in seconds."""

    drain: str = ""
    uncordon: str = ""
    timeout: float = 600.0

    def _run(self, kind: str, command: str, node: str) -> bool:
        if not command:
            return False
        cmd = command.replace("{node}", node)
        env = {**os.environ, "NODE": node}
        try:
            proc = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=self.timeout, env=env,
                                  check=False)
        except subprocess.TimeoutExpired as exc:
            raise PermanentError(f"{kind} hook", f"failed to {kind} node {node}: `{cmd}` timed out after "
                                 f"{self.timeout:g} s") from exc
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            raise PermanentError(f"{kind} hook", f"failed to {kind} node {node}: `{cmd}` exited {proc.returncode}"
                                 + (f": {detail[-1]}" if detail else ""))
        return True

    def run_drain(self, node: str) -> bool:
        """Drain before a disruptive update; True when a hook ran."""
        return self._run("drain", self.drain, node)

    def run_uncordon(self, node: str) -> bool:
        """Uncordon after verification; True when a hook ran."""
        return self._run("uncordon", self.uncordon, node)
