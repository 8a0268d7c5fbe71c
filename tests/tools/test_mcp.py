"""MCP servers end to end: a real server process (tests/tools/mcp_echo_server.py)
started on demand by the real ``mcp`` client, its tools listed beside the
built-ins, called through the agent loop and the fake provider; and servers
that cannot start or that crash."""

from __future__ import annotations

import sys
from pathlib import Path

from fake_provider import Reply, ToolCall

from core.sessions.content import ImageContent
from core.settings import McpServer
from core.tools import Roots, ToolRegistry, builtin_tools, wire_name
from storage import SqliteStore
from tests.tools.conftest import Agent, unpaired_calls

SERVER = str(Path(__file__).with_name("mcp_echo_server.py"))


def registry_with(work: Path, *servers: McpServer) -> ToolRegistry:
    return ToolRegistry(
        builtin_tools(), roots=Roots.create(work), mcp_servers=servers, mcp_ready_wait=30
    )


async def test_mcp_tools_are_listed_called_and_answered(
    agent: Agent, work: Path, store: SqliteStore
) -> None:
    agent.registry = registry_with(
        work,
        McpServer("echo", command=sys.executable, args=(SERVER,)),
        McpServer("sure", command=sys.executable, args=(SERVER,), trusted=True),
    )
    try:
        agent.fake.script(
            Reply(
                tool_calls=[
                    ToolCall("echo__echo", {"text": "hi there"}),
                    ToolCall("sure__add", {"a": 2, "b": 3}),
                ]
            ),
            Reply(
                tool_calls=[ToolCall("echo__pixel", {}), ToolCall("echo__add", {"a": "x", "b": 1})]
            ),
            Reply(
                tool_calls=[
                    ToolCall("echo__crash", {}),
                    ToolCall("read_file", {"path": "notes.txt"}),
                ]
            ),
            Reply(tool_calls=[ToolCall("echo__echo", {"text": "again"})]),
            Reply(text="All done."),
        )
        result = await agent.ask("use the echo server")

        names = agent.tool_names(0)
        assert {
            "echo__echo",
            "echo__add",
            "echo__pixel",
            "echo__crash",
            "sure__echo",
            "read_file",
        } <= set(names)
        assert agent.registry.get("sure__echo").name == "sure.echo"
        assert agent.registry.display_name("echo__echo") == "echo.echo"
        assert result.stop == "answered" and result.steps == 4
        assert agent.notices == []

        echoed, added = agent.tool_results(1)
        assert echoed == {"id": "toolu_0000", "text": "echo: hi there", "is_error": False}
        assert added["text"] == "5" and not added["is_error"]
        asked = [tool.name for _, tool, _ in agent.approver.asked]
        assert "echo.echo" in asked and "sure.add" not in asked, (
            "untrusted servers need approval, trusted ones not"
        )

        pixel, bad = agent.tool_results(2)[2:]
        assert not pixel["is_error"]
        images = [
            c
            for m in agent.session.messages()
            if m.role == "tool_result"
            for r in m.tool_results
            for c in r.content
            if isinstance(c, ImageContent)
        ]
        assert [(i.width, i.height, i.media_type) for i in images] == [(2, 1, "image/png")]
        assert await store.get_blob(images[0].sha256) is not None
        assert bad["is_error"] and "'x' is not of type 'integer'" in bad["text"], (
            "checked before the server sees it"
        )

        crashed, read = agent.tool_results(3)[4:]
        assert (
            crashed["is_error"]
            and "MCP server 'echo' stopped while running crash" in crashed["text"]
        )
        assert not read["is_error"] and "hello" in read["text"], "the rest keeps working"
        assert dict((n, s) for n, s, _ in agent.registry.mcp_status()) == {
            "echo": "crashed",
            "sure": "running",
        }
        assert agent.registry.get("echo__echo") is None, "a crashed server's tools are not offered"
        [down] = agent.tool_results(4)[6:]
        assert down["is_error"] and down["text"].startswith(
            "echo.echo is unavailable: MCP server 'echo' is not running (crashed: the process exited"
        )

        # Listing tools for the next request restarts the crashed server.
        assert await agent.registry.prepare() == []
        assert agent.registry.get("echo__echo") is not None
        assert await unpaired_calls(store, agent.session.id) == []
    finally:
        await agent.registry.aclose()
    assert [s for _, s, _ in agent.registry.mcp_status()] == ["stopped", "stopped"]


async def test_a_server_that_cannot_start_gives_a_clear_message(agent: Agent, work: Path) -> None:
    agent.registry = registry_with(
        work,
        McpServer("ghost", command="/nonexistent/tangents-mcp-ghost"),
        McpServer(
            "broken",
            command=sys.executable,
            args=("-c", "import sys; sys.stderr.write('boom: bad config'); sys.exit(2)"),
        ),
        McpServer("nothing"),
    )
    try:
        agent.fake.script(
            Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]), Reply(text="read it")
        )
        result = await agent.ask("read my notes")

        assert result.stop == "answered"
        assert "hello" in agent.tool_results(1)[0]["text"], "built-in tools still work"
        ghost, broken, nothing = agent.notices
        assert ghost == (
            "MCP server 'ghost' could not start: command not found: '/nonexistent/tangents-mcp-ghost'; "
            "its tools are unavailable"
        )
        assert (
            broken.startswith("MCP server 'broken' could not start:")
            and "boom: bad config" in broken
        )
        assert "neither a command nor a url" in nothing
        assert all(not n.startswith(("ghost", "broken")) for n in agent.tool_names(0))
        # A server that failed to start is not retried on every request...
        assert await agent.registry.prepare() == []
        # ...until asked to.
        assert len(await agent.registry.restart_mcp("ghost")) == 1
    finally:
        await agent.registry.aclose()


def test_wire_names_are_provider_safe() -> None:
    assert wire_name("docs.search", "docs") == "docs__search"
    assert wire_name("my server.do it!", "my server") == "my_server__do_it_"
    long = wire_name("s." + "t" * 100, "s")
    assert len(long) == 64 and long.startswith("s__ttt")
    assert wire_name("a.b", "a", taken={"a__b"}) != "a__b"


async def test_a_server_over_streamable_http(work: Path) -> None:
    import asyncio
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, SERVER, "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    registry = registry_with(work, McpServer("web", url=f"http://127.0.0.1:{port}/mcp"))
    try:
        for _ in range(1200):  # up to 60 s: a loaded machine starts a Python server slowly
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            writer.close()
            break
        assert await registry.prepare() == []
        tool = registry.get("web__echo")
        assert tool is not None and tool.name == "web.echo" and tool.needs_approval
        output = await tool.run({"text": "over http"}, registry.context())
        assert [c.text for c in output.content] == ["echo: over http"] and not output.is_error
    finally:
        await registry.aclose()
        process.terminate()
        process.wait(10)
