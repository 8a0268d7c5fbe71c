"""What an MCP server or a reply can cost is bounded (issue 37): a catastrophic
pattern in a tool's schema is matched off the event loop with a time limit, a
server listing 100,000 tools is cut, a 30 MB result is capped before it is
saved or sent, a call never answered ends at the configured timeout, and a
reply calling 5,000 tools runs only up to the per-reply limit."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

from fake_provider import Reply, ToolCall

from core.sessions.content import TextContent
from core.settings import McpServer, ToolSettings
from core.tools import Roots, ToolRegistry, builtin_tools
from core.tools.arg_check import CHECK_SECONDS
from core.tools.base import schema_problem
from core.tools.mcp import MAX_RESULT_CHARS, MAX_TOOLS
from tests.tools.conftest import Agent, last_results, unpaired_calls

HOSTILE = str(Path(__file__).with_name("hostile_mcp.py"))
BOUNDED = 90.0
"""Seconds any of these may take before the test calls it hung."""
T = TypeVar("T")


def hostile(work: Path, mode: str, *args: str, call_timeout: float = 120.0) -> ToolRegistry:
    server = McpServer(mode, command=sys.executable, args=(HOSTILE, mode, *args))
    return ToolRegistry(
        builtin_tools(),
        roots=Roots.create(work),
        mcp_servers=(server,),
        mcp_ready_wait=BOUNDED,
        mcp_call_timeout=call_timeout,
    )


@asynccontextmanager
async def ticking() -> AsyncIterator[list[float]]:
    """The times a concurrent task ticked (every 20 ms while the loop is free)."""
    ticks: list[float] = [time.monotonic()]

    async def tick() -> None:
        while True:
            await asyncio.sleep(0.02)
            ticks.append(time.monotonic())

    task = asyncio.create_task(tick())
    try:
        yield ticks
    finally:
        task.cancel()
        ticks.append(time.monotonic())


def longest_gap(ticks: list[float]) -> float:
    return max(b - a for a, b in zip(ticks, ticks[1:], strict=False))


async def bounded(awaitable: Awaitable[T]) -> T:
    return await asyncio.wait_for(awaitable, BOUNDED)


async def test_a_catastrophic_pattern_is_matched_off_the_event_loop(
    agent: Agent, work: Path
) -> None:
    agent.registry = hostile(work, "regex")
    try:
        agent.fake.script(
            Reply(tool_calls=[ToolCall("regex__match", {"text": "a" * 28 + "!"})]),
            Reply(text="ok"),
        )
        async with ticking() as ticks:
            result = await bounded(agent.ask("match it"))
        assert result.final.message.text == "ok"
        (answer,) = agent.tool_results(-1)
        assert answer["is_error"]
        assert f"could not be checked within {CHECK_SECONDS:g} s" in answer["text"]
        assert agent.approver.asked == [], "refused before any approval"
        assert longest_gap(ticks) < 3.0, "the event loop kept running"
    finally:
        await agent.registry.aclose()


async def test_arguments_against_a_pattern_still_get_checked(agent: Agent, work: Path) -> None:
    agent.registry = hostile(work, "regex")
    try:
        agent.fake.script(
            Reply(
                tool_calls=[
                    ToolCall("regex__match", {"text": "b"}),
                    ToolCall("regex__match", {"text": "aaa"}),
                ]
            ),
            Reply(text="ok"),
        )
        await bounded(agent.ask("match it"))
        refused, ran = agent.tool_results(-1)
        assert refused["is_error"] and "does not match" in refused["text"]
        assert ran == {"id": ran["id"], "text": "matched", "is_error": False}
    finally:
        await agent.registry.aclose()


async def test_a_server_listing_100000_tools_is_cut_with_a_notice(work: Path) -> None:
    registry = hostile(work, "many", "100000")
    try:
        async with ticking() as ticks:
            notices = await bounded(registry.prepare())
        offered = [t for t in registry.tools if t.source == "mcp:many"]
        assert len(offered) == MAX_TOOLS
        assert any(f"listed 100000 tools; only the first {MAX_TOOLS}" in n for n in notices)
        assert longest_gap(ticks) < 3.0, "the event loop kept running"
    finally:
        await registry.aclose()


async def test_a_server_listing_100000_tools_over_http_is_cut_off_the_loop(work: Path) -> None:
    """The list arrives as one 6 MB JSON body; parsing and validating it on the
    event loop held it for minutes."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, HOSTILE, "--http", str(port), "many", "100000"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server = McpServer("many", url=f"http://127.0.0.1:{port}/mcp")
    registry = ToolRegistry(
        builtin_tools(), roots=Roots.create(work), mcp_servers=(server,), mcp_ready_wait=BOUNDED
    )
    try:
        await bounded(listening(port))
        async with ticking() as ticks:
            notices = await bounded(registry.prepare())
        offered = [t for t in registry.tools if t.source == "mcp:many"]
        assert len(offered) == MAX_TOOLS, notices
        assert any(f"listed 100000 tools; only the first {MAX_TOOLS}" in n for n in notices)
        assert longest_gap(ticks) < 3.0, "the event loop kept running"
    finally:
        await registry.aclose()
        process.terminate()
        process.wait(10)


async def listening(port: int) -> None:
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        return


async def test_a_30_mb_result_is_capped_before_it_is_saved_or_sent(
    agent: Agent, work: Path
) -> None:
    agent.registry = hostile(work, "big", "30")
    try:
        agent.fake.script(Reply(tool_calls=[ToolCall("big__dump", {})]), Reply(text="ok"))
        await bounded(agent.ask("dump"))
        saved = last_results(agent.session).tool_results[0]
        text = "".join(c.text for c in saved.content if isinstance(c, TextContent))
        assert len(text) < MAX_RESULT_CHARS + 1000
        assert "30 MB" not in text and "characters of the result were cut" in text
        (sent,) = agent.tool_results(-1)
        assert len(sent["text"]) < MAX_RESULT_CHARS + 1000
    finally:
        await agent.registry.aclose()


async def test_a_call_never_answered_ends_at_the_configured_timeout(
    agent: Agent, work: Path
) -> None:
    agent.registry = hostile(work, "silent", call_timeout=1.0)
    try:
        agent.fake.script(Reply(tool_calls=[ToolCall("silent__wait", {})]), Reply(text="ok"))
        result = await bounded(agent.ask("wait"))
        assert result.final.message.text == "ok"
        (answer,) = agent.tool_results(-1)
        assert answer["is_error"]
        assert "did not answer wait within 1 s" in answer["text"]
        assert "\n" not in answer["text"].strip()
    finally:
        await agent.registry.aclose()


def test_the_call_timeout_and_the_call_limit_are_settings() -> None:
    assert ToolSettings().mcp_call_timeout == 120.0
    assert ToolSettings().max_calls_per_reply == 50


async def test_a_reply_with_5000_tool_calls_stops_at_the_limit(agent: Agent) -> None:
    calls = [ToolCall("read_file", {"path": "notes.txt"}, id=f"c{i}") for i in range(5000)]
    agent.fake.script(Reply(tool_calls=calls, chunk_size=10_000), Reply(text="never asked"))
    result = await bounded(agent.ask("read it a lot"))
    assert result.stop == "call_limit"
    assert len(agent.fake.requests) == 1, "the model is not asked again"
    results = last_results(agent.session).tool_results
    assert len(results) == 5000
    ran = [r for r in results if not r.is_error]
    refused = [r for r in results if r.is_error]
    assert len(ran) == ToolSettings().max_calls_per_reply
    assert all("limit of 50 tool calls" in r.content[0].text for r in refused)  # type: ignore[union-attr]
    assert any("50 tool calls" in n for n in agent.notices)
    assert await unpaired_calls(agent.session.store, agent.session.id) == []


def test_a_schema_nested_too_deeply_is_refused_in_one_line() -> None:
    nested: dict[str, object] = {}
    for _ in range(50_000):
        nested = {"not": nested}
    schema = {"type": "object", "properties": {"x": nested}}
    assert schema_problem(schema) == "the schema is nested too deeply"
