"""Streaming through the real anthropic and litellm clients against the fake server."""

from __future__ import annotations

import asyncio
import json

import pytest
from fake_provider import Drop, MalformedToolJson, Reply, Stall, ToolCall

from core.providers.base import Done, TextDelta, ThinkingDelta, ToolCallDelta, UsageEvent
from core.sessions.content import TextContent, ThinkingContent, ToolCallContent, ToolResultContent
from core.sessions.messages import Message, user_text


async def test_text_streams_in_pieces(wire):
    wire.server.script(Reply(text="Hello there, streaming world", chunk_size=5))
    result = await wire.run()
    assert len(result.of(TextDelta)) >= 5
    assert result.message.text == "Hello there, streaming world"
    assert result.message.stop_reason == "stop"
    assert result.message.provider == wire.name
    assert result.message.model == wire.model
    assert isinstance(result.events[-1], Done)


async def test_default_reply_echoes_last_user_text(wire):
    result = await wire.run(wire.request("what is 2+2?"))
    assert result.message.text == "echo: what is 2+2?"


async def test_tool_call_arguments_streamed_in_pieces_are_assembled(wire):
    args = {"path": "src/main.py", "lines": [1, 20], "note": "ünïcode ✓"}
    wire.server.script(
        Reply(text="Reading.", tool_calls=[ToolCall("read_file", args, id="call_42")], chunk_size=3)
    )
    result = await wire.run()
    assert len([e for e in result.of(ToolCallDelta) if e.arguments]) > 5
    (call,) = result.message.tool_calls
    assert call == ToolCallContent("call_42", "read_file", args, json.dumps(args))
    assert result.message.stop_reason == "tool_use"
    assert [type(b) for b in result.message.content] == [TextContent, ToolCallContent]


async def test_two_tool_calls_keep_their_order(wire):
    calls = [
        ToolCall("read_file", {"path": "a"}, id="c1"),
        ToolCall("list_dir", {"path": "."}, id="c2"),
    ]
    wire.server.script(Reply(tool_calls=calls))
    result = await wire.run()
    assert [(c.id, c.name, c.arguments) for c in result.message.tool_calls] == [
        ("c1", "read_file", {"path": "a"}),
        ("c2", "list_dir", {"path": "."}),
    ]


async def test_malformed_tool_json_does_not_crash(wire):
    wire.server.script(MalformedToolJson())
    result = await wire.run()
    (call,) = result.message.tool_calls
    assert call.name == "read_file"
    assert call.arguments == {}
    assert call.raw_arguments == '{"path": "notes.txt", "lines": [1, 2'
    assert result.message.text == "Let me look."


async def test_reasoning_streams_as_thinking(wire):
    wire.server.script(Reply(thinking="First, consider the question.", text="Done."))
    result = await wire.run(wire.request("think", thinking="medium"))
    assert result.of(ThinkingDelta)
    assert result.message.thinking[0].text == "First, consider the question."
    assert isinstance(result.message.content[0], ThinkingContent)
    assert result.message.text == "Done."


async def test_usage_arrives_before_done(wire):
    wire.server.script(Reply(text="hi", usage={"input_tokens": 120, "output_tokens": 7}))
    result = await wire.run()
    usage_index = next(i for i, e in enumerate(result.events) if isinstance(e, UsageEvent))
    assert usage_index == len(result.events) - 2
    assert result.message.usage.input_tokens == 120
    assert result.message.usage.output_tokens == 7


async def test_dropped_connection_keeps_partial_text_as_interrupted(wire):
    wire.server.script(
        Drop(after_chunks=6, reply=Reply(text="partial answer that never finishes", chunk_size=4))
    )
    result = await wire.run()
    assert result.message.stop_reason == "interrupted"
    assert result.message.text
    assert "partial answer that never finishes".startswith(result.message.text)
    assert result.message.error is None


async def test_stream_that_just_stops_is_interrupted(wire):
    """The body ends cleanly but without a stop reason (litellm invents "stop" here)."""
    wire.server.script(
        Drop(after_chunks=6, clean=True, reply=Reply(text="cut short by a proxy", chunk_size=4))
    )
    result = await wire.run()
    assert result.message.stop_reason == "interrupted"
    assert "cut short by a proxy".startswith(result.message.text)
    assert result.message.text


async def test_length_stop_reason(wire):
    wire.server.script(Reply(text="truncated", stop_reason="max_tokens"))
    result = await wire.run()
    assert result.message.stop_reason == "length"


async def test_refusal_is_a_refused_error(wire):
    wire.server.script(Reply(text="I can't", stop_reason="refusal"))
    result = await wire.run()
    assert result.message.stop_reason == "error"
    assert result.message.meta["error_kind"] == "refused"
    assert result.message.text == "I can't"


async def test_missing_key_is_an_auth_error_or_none_is_needed(wire):
    """Without a key: anthropic and litellm say so; the httpx path, given
    an explicit base URL (a local server, which needs none), asks it anyway."""
    result = await wire.run(wire.request(api_key=None))
    if wire.name == "openai":
        assert result.message.stop_reason == "stop"
        assert wire.server.requests[-1].headers["authorization"] == "Bearer no-key"
    else:
        assert result.message.stop_reason == "error"
        assert result.message.meta["error_kind"] == "auth"


async def test_conversation_with_tools_round_trips(wire):
    """A whole tool exchange goes out in the provider's own shape."""
    assistant = Message(
        role="assistant",
        content=(
            TextContent("Let me check."),
            ToolCallContent("call_1", "read_file", {"path": "a.txt"}),
        ),
    )
    result_msg = Message(
        role="tool_result",
        content=(ToolResultContent("call_1", (TextContent("file body"),), is_error=False),),
    )
    await wire.run(wire.request(user_text("read a.txt"), assistant, result_msg))
    messages = wire.body["messages"]
    if wire.name == "anthropic":
        assert messages[1] == {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool_use",
                    "id": "call_1",
                    "name": "read_file",
                    "input": {"path": "a.txt"},
                },
            ],
        }
        assert messages[2]["content"][0]["type"] == "tool_result"
        assert messages[2]["content"][0]["tool_use_id"] == "call_1"
    else:
        assert messages[1]["tool_calls"] == [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
            }
        ]
        assert messages[2] == {"role": "tool", "tool_call_id": "call_1", "content": "file body"}


async def test_closing_the_stream_mid_reply_returns_promptly(wire):
    """What the UI does on Esc: stop iterating and close; the connection is released."""
    wire.server.script(
        Stall(30, after_chunks=6, reply=Reply(text="a long answer that stalls", chunk_size=4))
    )
    stream = wire.provider.stream(wire.request())
    async with asyncio.timeout(5):
        async for event in stream:
            if isinstance(event, TextDelta):
                break
    await asyncio.wait_for(stream.aclose(), 2)


@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_turns_reuse_one_connection_until_the_clients_are_closed(name, fake_provider):
    """Each turn's request goes out on the connection of the turn before (no new
    TCP connection, no new TLS handshake); closing the loop's clients ends it."""
    from core.providers import http_clients
    from tests.providers.conftest import make_wire

    wire = make_wire(name, fake_provider)
    for turn in ("one", "two", "three"):
        result = await wire.run(wire.request(turn))
        assert result.message.stop_reason == "stop", result.message.error
    clients = {request.client for request in fake_provider.requests}
    assert len(fake_provider.requests) == 3 and len(clients) == 1 and "" not in clients
    await http_clients.aclose()
    await wire.run(wire.request("four"))
    assert fake_provider.requests[-1].client not in clients
    await http_clients.aclose()
