"""What the OpenAI-compatible paths (httpx directly and litellm) send and read: checked on recorded request bodies."""

from __future__ import annotations

import base64
import hashlib

from fake_provider import Reply, ToolCall

from core.providers import sdk
from core.providers.base import ToolSpec
from core.sessions.content import (
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.messages import Message, user_text

PNG = b"\x89PNG\r\n\x1a\n" + b"\x01" * 32


async def test_request_shape(openai_wire):
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    request = openai_wire.request(
        "find it", system="Be brief.", max_tokens=300, tools=(ToolSpec("search", "Search", schema),)
    )
    await openai_wire.run(request)
    body = openai_wire.body
    assert openai_wire.server.last_request.path == "/v1/chat/completions"
    assert body["model"] == "gpt-4o"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "find it"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "search", "description": "Search", "parameters": schema},
        }
    ]
    assert body["max_tokens"] == 300


async def test_thinking_level_becomes_reasoning_effort_where_supported(openai_wire):
    await openai_wire.run(
        openai_wire.request("think hard", model="openai/o4-mini", thinking="high")
    )
    assert openai_wire.body["reasoning_effort"] == "high"
    await openai_wire.run(openai_wire.request("think hard", thinking="high"))
    assert "reasoning_effort" not in openai_wire.body  # gpt-4o has none: dropped, not an error


async def test_a_model_litellm_does_not_know_gets_reasoning_effort(openai_wire):
    """A proxy's own model name: forwarded, the server decides (as litellm does)."""
    await openai_wire.run(openai_wire.request("think", model="openai/lab-model-7", thinking="low"))
    assert openai_wire.body["reasoning_effort"] == "low"
    assert openai_wire.body["model"] == "lab-model-7"


async def test_reasoning_models_get_max_completion_tokens(openai_wire):
    await openai_wire.run(openai_wire.request("q", model="openai/o4-mini", max_tokens=300))
    assert openai_wire.body["max_completion_tokens"] == 300
    assert "max_tokens" not in openai_wire.body


async def test_no_tools_and_no_reasoning_when_not_asked(openai_wire):
    await openai_wire.run(openai_wire.request("plain"))
    assert "tools" not in openai_wire.body
    assert "reasoning_effort" not in openai_wire.body


async def test_thinking_is_not_sent_back(openai_wire):
    assistant = Message(
        role="assistant",
        content=(ThinkingContent("private", signature="sig"), TextContent("public answer")),
    )
    await openai_wire.run(openai_wire.request(user_text("q"), assistant, user_text("q2")))
    assert openai_wire.body["messages"][1] == {"role": "assistant", "content": "public answer"}


async def test_images_go_as_data_urls(openai_wire):
    sha = hashlib.sha256(PNG).hexdigest()
    message = Message(
        role="user", content=(ImageContent("image/png", sha, 4, 4), TextContent("describe"))
    )
    await openai_wire.run(openai_wire.request(message, images={sha: PNG}))
    content = openai_wire.body["messages"][0]["content"]
    assert content[0] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
    }
    assert content[1] == {"type": "text", "text": "describe"}


async def test_tool_results_become_tool_messages_and_images_follow(openai_wire):
    sha = hashlib.sha256(PNG).hexdigest()
    calls = Message(
        role="assistant",
        content=(
            ToolCallContent("c1", "shot", {}),
            ToolCallContent("c2", "read_file", {"path": "x"}),
        ),
    )
    r1 = Message(
        role="tool_result",
        content=(ToolResultContent("c1", (ImageContent("image/png", sha, 4, 4),)),),
    )
    r2 = Message(
        role="tool_result",
        content=(ToolResultContent("c2", (TextContent("no such file"),), is_error=True),),
    )
    await openai_wire.run(openai_wire.request(user_text("go"), calls, r1, r2, images={sha: PNG}))
    messages = openai_wire.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assert not messages[1].get("content")
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "[image image/png 4x4 attached below]",
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "c2", "content": "Error: no such file"}
    assert messages[4]["content"][0]["type"] == "image_url"


async def test_usage_with_cached_and_reasoning_tokens(openai_wire):
    openai_wire.server.script(
        Reply(
            thinking="hmm",
            text="ok",
            usage={
                "input_tokens": 100,
                "cache_read_tokens": 400,
                "output_tokens": 50,
                "reasoning_tokens": 30,
            },
        )
    )
    result = await openai_wire.run()
    usage = result.message.usage
    assert (
        usage.input_tokens,
        usage.cache_read_tokens,
        usage.output_tokens,
        usage.reasoning_tokens,
    ) == (
        100,
        400,
        50,
        30,
    )


async def test_fake_server_speaks_non_streaming_chat_completions(fake_provider):
    fake_provider.script(
        Reply(
            thinking="why", text="whole answer", tool_calls=[ToolCall("f", {"x": 2}, id="call_9")]
        )
    )
    response = await sdk.litellm().acompletion(
        model="openai/gpt-4o",
        messages=[{"role": "user", "content": "hi"}],
        api_base=fake_provider.base_url + "/v1",
        api_key="sk-test-0000000000000000",
        max_retries=0,
    )
    message = response.choices[0].message
    assert message.content == "whole answer"
    assert message.reasoning_content == "why"
    assert message.tool_calls[0].function.arguments == '{"x": 2}'
    assert response.choices[0].finish_reason == "tool_calls"
    assert response.usage.completion_tokens > 0
    assert fake_provider.last_request.body.get("stream") in (None, False)


async def test_a_stream_read_to_done_leaves_its_connection_for_the_next_request(fake_provider):
    """The body is read to its end after ``[DONE]``: the connection goes back to
    the client's pool and the next request reuses it (no new connection, no new
    TLS handshake, per turn)."""
    import httpx

    from core.providers import openai_http

    async with httpx.AsyncClient() as client:
        pooled = []
        for turn in range(3):
            body = {
                "model": "x",
                "messages": [{"role": "user", "content": f"turn {turn}"}],
                "stream": True,
            }
            async with openai_http.chunks(
                client, f"{fake_provider.base_url}/v1", "k", body, timeout=5
            ) as chunks:
                texts = [
                    c["choices"][0]["delta"].get("content") async for c in chunks if c["choices"]
                ]
            assert "".join(t for t in texts if t) == f"echo: turn {turn}"
            pooled.append(list(client._transport._pool.connections))
        assert len(pooled[0]) == 1 and pooled[0] == pooled[1] == pooled[2]


async def test_a_body_kept_open_after_done_ends_the_stream_anyway(monkeypatch):
    """A server that sends ``[DONE]`` and keeps the body open does not hang the
    turn: the body is read for at most ``DRAIN_SECONDS`` more."""
    import asyncio

    import httpx

    from core.providers import openai_http

    monkeypatch.setattr(openai_http, "DRAIN_SECONDS", 0.05)

    class OpenBody(httpx.AsyncByteStream):
        async def __aiter__(self):
            yield b'data: {"choices": [{"delta": {"content": "hi"}}]}\n\ndata: [DONE]\n\n'
            await asyncio.Event().wait()  # never ends

    def respond(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=OpenBody())

    async with httpx.AsyncClient(transport=httpx.MockTransport(respond)) as client:
        body = {"model": "x", "messages": [], "stream": True}
        async with openai_http.chunks(client, "http://server/v1", "k", body, timeout=5) as chunks:
            got = await asyncio.wait_for(_collect(chunks), 5)
    assert got == ["hi"]


async def _collect(chunks) -> list[str]:
    return [c["choices"][0]["delta"]["content"] async for c in chunks]
