"""A small Chrome DevTools Protocol client over aiohttp's websocket, to drive Debian's headless chromium.

Just what the fleet page's browser test needs: start chromium on a free debugging port, open a page, navigate,
evaluate JavaScript, wait for a condition, set the viewport, take screenshots, and collect console errors
and dialogs (an `alert()` from injected markup would open one). Protocol reference:
https://chromedevtools.github.io/devtools-protocol/ (Target, Page, Runtime, Emulation, Log).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-port=0", "--remote-allow-origins=*"]
WAIT = 30.0  # liveness bound for waits (never a speed assertion)


class DevToolsError(RuntimeError):
    """The browser answered a command with an error."""


class Page:
    """One tab, attached with a flat session."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        return await self.browser.call(method, session=self.session, **params)

    async def goto(self, url: str) -> None:
        """Navigate and wait for the load event."""
        loaded = self.browser.expect("Page.loadEventFired", self.session)
        await self.call("Page.navigate", url=url)
        await asyncio.wait_for(loaded, WAIT)

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-able values only)."""
        answer = await self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in answer:
            raise DevToolsError(f"{expression}: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    async def wait_for(self, expression: str) -> Any:
        """Poll until the expression is truthy; fails after WAIT seconds."""
        deadline = asyncio.get_running_loop().time() + WAIT
        while True:
            value = await self.evaluate(expression)
            if value:
                return value
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"still false after {WAIT}s: {expression}")
            await asyncio.sleep(0.1)

    async def viewport(self, width: int, height: int, *, mobile: bool = False) -> None:
        await self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                        mobile=mobile)

    async def screenshot(self, path: Path) -> None:
        """A PNG of the whole page, as tall as its content."""
        width, height = await self.evaluate(
            "[document.documentElement.scrollWidth, Math.ceil(document.body.getBoundingClientRect().bottom)]")
        clip = {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}
        shot = await self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True, clip=clip)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))


class Browser:
    """A running chromium and its DevTools websocket."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._waiters: list[tuple[str, str | None, asyncio.Future[dict[str, Any]]]] = []
        self.events: list[dict[str, Any]] = []
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.ws:
            if message.type != aiohttp.WSMsgType.TEXT:
                break
            data = json.loads(message.data)
            if "id" in data:
                future = self._pending.pop(data["id"], None)
                if future is not None and not future.done():
                    future.set_result(data)
                continue
            self.events.append(data)
            for waiter in list(self._waiters):
                method, session, future = waiter
                if data.get("method") == method and session in (None, data.get("sessionId")) and not future.done():
                    future.set_result(data.get("params", {}))
                    self._waiters.remove(waiter)

    def expect(self, method: str, session: str | None = None) -> asyncio.Future[dict[str, Any]]:
        """A future for the next event of this kind (create it before causing the event)."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters.append((method, session, future))
        return future

    async def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        ident = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        message: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        await self.ws.send_str(json.dumps(message))
        answer = await asyncio.wait_for(future, WAIT)
        if "error" in answer:
            raise DevToolsError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    async def new_page(self) -> Page:
        target = await self.call("Target.createTarget", url="about:blank")
        attached = await self.call("Target.attachToTarget", targetId=target["targetId"], flatten=True)
        page = Page(self, attached["sessionId"])
        for domain in ("Page", "Runtime", "Log"):
            await page.call(f"{domain}.enable")
        return page

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions and dialogs seen so far."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(f"log: {params['entry'].get('text')} {params['entry'].get('url', '')}")
            elif method == "Runtime.exceptionThrown":
                found.append(f"exception: {params['exceptionDetails'].get('text')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                found.append(f"console: {params.get('args')}")
            elif method == "Page.javascriptDialogOpening":
                found.append(f"dialog: {params.get('message')}")
        return found


@contextlib.asynccontextmanager
async def chromium(executable: Path, profile: Path) -> AsyncIterator[Browser]:
    """Start headless chromium with an empty profile; closed (and waited for) on exit."""
    proc = await asyncio.create_subprocess_exec(str(executable), *FLAGS, f"--user-data-dir={profile}", "about:blank",
                                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                                stderr=subprocess.PIPE)
    try:
        assert proc.stderr is not None
        url = ""
        while not url:
            line = (await asyncio.wait_for(proc.stderr.readline(), WAIT)).decode(errors="replace")
            if not line:
                raise RuntimeError("chromium exited before opening its DevTools port")
            if line.startswith("DevTools listening on "):
                url = line.split(" on ", 1)[1].strip()
        drain = asyncio.create_task(proc.stderr.read())  # keep the pipe from filling up
        async with aiohttp.ClientSession() as http, http.ws_connect(url, max_msg_size=64 * 2**20) as ws:
            browser = Browser(ws)
            try:
                yield browser
            finally:
                with contextlib.suppress(Exception):
                    await browser.call("Browser.close")
        drain.cancel()
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()
