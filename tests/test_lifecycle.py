"""The whole lifecycle with the real parts.

render examples/cluster -> `mco serve` over TLS (CA from `mco certs init`, a bearer token for the worker pool, node
authentication: the agent sends its node token on its reports and claims and the pool token for the configs)
-> Debian's real `ignition` boots a node
root through a pointer config -> `mco apply` (ostree backend on a real sysroot) reports Done and the pool shows it
updated -> a change to a file covered by a no-reboot disruption policy is applied without reboot -> a kernel
argument + OS image change stages a real ostree deployment, the reboot is simulated (the staged deployment becomes
the booted one), the applier verifies it and the pool shows every node updated. A second test injects failures
(a file the node cannot write, an image that does not exist) and shows Degraded naming the cause, old state intact.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from applier.agent import reboot_command_for_ostree
from applier.backends.ostree import OstreeBackend
from applier.runner import SubprocessRunner
from tests.applier.sysroot import boot_entries, make_oci_image, make_sysroot, unlock
from tests.server.realignition import run_ignition
from tests.serving import env, mco, serving
from tests.tools import ROOT, real_tool

pytestmark = pytest.mark.realtool

NODE = "worker-0"
WORKER_TOKEN = {"Authorization": "Bearer lifecycle-worker-token"}  # a token-protected pool's details need it
VENDOR_UNITS = ("chronyd.service", "usbguard.service", "sshd.service", "systemd-sysctl.service")
UNIT = "[Unit]\nDescription={name}\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"


def _run(args: list[str], **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, env=env(), timeout=120, **kw)


@dataclass
class Lab:
    """A rendered and served cluster, a node root booted by Ignition, and its ostree sysroot."""

    cluster: Path
    url: str
    ca: Path
    root: Path
    sysroot: Path
    work: Path
    token: Path
    node_token: Path

    def apply(self) -> dict:
        """`mco apply --once` on the node, as its agent would run after each (simulated) boot."""
        done = _run(mco("apply", "--once", "--node", NODE, "--server", self.url, "--ca", str(self.ca),
                        "--token-file", str(self.token), "--node-token-file", str(self.node_token),
                        "--root", str(self.root), "--backend", "ostree", "--sysroot", str(self.sysroot),
                        "--reboot-command", reboot_command_for_ostree(self.sysroot, sys.executable, self.root),
                        "--policy", str(self.cluster / "manifests/90-machineconfiguration.yaml")))
        assert done.returncode in (0, 1) and done.stdout.strip(), done.stderr
        result = json.loads(done.stdout.strip().splitlines()[-1])
        result["rc"] = done.returncode
        return result

    def pool(self) -> dict:
        """The worker pool's status as the server reports it."""
        return requests.get(f"{self.url}/pools/worker", verify=str(self.ca), timeout=10, headers=WORKER_TOKEN).json()

    def target(self) -> str:
        return str(self.pool()["spec"]["configuration"]["name"])

    def rerender(self, previous: str) -> str:
        """Wait until the server's watch re-rendered the worker pool away from `previous`."""
        import time

        deadline = time.monotonic() + 30
        while (name := self.target()) == previous:
            assert time.monotonic() < deadline, "the server did not re-render"
            time.sleep(0.1)
        return name


def _prepare_root(work: Path) -> None:
    """What the OS image provides before Ignition runs: accounts and vendor units."""
    etc = work / "root/etc"
    etc.mkdir(parents=True)
    (etc / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\ncore:x:1000:1000:core:/home/core:/bin/bash\n")
    (etc / "group").write_text("root:x:0:\ncore:x:1000:\n")
    (etc / "shadow").write_text("root:*:19000:0:99999:7:::\ncore:*:19000:0:99999:7:::\n")
    (etc / "gshadow").write_text("root:*::\ncore:!::\n")
    os.chmod(etc / "shadow", 0o600)
    os.chmod(etc / "gshadow", 0o600)
    (work / "root/home/core").mkdir(parents=True)
    os.chown(work / "root/home/core", 1000, 1000)
    vendor = work / "root/usr/lib/systemd/system"
    vendor.mkdir(parents=True)
    for name in VENDOR_UNITS:
        (vendor / name).write_text(UNIT.format(name=name))


@pytest.fixture
def lab() -> Iterator[Lab]:
    ignition = real_tool("ignition")
    real_tool("ostree")
    real_tool("systemctl")
    real_tool("skopeo")
    # Ignition writes as `core`, so every parent of the root must stay traversable; pytest's basetemp is
    # 0700 (and reset by concurrent sessions), hence a directory of our own.
    tmp_path = Path(tempfile.mkdtemp(prefix="mco-lifecycle-", dir="/tmp"))
    os.chmod(tmp_path, 0o755)
    try:
        yield from _lab(tmp_path, ignition)
    finally:
        for deploy in tmp_path.glob("os/sysroot/ostree/deploy/*/deploy/*"):
            subprocess.run(["chattr", "-i", str(deploy)], capture_output=True, check=False)
        shutil.rmtree(tmp_path, ignore_errors=True)


def _lab(tmp_path: Path, ignition: Path) -> Iterator[Lab]:
    cluster = tmp_path / "cluster"
    shutil.copytree(ROOT / "examples/cluster", cluster)
    certs = tmp_path / "certs"
    assert _run(mco("certs", "init", str(certs), "--ip", "127.0.0.1")).returncode == 0
    rendered = _run(mco("render", str(cluster), "--store", str(tmp_path / "render-check")))
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    token = tmp_path / "worker.token"
    token.write_text("lifecycle-worker-token\n")
    secret = tmp_path / "node-secret"
    secret.write_text("lifecycle-node-secret\n")
    made = _run(mco("certs", "node-token", "--secret-file", str(secret), NODE))
    assert made.returncode == 0, made.stderr
    node_token = tmp_path / "node.token"
    node_token.write_text(made.stdout)
    with serving(cluster, tmp_path / "store", scheme="https", ca=certs / "ca.crt", log=tmp_path / "serve.log",
                 extra=["--cert", str(certs / "tls.crt"), "--key", str(certs / "tls.key"),
                        "--token", f"worker={token}", "--node-secret-file", str(secret)]) as url:
        pointer = tmp_path / "pointer.ign"
        made = _run(mco("ignition", "pointer", "--pool", "worker", "--url", url, "--ca", str(certs / "ca.crt"),
                        "--token-file", str(token), "--output-file", str(pointer)))
        assert made.returncode == 0, made.stderr
        work = tmp_path / "node"
        _prepare_root(work)
        booted = run_ignition(ignition, pointer, work)
        root = booted.root
        # first boot: systemd applies Ignition's presets
        preset = _run(["systemctl", f"--root={root}", "preset-all"])
        assert preset.returncode == 0, preset.stderr
        served = requests.get(f"{url}/rendered/{_target(url, certs)}", verify=str(certs / "ca.crt"), timeout=10,
                              headers={"Authorization": "Bearer lifecycle-worker-token"})
        spec = served.json()["spec"]
        sysroot = make_sysroot(tmp_path / "os", image=spec["osImageURL"],
                               kargs=("root=LABEL=root", "console=ttyS0", *spec["kernelArguments"]))
        try:
            yield Lab(cluster, url, certs / "ca.crt", root, sysroot, tmp_path, token, node_token)
        finally:
            unlock(sysroot)


def _target(url: str, certs: Path) -> str:
    pool = requests.get(f"{url}/pools/worker", verify=str(certs / "ca.crt"), timeout=10, headers=WORKER_TOKEN).json()
    return str(pool["spec"]["configuration"]["name"])


def _updated(lab: Lab, name: str) -> None:
    status = lab.pool()["status"]
    assert (status["machineCount"], status["updatedMachineCount"], status["degradedMachineCount"]) == (1, 1, 0), status
    assert status["configuration"]["name"] == name
    assert [c["status"] for c in status["conditions"] if c["type"] == "Updated"] == ["True"]


def test_whole_lifecycle(lab: Lab) -> None:
    v1 = lab.target()
    assert (lab.root / "etc/machine-config-daemon/node-annotations.json").exists()  # appended by the server

    # 1. the node booted by Ignition: the applier adopts it, nothing to change, Done
    assert (lab.root / "etc/systemd/system-preset/20-ignition.preset").exists()
    first = lab.apply()
    assert (first["state"], first["current"], first["rebooting"]) == ("Done", v1, False), first
    assert not (lab.root / "etc/systemd/system-preset/20-ignition.preset").exists()  # as the MCD's first run
    _updated(lab, v1)

    # 2. a change to /etc/chrony.conf (policy: Restart chronyd.service) is applied without a reboot
    cluster_yaml = lab.cluster / "cluster.yaml"
    cluster_yaml.write_text(cluster_yaml.read_text().replace("0.fedora.pool.ntp.org", "ntp.lab.example.net"))
    v2 = lab.rerender(v1)
    entries_before = boot_entries(lab.sysroot)
    second = lab.apply()
    assert (second["state"], second["current"], second["rebooting"]) == ("Done", v2, False), second
    assert "without reboot (restart)" in second["message"]
    assert "ntp.lab.example.net" in (lab.root / "etc/chrony.conf").read_text()
    assert boot_entries(lab.sysroot) == entries_before
    _updated(lab, v2)

    # 3. kernel argument + OS image (a container image, pulled with skopeo and committed into the sysroot's
    #    repo): a real ostree deployment is staged, then the simulated reboot boots it
    layout = make_oci_image(lab.work / "images", "v2", {"etc/os-motd": "image v2\n"})
    image = f"oci:{layout}:v2"
    (lab.cluster / "manifests/99-worker-os.yaml").write_text(
        "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: 99-worker-os\n"
        f"  labels:\n    machineconfiguration.openshift.io/role: worker\nspec:\n  osImageURL: {image}\n"
        "  kernelArguments:\n    - quiet\n")
    v3 = lab.rerender(v2)
    third = lab.apply()
    assert (third["state"], third["rebooting"]) == ("Working", True), third
    options = boot_entries(lab.sysroot)[0]
    assert "quiet" in options.split() and "nosmt" in options.split()
    booted = OstreeBackend(runner=SubprocessRunner(), sysroot=lab.sysroot).booted()
    assert booted is not None and booted.image == image  # the simulated reboot happened
    deployed = lab.sysroot / "ostree/deploy/myos/deploy" / booted.id
    assert (deployed / "etc/os-motd").read_text() == "image v2\n"
    after = lab.apply()  # the agent starting on the new deployment
    assert (after["state"], after["current"]) == ("Done", v3), after
    assert "verification passed" in after["message"]
    _updated(lab, v3)
    assert lab.apply()["state"] == "Done"  # and stays so


def test_injected_failures_degrade_and_keep_old_state(lab: Lab) -> None:
    v1 = lab.target()
    assert lab.apply()["state"] == "Done"
    chrony = (lab.root / "etc/chrony.conf").read_text()

    # a file the node cannot write: a directory is in its way
    (lab.root / "etc/lab-blocked").mkdir()
    (lab.cluster / "manifests/98-worker-blocked.yaml").write_text(
        "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: 98-worker-blocked\n"
        "  labels:\n    machineconfiguration.openshift.io/role: worker\nspec:\n  config:\n    ignition:\n"
        "      version: 3.4.0\n    storage:\n      files:\n        - path: /etc/lab-blocked\n"
        "          contents:\n            source: data:,x\n        - path: /etc/chrony.conf\n"
        "          contents:\n            source: data:,replaced\n")
    v2 = lab.rerender(v1)
    failed = lab.apply()
    assert (failed["state"], failed["rc"], failed["current"]) == ("Degraded", 1, v1), failed
    assert "/etc/lab-blocked: cannot write file: a directory is in the way" in failed["message"]
    assert (lab.root / "etc/chrony.conf").read_text() == chrony  # old state intact
    status = lab.pool()["status"]
    assert status["degradedMachineCount"] == 1
    degraded = next(c for c in status["conditions"] if c["type"] == "NodeDegraded")
    assert degraded["status"] == "True" and "/etc/lab-blocked" in degraded["message"]

    # a bad image: nothing is deployed, the message names the field
    (lab.cluster / "manifests/98-worker-blocked.yaml").unlink()
    (lab.cluster / "manifests/99-worker-os.yaml").write_text(
        "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: 99-worker-os\n"
        "  labels:\n    machineconfiguration.openshift.io/role: worker\nspec:\n  osImageURL: ostree:myos/missing\n")
    lab.rerender(v2)
    entries = boot_entries(lab.sysroot)
    bad = lab.apply()
    assert (bad["state"], bad["current"]) == ("Degraded", v1), bad
    assert "spec.osImageURL: cannot resolve 'ostree:myos/missing'" in bad["message"]
    assert boot_entries(lab.sysroot) == entries
    assert (lab.root / "etc/chrony.conf").read_text() == chrony
