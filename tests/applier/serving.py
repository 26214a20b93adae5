"""Node loops of the real agent against a real `mco serve` (tests/serving.py), for the applier's multi-node tests."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

from tests.applier.helpers import reboot_command
from tests.serving import env, mco


class NodeLoop(threading.Thread):
    """`mco apply --once` run again and again on one root: each exit after a reboot is the machine rebooting."""

    def __init__(self, name: str, root: Path, url: str) -> None:
        super().__init__(daemon=True)
        self.node, self.root, self.url = name, root, url
        self.stop = threading.Event()
        self.runs: list[int] = []

    def run(self) -> None:
        while not self.stop.is_set():
            proc = subprocess.run(mco("apply", "--once", "--node", self.node, "--server", self.url, "--pool", "worker",
                                      "--root", str(self.root), "--reboot-command", reboot_command(self.root)),
                                  env=env(), capture_output=True, text=True)
            self.runs.append(proc.returncode)
            time.sleep(0.05)
