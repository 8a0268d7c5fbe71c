"""A real headless Chromium (the system's ``/usr/bin/chromium``) driven over
the DevTools protocol on 127.0.0.1 with aiohttp: open a file, evaluate
expressions, click with the mouse."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

CHROMIUM = "/usr/bin/chromium"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--remote-debugging-port=0",
    "--window-size=1200,900",
)
DEADLINE = 60.0


async def _until(condition, what: str, deadline: float = DEADLINE):
    """Poll ``condition()`` (sync or async) until it returns something truthy."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while True:
        value = condition()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if loop.time() > end:
            raise TimeoutError(f"Chromium: {what} did not happen within {deadline:.0f} s")
        await asyncio.sleep(0.05)


class Page:
    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self.socket = socket
        self.next_id = 0

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        call = self.next_id
        await self.socket.send_str(json.dumps({"id": call, "method": method, "params": params}))
        async with asyncio.timeout(DEADLINE):
            while True:
                message = await self.socket.receive()
                if message.type != aiohttp.WSMsgType.TEXT:
                    raise ConnectionError(f"DevTools socket: {message.type}")
                data = json.loads(message.data)
                if data.get("id") == call:
                    if "error" in data:
                        raise RuntimeError(f"{method}: {data['error']}")
                    return data["result"]

    async def evaluate(self, expression: str) -> Any:
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def click(self, selector_expression: str) -> None:
        """Scroll the element into view and click its middle with the mouse."""
        box = await self.evaluate(
            f"(function () {{ var el = {selector_expression};"
            " el.scrollIntoView({block: 'center'}); var r = el.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        x, y = box
        for kind in ("mousePressed", "mouseReleased"):
            await self.send(
                "Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1
            )


@asynccontextmanager
async def open_page(file: Path, profile: Path) -> AsyncIterator[Page]:
    """Chromium showing ``file``, with a fresh profile directory."""
    if not Path(CHROMIUM).exists():
        # A system package pip cannot install; .ci/run installs it. Missing, the
        # test fails: a skipped browser test would pass without a browser.
        pytest.fail("Chromium is not installed: apt-get install chromium (.ci/run does)")
    process = subprocess.Popen(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        port_file = profile / "DevToolsActivePort"
        await _until(
            lambda: port_file.exists() and port_file.read_text().strip(), "the DevTools port"
        )
        port = int(port_file.read_text().split()[0])
        async with aiohttp.ClientSession() as http:

            async def page_socket() -> str | None:
                async with http.get(f"http://127.0.0.1:{port}/json/list") as response:
                    targets = await response.json()
                pages = [t for t in targets if t.get("type") == "page"]
                return pages[0]["webSocketDebuggerUrl"] if pages else None

            url = await _until(page_socket, "the page")
            async with http.ws_connect(url, max_msg_size=0) as socket:
                page = Page(socket)

                address = file.absolute().as_uri()
                await page.send("Page.navigate", url=address)

                async def loaded() -> bool:
                    state = await page.evaluate("location.href + ' ' + document.readyState")
                    return state == f"{address} complete"

                await _until(loaded, "loading the page")
                yield page
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
