"""The ostree backend against a real sysroot: stage deployments with kernel arguments, simulated reboot, verify."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from applier.agent import MAX_REBOOT_ATTEMPTS, Agent, AgentSettings, reboot_command_for_ostree
from applier.backends.ostree import OstreeBackend
from applier.runner import SubprocessRunner
from tests.applier.doubles import MemoryReporter, MemorySource
from tests.applier.helpers import file_entry, make_root, reboot_command
from tests.applier.sysroot import boot_entries, make_oci_image
from tests.builders import rendered_config
from tests.tools import real_tool

pytestmark = pytest.mark.realtool


def _agent(tmp_path: Path, sysroot: Path, reboot: str | None = None, **kw) -> tuple[Agent, MemorySource]:
    source = MemorySource()
    runner = SubprocessRunner()
    backend = OstreeBackend(runner=runner, sysroot=sysroot)
    root = make_root(tmp_path / "root")
    settings = AgentSettings(node="n1", root=root, durable=False,
                             reboot_command=reboot or reboot_command_for_ostree(sysroot, sys.executable, root), **kw)
    return Agent(settings, source=source, reporter=MemoryReporter(), backend=backend, runner=runner), source


def test_status_parsing(sysroot: Path) -> None:
    backend = OstreeBackend(runner=SubprocessRunner(), sysroot=sysroot)
    booted = backend.booted()
    assert booted is not None and booted.image == "ostree:myos/stable"
    assert booted.kargs == ("root=LABEL=root", "console=ttyS0")


def test_image_and_kargs_staged_then_verified(tmp_path: Path, sysroot: Path) -> None:
    agent, source = _agent(tmp_path, sysroot)
    files = [file_entry("/etc/motd", "hi\n")]
    source.config = rendered_config("v1", files, kernel_arguments=("nosmt", "mitigations=auto,nosmt"),
                             os_image_url="ostree:myos/v2")
    staged = agent.sync()
    assert staged.rebooting, staged.message
    entries = boot_entries(sysroot)
    assert len(entries) == 2 and "nosmt mitigations=auto,nosmt" in entries[0]
    assert entries[0].startswith("options root=LABEL=root console=ttyS0 nosmt")
    done = agent.sync()  # the simulated reboot happened: verify
    assert (done.state, done.current) == ("Done", "rendered-worker-v1"), done.message
    booted = agent.backend.booted()
    assert booted is not None and booted.image == "ostree:myos/v2"

    # kernel arguments only: old ones deleted, new ones appended, same tree
    source.config = rendered_config("v2", files, kernel_arguments=("quiet",), os_image_url="ostree:myos/v2")
    assert agent.sync().rebooting
    assert boot_entries(sysroot)[0].split()[1:4] == ["root=LABEL=root", "console=ttyS0", "quiet"]
    assert "nosmt" not in boot_entries(sysroot)[0]
    assert agent.sync().state == "Done"


def test_missed_reboot_is_retried_then_degrades(tmp_path: Path, sysroot: Path) -> None:
    # a reboot that happens (new boot ID) but boots the old deployment again
    agent, source = _agent(tmp_path, sysroot, reboot=reboot_command(tmp_path / "root"))
    source.config = rendered_config("v1", kernel_arguments=("nosmt",))
    assert agent.sync().rebooting
    for _ in range(MAX_REBOOT_ATTEMPTS - 1):
        assert agent.sync().rebooting  # booted is still the old deployment: reboot once more
    result = agent.sync()
    booted = agent.backend.booted()
    assert booted is not None
    staged = agent.state.pending().staged["id"]
    assert result.state == "Degraded"
    assert result.message == ("unexpected on-disk state validating against rendered-worker-v1: booted deployment "
                              f"{booted.id} is not the staged deployment {staged}; "
                              "missing expected kernel arguments: [nosmt]")


def test_bad_image_degrades_and_keeps_deployments(tmp_path: Path, sysroot: Path) -> None:
    agent, source = _agent(tmp_path, sysroot)
    source.config = rendered_config("v1", [file_entry("/etc/motd", "hi\n")], os_image_url="ostree:myos/nope")
    result = agent.sync()
    assert result.state == "Degraded"
    assert "spec.osImageURL: cannot resolve 'ostree:myos/nope': no such ref" in result.message
    assert len(boot_entries(sysroot)) == 1
    assert not (agent.root / "etc/motd").exists()  # written, then put back


def test_rollback_on_failed_verification(tmp_path: Path, sysroot: Path) -> None:
    agent, source = _agent(tmp_path, sysroot, rollback=True)
    source.config = rendered_config("v0", [file_entry("/etc/motd", "v0\n")])
    assert agent.sync().rebooting and agent.sync().state == "Done"
    first = agent.backend.booted()
    source.config = rendered_config("v1", [file_entry("/etc/motd", "v1\n")], kernel_arguments=("nosmt",),
                             os_image_url="ostree:myos/v2")
    assert agent.sync().rebooting
    (sysroot / ".mco-booted").write_text(first.id)  # the node fell back to the old deployment
    agent.state.set_pending(replace(agent.state.pending(), reboot_attempts=MAX_REBOOT_ATTEMPTS, boot_id="old"))
    result = agent.sync()
    assert result.state == "Degraded" and result.rebooting and f"rolled back to deployment {first.id}" in result.message
    assert len(boot_entries(sysroot)) == 1 and (agent.root / "etc/motd").read_text() == "v0\n"
    back = agent.sync()  # after the reboot into the old deployment: healthy at v0, v1 not retried
    assert (back.state, back.current, back.desired) == ("Degraded", "rendered-worker-v0", "rendered-worker-v1")
    assert agent.state.pending() is None and agent.sync().state == "Degraded"
    source.config = rendered_config("v2", [file_entry("/etc/motd", "v2\n")])  # the pool moves on: tried again
    assert agent.sync().rebooting and agent.sync().state == "Done"


def test_container_image_imported_and_deployed(tmp_path: Path, sysroot: Path) -> None:
    real_tool("skopeo")
    layout = make_oci_image(tmp_path, "v3", {"etc/app.conf": "app=3\n"})
    agent, source = _agent(tmp_path, sysroot)
    url = f"oci:{layout}:v3"
    source.config = rendered_config("v3", [file_entry("/etc/motd", "hi\n")], kernel_arguments=("quiet",), os_image_url=url)
    staged = agent.sync()
    assert staged.rebooting, staged.message
    done = agent.sync()
    assert done.state == "Done", done.message
    booted = agent.backend.booted()
    assert booted is not None and booted.image == url and "quiet" in booted.kargs
    deployed = sysroot / "ostree/deploy/myos/deploy" / booted.id
    assert (deployed / "etc/app.conf").read_text() == "app=3\n"  # /etc from the image's /usr/etc
    # the same URL again is not pulled twice: the ref named after it already exists
    assert agent.backend.resolve(url) == agent.backend.resolve(url)


def test_registry_image_by_digest(tmp_path: Path, sysroot: Path) -> None:
    """osImageURL as the MCO writes it: a registry pullspec pinned by digest (local docker-registry, plain HTTP)."""
    import json
    import subprocess
    import time

    import requests

    from tests.serving import free_port

    registry, skopeo = real_tool("docker-registry"), real_tool("skopeo")
    port = free_port()
    (tmp_path / "registry.yml").write_text(
        "version: 0.1\nlog: {level: warn, accesslog: {disabled: true}}\n"
        f"storage: {{filesystem: {{rootdirectory: {tmp_path / 'registry'}}}}}\nhttp: {{addr: 127.0.0.1:{port}}}\n")
    proc = subprocess.Popen([str(registry), "serve", str(tmp_path / "registry.yml")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                if requests.get(f"http://127.0.0.1:{port}/v2/", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, "registry did not start"
            time.sleep(0.1)
        layout = make_oci_image(tmp_path, "v4", {"etc/app.conf": "app=4\n"})
        repo = f"127.0.0.1:{port}/lab/os"
        subprocess.run([str(skopeo), "copy", "--dest-tls-verify=false", f"oci:{layout}:v4", f"docker://{repo}:v4"],
                       check=True, capture_output=True)
        digest = json.loads(subprocess.run([str(skopeo), "inspect", "--tls-verify=false", f"docker://{repo}:v4"],
                                           check=True, capture_output=True, text=True).stdout)["Digest"]
        url = f"{repo}@{digest}"
        source = MemorySource(rendered_config("v4", os_image_url=url))
        runner = SubprocessRunner()
        backend = OstreeBackend(runner=runner, sysroot=sysroot, insecure_registries=(f"127.0.0.1:{port}",))
        root = make_root(tmp_path / "root")
        settings = AgentSettings(node="n1", root=root, durable=False,
                                 reboot_command=reboot_command_for_ostree(sysroot, sys.executable, root))
        agent = Agent(settings, source=source, reporter=MemoryReporter(), backend=backend, runner=runner)
        assert agent.sync().rebooting
        done = agent.sync()
        assert done.state == "Done", done.message
        booted = backend.booted()
        assert booted is not None and booted.image == url
        assert (sysroot / "ostree/deploy/myos/deploy" / booted.id / "etc/app.conf").read_text() == "app=4\n"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_container_image_pulled_before_the_drain(tmp_path: Path, sysroot: Path) -> None:
    """The drain hook runs with the image already in the repo: the drained window holds the writes and the deploy,
    not the pull; the node's Working report says it pulled first."""
    import shlex

    from applier.hooks import Hooks

    real_tool("skopeo")
    layout = make_oci_image(tmp_path, "v4", {"etc/app.conf": "app=4\n"})
    seen = tmp_path / "refs-at-drain"
    repo = sysroot / "ostree" / "repo"
    drain = f"ostree refs --repo={shlex.quote(str(repo))} > {shlex.quote(str(seen))}"
    agent, source = _agent(tmp_path, sysroot, hooks=Hooks(drain, "", 60))
    url = f"oci:{layout}:v4"
    source.config = rendered_config("v4", [file_entry("/etc/motd", "hi\n")], os_image_url=url)
    staged = agent.sync()
    assert staged.rebooting, staged.message
    image_ref = agent.backend.resolve(url)  # already imported: resolving again pulls nothing
    assert image_ref in seen.read_text().split()
    reports = [r.message for r in agent.reporter.reports]  # type: ignore[attr-defined]
    assert any("before the drain" in m for m in reports), reports
    assert agent.sync().state == "Done"
    phases = [r.phase for r in agent.reporter.reports if r.phase]  # type: ignore[attr-defined]
    assert phases == ["prepared", "image-staged", "drained", "written", "reboot-requested", "rebooted", "verified",
                      "done"], phases  # the MCO's MachineConfigNode order: the image staged before the drain
