"""A slow MCP server never delays a reply: servers start when the front end
does, and a request waits for one still starting only until it has had
``mcp_ready_wait`` seconds since it was started; after that its tools are
simply not offered to that turn."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from core.settings import McpServer
from core.tools import Roots, ToolRegistry, builtin_tools
from tests.tools.procs import still_alive, wait_for_pids

HOSTILE = str(Path(__file__).with_name("hostile_server.py"))
STILL_STARTING = "MCP server 'hang' is still starting; its tools are offered once it is ready"


async def until(condition, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_a_request_after_the_ready_wait_does_not_wait_for_a_silent_server(
    tmp_path: Path, work: Path
) -> None:
    pidfile = tmp_path / "hang.pids"
    server = McpServer("hang", command=sys.executable, args=(HOSTILE, "hang", str(pidfile)))
    registry = ToolRegistry(
        builtin_tools(), roots=Roots.create(work), mcp_servers=(server,), mcp_ready_wait=0.5
    )
    try:
        registry.start_servers()  # at launch
        pids = await asyncio.to_thread(wait_for_pids, pidfile)
        assert registry.mcp_status() == [("hang", "starting", None)]
        await until(lambda: registry.mcp_wait_left() == 0)

        request = asyncio.create_task(registry.prepare())
        await asyncio.sleep(0)  # one turn of the loop: a prepare that waits is not done
        assert request.done(), "the request waited for the server"
        assert request.result() == [STILL_STARTING]
        assert [t.wire_name for t in registry.tools] == [t.wire_name for t in builtin_tools()]
        assert await registry.prepare() == [], "the notice is given once"
    finally:
        await registry.aclose()
    assert still_alive(pids, 10.0) == []


async def test_a_request_soon_after_launch_waits_only_for_what_is_left(
    tmp_path: Path, work: Path
) -> None:
    """A request made before the wait is over still gives a quick server its
    chance, within the time left since the server was started."""
    server = McpServer(
        "echo", command=sys.executable, args=(str(Path(__file__).with_name("mcp_echo_server.py")),)
    )
    registry = ToolRegistry(
        builtin_tools(), roots=Roots.create(work), mcp_servers=(server,), mcp_ready_wait=120
    )
    try:
        registry.start_servers()
        assert 0 < registry.mcp_wait_left() <= 120
        assert await registry.prepare() == []
        assert registry.get("echo__echo") is not None
        assert registry.mcp_wait_left() == 0, "nothing left starting"
    finally:
        await registry.aclose()
