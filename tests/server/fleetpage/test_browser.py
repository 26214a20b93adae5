"""The fleet page in a real browser (Debian's headless chromium over the DevTools protocol) against `mco serve`.

The store holds pool `worker` mid-rollout: `mco render` made the old target, a new manifest makes `mco serve`
render a new one, and the machines report through the real API (one updated, one working, one degraded,
three waiting). The test reads what the browser shows, posts a report and watches it appear without a
reload, checks a narrow screen, and saves screenshots under tests/artifacts/fleetpage/ (or $MCO_ARTIFACTS).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from fleet.directory_store import DirectoryStore
from tests.builders import machine_config_manifest
from tests.server.fleetpage.cdp import chromium
from tests.server.fleetpage.fleet import DEGRADED_MESSAGE
from tests.serving import mco_serve
from tests.tools import real_tool

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
CLUSTER = ROOT / "tests/server/cluster"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
ARTIFACTS = Path(os.environ.get("MCO_ARTIFACTS") or ROOT / "tests/artifacts") / "fleetpage"
pytestmark = pytest.mark.realtool
NEW_MANIFEST = machine_config_manifest("20-worker-nosmt", "worker", kernel_arguments=["nosmt"])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, str]]:
    """(base URL, old target, new target) of a running `mco serve` whose worker pool is mid-rollout."""
    cluster, store = tmp_path / "cluster", tmp_path / "store"
    shutil.copytree(CLUSTER, cluster)
    rendered = subprocess.run([sys.executable, "-m", "cli", "render", str(cluster), "--store", str(store)], env=ENV,
                              capture_output=True, text=True, timeout=120)
    assert rendered.returncode == 0, rendered.stderr
    old = DirectoryStore(store).get_pool("worker").current
    assert old
    (cluster / "manifests/20-worker-nosmt.yaml").write_text(NEW_MANIFEST)
    with mco_serve(str(cluster), "--store", str(store), "--poll-interval", "0.2") as served:
        new = DirectoryStore(store).get_pool("worker").current
        assert new and new != old
        yield served.url, old, new


async def _report(http: aiohttp.ClientSession, base: str, node: str, current: str, desired: str, state: str,
                  message: str = "") -> None:
    body = {"pool": "worker", "currentConfig": current, "desiredConfig": desired, "state": state, "message": message}
    async with http.post(f"{base}/nodes/{node}/status", json=body) as response:
        assert response.status == 200, await response.text()


async def test_fleet_page_in_headless_chromium(served: tuple[str, str, str], tmp_path: Path) -> None:
    base, old, new = served
    executable = real_tool("chromium")
    async with aiohttp.ClientSession() as http:
        await _report(http, base, "worker-0", new, new, "Done")
        await _report(http, base, "worker-1", old, new, "Working", "draining")
        await _report(http, base, "worker-2", old, new, "Degraded", DEGRADED_MESSAGE)
        for i in range(3, 6):
            await _report(http, base, f"worker-{i}", old, old, "Done")
        async with chromium(executable, tmp_path / "profile") as browser:
            page = await browser.new_page()
            await page.viewport(1280, 800)

            # The overview: counts, the progress bar, the degraded condition with the machine's message.
            await page.goto(f"{base}/ui/")
            row = "document.getElementById('pool-worker')"
            assert await page.evaluate(f"{row}.querySelector('.machines').textContent") == "6"
            counts = await page.evaluate(f"{row}.querySelector('.counts').textContent")
            assert " ".join(counts.split()) == "1/6 updated 1 updating 1 degraded 2 unavailable"
            bar = await page.evaluate(f"""Array.from({row}.querySelectorAll('svg.bar rect')).map(r =>
                [r.getAttribute('class'), +r.getAttribute('width'), r.getBoundingClientRect().width])""")
            kinds = [b[0] for b in bar]
            assert kinds == ["seg-empty", "seg-updated", "seg-updating", "seg-degraded", "seg-waiting"]
            drawn = {kind: shown for kind, _, shown in bar}
            assert drawn["seg-updated"] == pytest.approx(drawn["seg-empty"] / 6, rel=0.05)  # 1 of 6, as drawn
            assert drawn["seg-waiting"] == pytest.approx(drawn["seg-empty"] / 2, rel=0.05)  # 3 of 6
            assert DEGRADED_MESSAGE in await page.evaluate(f"{row}.textContent")
            await page.screenshot(ARTIFACTS / "overview.png")

            # The pool page: the degraded machine's message as text (its markup inert), then a live update.
            await page.goto(f"{base}/ui/pools/worker")
            message = await page.evaluate("document.querySelector('#node-worker-2 .message').textContent")
            assert message == DEGRADED_MESSAGE
            assert await page.evaluate("document.querySelectorAll('#node-worker-2 .message script').length") == 0
            await page.wait_for("!document.getElementById('live').hidden")  # the event stream is open
            await page.evaluate("window.stayed = true")
            await _report(http, base, "worker-1", new, new, "Done")
            await page.wait_for("document.querySelector('#node-worker-1 .state').textContent === 'Done'")
            assert await page.evaluate("window.stayed === true")  # updated in place, not reloaded
            assert "2/6 updated" in await page.evaluate("document.querySelector('.summary .counts').textContent")
            await page.screenshot(ARTIFACTS / "pool.png")

            # The machine pages: the exact cause as reported, reports over time; then the diff of the two targets.
            await page.goto(f"{base}/ui/nodes/worker-2")
            assert await page.evaluate("document.querySelector('#cause pre').textContent") == DEGRADED_MESSAGE
            await page.goto(f"{base}/ui/nodes/worker-1")  # its reports over time, kept with its record
            states = "Array.from(document.querySelectorAll('#reports tbody .state')).map(s => s.textContent)"
            assert await page.evaluate(states) == ["Done", "Working"]
            await page.screenshot(ARTIFACTS / "machine.png")
            await page.goto(f"{base}/ui/pools/worker/diff?from={old}&to={new}")
            verdict = await page.evaluate("document.getElementById('verdict').textContent")
            assert "Reboot: yes" in " ".join(verdict.split())
            assert "nosmt" in await page.evaluate("document.getElementById('changes').textContent")

            # A narrow screen: nothing wider than the viewport, every cell labelled.
            await page.viewport(390, 844, mobile=True)
            await page.goto(f"{base}/ui/pools/worker")
            widths = await page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert widths[0] <= widths[1], widths
            label = await page.evaluate(
                "getComputedStyle(document.querySelector('#node-worker-2 td'), '::before').content")
            assert json.loads(label) == "State"
            await page.screenshot(ARTIFACTS / "pool-narrow.png")
            await page.goto(f"{base}/ui/")
            await page.screenshot(ARTIFACTS / "overview-narrow.png")

            assert [p for p in browser.problems() if "favicon" not in p] == []
