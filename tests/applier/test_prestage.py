"""The OS image before the slot, with the real agent (ostree backend, a real sysroot and OCI image) against the real
server: a node that waits for its slot is let pull the pool's next OS image, within the pool's
`max-concurrent-pulls`, in the rollout order; it imports it into the ostree repo and stays at its config (no slot
taken); when its slot comes, the drain finds the image there and the timeline reads image-staged, prepared,
drained... (fleet/image_pulls.py, applier/prestage.py)."""

from __future__ import annotations

import asyncio
import shlex
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import requests

from applier.agent import Agent, AgentSettings, reboot_command_for_ostree
from applier.backends.ostree import OstreeBackend
from applier.fetch import ServerClient, ServerSource
from applier.hooks import Hooks
from applier.report import HttpReporter
from applier.runner import SubprocessRunner
from fleet.directory_store import DirectoryStore
from fleet.node_status import NodeStatus
from fleet.rendered import RenderedConfig
from fleet.rollout_settings import RolloutSettings
from server.run import start
from server.settings import ServerSettings
from tests.applier.helpers import file_entry, make_root
from tests.applier.sysroot import make_oci_image
from tests.builders import rendered_config
from tests.server.helpers import publish
from tests.tools import real_tool

pytestmark = pytest.mark.realtool


def _claim(base: str, node: str) -> dict[str, object]:
    answer = requests.post(f"{base}/nodes/{node}/desired", params={"pool": "worker"}, timeout=10)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def _moving_to_an_image(tmp_path: Path) -> tuple[DirectoryStore, RenderedConfig, RenderedConfig, str]:
    """A store whose worker pool (maxUnavailable 1, `max-concurrent-pulls` 1) moves from v1 to v4, which changes the OS
    image to a real OCI image (skopeo pulls it): (store, v1, v4, the image's reference)."""
    real_tool("skopeo")
    layout = make_oci_image(tmp_path, "v4", {"etc/app.conf": "app=4\n"})
    url = f"oci:{layout}:v4"
    old = rendered_config("v1", [file_entry("/etc/motd", "v1\n")])
    new = rendered_config("v4", [file_entry("/etc/motd", "v4\n")], os_image_url=url)
    store = DirectoryStore(tmp_path / "store")
    store.put_rendered(old)
    publish(store, new, max_unavailable=1, rollout=RolloutSettings(max_concurrent_pulls=1))
    return store, old, new, url


async def test_the_os_image_is_pulled_before_the_slot_within_the_pull_limit(tmp_path: Path, sysroot: Path) -> None:
    store, old, new, url = _moving_to_an_image(tmp_path)
    for i, name in enumerate(("node-busy", "node-1", "node-2")):  # node-1 comes before node-2
        store.put_node_status(NodeStatus(name, "worker", old.name, new.name if name == "node-busy" else old.name,
                                         "Working" if name == "node-busy" else "Done", "",
                                         "2026-12-01T00:00:00Z", registered_at=f"2026-11-0{i + 1}T00:00:00Z"))
    running = await start(ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log="off",
                                         store_dir=tmp_path / "store", poll_interval=0.05))
    _, host, port = running.addresses[0]
    base = f"http://{host}:{port}"
    try:
        # node-busy holds the one slot. node-2 asks first, but the one pull goes to node-1, first in the order
        assert await asyncio.to_thread(_claim, base, "node-2") == {"desiredConfig": old.name, "pool": "worker"}
        first = await asyncio.to_thread(_claim, base, "node-1")
        assert first == {"desiredConfig": old.name, "pool": "worker", "prefetch": new.name}
        assert "prefetch" not in await asyncio.to_thread(_claim, base, "node-2")  # node-1 is pulling: the limit

        repo = sysroot / "ostree" / "repo"
        seen = tmp_path / "refs-at-drain"
        root = make_root(tmp_path / "root")
        (root / "etc/machine-config-daemon").mkdir(parents=True, exist_ok=True)
        runner = SubprocessRunner()
        client = ServerClient(base)
        settings = AgentSettings(node="node-1", root=root, durable=False, pool="worker",
                                 reboot_command=reboot_command_for_ostree(sysroot, sys.executable, root),
                                 hooks=Hooks(f"ostree refs --repo={shlex.quote(str(repo))} > {shlex.quote(str(seen))}",
                                             "", 60))
        backend = OstreeBackend(runner=runner, sysroot=sysroot)
        agent = Agent(settings, source=ServerSource(client), reporter=HttpReporter(client), backend=backend,
                      runner=runner)
        agent.state.ensure()
        agent.state.set_current(old)
        staged = await asyncio.to_thread(agent.sync)
        assert staged.state == "Done" and staged.current == old.name, staged.message
        assert "before the drain" in staged.message
        image_ref = backend.resolve(url)  # imported already: resolving again pulls nothing
        record = store.get_node_status("node-1")
        assert (record.current_config, record.desired_config, record.staged) == (old.name, old.name, new.name)
        assert [(e.phase, e.config) for e in record.timeline] == [("image-staged", new.name)]
        # the timeline says what was prepared before the slot, and what was not
        assert "into the ostree repo" in record.timeline[0].detail
        assert "deployment is made while drained" in record.timeline[0].detail
        assert store.get_node_status("node-busy").desired_config == new.name  # no slot taken by the pull
        assert await asyncio.to_thread(_claim, base, "node-2") == {
            "desiredConfig": old.name, "pool": "worker", "prefetch": new.name}  # node-1 gave its pull back

        busy = store.get_node_status("node-busy")
        store.put_node_status(replace(busy, current_config=new.name, state="Done"))  # the slot frees
        rebooting = await asyncio.to_thread(agent.sync)
        assert rebooting.rebooting, rebooting.message
        assert image_ref in seen.read_text().split()  # at the drain, the image was in the repo
        assert (await asyncio.to_thread(agent.sync)).state == "Done"
        record = store.get_node_status("node-1")
        phases = [e.phase for e in record.timeline]
        assert phases[:4] == ["image-staged", "prepared", "drained", "written"], phases
        assert phases[-1] == "done" and record.current_config == new.name
    finally:
        await running.stop()


async def test_the_first_wave_stages_the_os_image_before_it_takes_its_free_slot(tmp_path: Path, sysroot: Path) -> None:
    """The slot is free from the start (the first wave): the agent's claim says `prestage=1`, so the server lets it
    pull first and hands the slot only after the image is staged; no node is unavailable during the pull, and the
    timeline has the image staged before the update's first phase."""
    store, old, new, _ = _moving_to_an_image(tmp_path)
    store.put_node_status(NodeStatus("node-1", "worker", old.name, old.name, "Done", "", "2026-12-01T00:00:00Z"))
    running = await start(ServerSettings(cluster_dir=None, listen=("127.0.0.1", 0), access_log="off",
                                         store_dir=tmp_path / "store", poll_interval=0.05))
    _, host, port = running.addresses[0]
    try:
        root = make_root(tmp_path / "root")
        runner = SubprocessRunner()
        client = ServerClient(f"http://{host}:{port}")
        settings = AgentSettings(node="node-1", root=root, durable=False, pool="worker",
                                 reboot_command=reboot_command_for_ostree(sysroot, sys.executable, root))
        agent = Agent(settings, source=ServerSource(client), reporter=HttpReporter(client),
                      backend=OstreeBackend(runner=runner, sysroot=sysroot), runner=runner)
        agent.state.ensure()
        agent.state.set_current(old)
        staged = await asyncio.to_thread(agent.sync)  # a free slot, but first the image
        assert staged.state == "Done" and staged.current == old.name and staged.staged == new.name, staged.message
        record = store.get_node_status("node-1")
        assert (record.desired_config, record.staged) == (old.name, new.name)  # no slot taken while it pulled
        rebooting = await asyncio.to_thread(agent.sync)  # staged: its slot
        assert rebooting.rebooting, rebooting.message
        assert (await asyncio.to_thread(agent.sync)).state == "Done"
        record = store.get_node_status("node-1")
        phases = [e.phase for e in record.timeline]
        assert phases[:2] == ["image-staged", "prepared"] and phases[-1] == "done", phases
        assert record.current_config == new.name
    finally:
        await running.stop()
