"""Two machines of one pool, end to end: the real Ignition (Debian's 2.14) boots each through its own pointer URL
(`/config/worker?mac=...&hostname=...`) from a real `mco serve` and each ends with its own hostname and static
address (a NetworkManager keyfile); the real `mco apply` of each node (node tokens) then converges on its
machine's config; a day-2 change of one machine's address rolls out to that machine only; drift in an overlay
file is repaired."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import requests

from tests.applier.helpers import new_boot, reboot_command
from tests.server.realignition import run_ignition
from tests.serving import env, mco, serving
from tests.tools import real_tool

pytestmark = pytest.mark.realtool

MACHINES = Path(__file__).resolve().parents[1] / "renderer" / "machines_cluster"
KEYFILE = "etc/NetworkManager/system-connections/enp1s0.nmconnection"
BOOT = {"node-a": ("mac=52-54-00-00-00-0A", "hostname=node-a"),
        "node-b": ("uuid=6e5b1c2a-0000-4000-8000-00000000000b", "hostname=node-b")}
ADDRESSES = {"node-a": "192.168.122.10/24", "node-b": "192.168.122.11/24"}


def _pointer(path: Path, url: str, facts: tuple[str, ...], *names: str) -> Path:
    """The pointer config a machine boots with (`mco ignition pointer --machine`): its own config's URL (`names`:
    more arguments, `--node NAME --node-token-file F` for a node's)."""
    machine = [arg for fact in facts for arg in ("--machine", fact)]
    done = subprocess.run(mco("ignition", "pointer", "--pool", "worker", "--url", url, "--replace", *machine, *names,
                              "--output-file", str(path)), env=env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return path


def _apply(node: str, root: Path, url: str, token: Path, *extra: str) -> dict:
    done = subprocess.run(mco("apply", "--once", "--node", node, "--server", url, "--pool", "worker", "--root",
                              str(root), "--backend", "none", "--node-token-file", str(token), "--reboot-command",
                              reboot_command(root), *extra), env=env(), capture_output=True, text=True, timeout=120)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, done.stdout + done.stderr
    return dict(json.loads(lines[-1]))


def _converge(node: str, root: Path, url: str, token: Path, target: str) -> list[dict]:
    """`mco apply --once` until the node is Done at `target` (each exit after a reboot request is a reboot)."""
    results = []
    for _ in range(6):
        result = _apply(node, root, url, token)
        results.append(result)
        if result["state"] == "Done" and result["current"] == target:
            return results
        if result.get("rebooting"):
            new_boot(root)
    raise AssertionError(f"{node} never reached {target}: {results}")


def _desired(url: str, node: str, token: Path) -> str:
    answer = requests.get(f"{url}/nodes/{node}/desired", params={"pool": "worker"}, timeout=10,
                          headers={"Authorization": f"Bearer {token.read_text().strip()}"})
    assert answer.status_code == 200, answer.text
    return str(answer.json()["desiredConfig"])


def test_two_machines_boot_and_keep_their_own_config(tmp_path: Path) -> None:
    ignition = real_tool("ignition")
    real_tool("systemctl")
    cluster = tmp_path / "cluster"
    shutil.copytree(MACHINES, cluster)
    secret = tmp_path / "node.secret"
    secret.write_text("0123456789abcdef0123456789abcdef\n")
    tokens = {}
    for node in BOOT:
        done = subprocess.run(mco("certs", "node-token", "--secret-file", str(secret), node), env=env(),
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        tokens[node] = tmp_path / f"{node}.token"
        tokens[node].write_text(done.stdout.strip() + "\n")
    with serving(cluster, tmp_path / "store", extra=["--node-secret-file", str(secret)],
                 log=tmp_path / "serve.log") as url:
        roots = {}
        for node, facts in BOOT.items():  # first boot: the real Ignition, fetching through its pointer URL
            work = tmp_path / f"boot-{node}"
            work.mkdir()
            run = run_ignition(ignition, _pointer(work / "pointer.ign", url, facts), work)
            root = roots[node] = run.root
            assert (root / "etc/hostname").read_text() == f"{node}\n"
            keyfile = root / KEYFILE
            assert keyfile.stat().st_mode & 0o777 == 0o600
            assert f"address1={ADDRESSES[node]},192.168.122.1" in keyfile.read_text()
            assert (root / "etc/motd").read_text() == "welcome\n"  # the pool's own files too
            annotations = json.loads((root / "etc/machine-config-daemon/node-annotations.json").read_text())
            assert annotations["machineconfiguration.openshift.io/currentConfig"] == _desired(url, node, tokens[node])
            new_boot(root)

        first = {}
        for node, root in roots.items():  # the agent takes over: its machine's config, not the pool's
            first[node] = _desired(url, node, tokens[node])
            _converge(node, root, url, tokens[node], first[node])
        assert first["node-a"] != first["node-b"]
        pool = requests.get(f"{url}/pools/worker", timeout=10).json()
        assert pool["status"]["updatedMachineCount"] == 2, pool["status"]
        for node, config in first.items():  # the fleet page shows the pool's config and the overlay apart
            pool_config, overlay = config.rsplit("-", 1)
            page = requests.get(f"{url}/ui/nodes/{node}", timeout=10)
            assert page.status_code == 200, page.text
            assert f'<dt>Machine document</dt><dd>{node} ' in page.text
            assert f'<code class="config">{pool_config}</code>' in page.text
            assert f'<code class="config">{overlay}</code>' in page.text

        # day 2: node-b moves to another address; node-a is not touched
        keyfile_a = roots["node-a"] / KEYFILE
        before_a = keyfile_a.stat().st_mtime_ns
        machines = cluster / "manifests/machines.yaml"
        machines.write_text(machines.read_text().replace("192.168.122.11/24", "192.168.122.21/24"))
        deadline = time.monotonic() + 60
        while _desired(url, "node-b", tokens["node-b"]) == first["node-b"]:
            assert time.monotonic() < deadline, "the server never re-rendered"
            time.sleep(0.2)
        assert _desired(url, "node-a", tokens["node-a"]) == first["node-a"]
        second_b = _desired(url, "node-b", tokens["node-b"])
        results_b = _converge("node-b", roots["node-b"], url, tokens["node-b"], second_b)
        assert any(r.get("rebooting") for r in results_b)  # a file change: the default policy reboots
        assert "address1=192.168.122.21/24,192.168.122.1" in (roots["node-b"] / KEYFILE).read_text()
        assert (roots["node-b"] / "etc/hostname").read_text() == "node-b\n"
        result_a = _apply("node-a", roots["node-a"], url, tokens["node-a"])
        assert (result_a["state"], result_a["current"]) == ("Done", first["node-a"])
        assert keyfile_a.stat().st_mtime_ns == before_a
        assert "address1=192.168.122.10/24" in keyfile_a.read_text()

        # drift in an overlay file is repaired from the machine's config
        keyfile_a.write_text("[connection]\nid=tampered\n")
        repaired = _apply("node-a", roots["node-a"], url, tokens["node-a"], "--repair")
        assert repaired["state"] == "Done" and KEYFILE in repaired["message"], repaired
        assert "address1=192.168.122.10/24,192.168.122.1" in keyfile_a.read_text()

        # node-a re-installed: its facts get nothing now that it is a node; its pointer with its node token does
        refused = tmp_path / "reinstall-facts"
        refused.mkdir()
        with pytest.raises(AssertionError, match="GET result: Forbidden"):
            run_ignition(ignition, _pointer(refused / "pointer.ign", url, BOOT["node-a"]), refused)
        again = tmp_path / "reinstall-node"
        again.mkdir()
        pointer = _pointer(again / "pointer.ign", url, (), "--node", "node-a", "--node-token-file",
                           str(tokens["node-a"]))
        reinstalled = run_ignition(ignition, pointer, again).root
        assert (reinstalled / "etc/hostname").read_text() == "node-a\n"
        assert "address1=192.168.122.10/24,192.168.122.1" in (reinstalled / KEYFILE).read_text()

        # the machine's config goes to its own node only
        other = requests.get(f"{url}/rendered/{first['node-a']}", timeout=10,
                             headers={"Authorization": f"Bearer {tokens['node-b'].read_text().strip()}"})
        assert other.status_code == 403 and "192.168" not in other.text
