"""What the anthropic path sends: checked on the request bodies the fake server recorded."""

from __future__ import annotations

import base64
import hashlib

import pytest
from fake_provider import Fail, Reply, StreamError, ToolCall

from core.chat.target import target_for
from core.providers import sdk
from core.providers.anthropic_format import THINKING_BUDGETS
from core.providers.base import ErrorEvent, ToolSpec
from core.sessions.content import (
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.messages import Message, user_text
from core.settings import Settings

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


async def test_thinking_signature_is_sent_back_exactly(anthropic_wire):
    wire = anthropic_wire
    signature = "EqQBCkgIARABGAIiQL+/+sig==" + "x" * 40
    wire.server.script(Reply(thinking="The user greets me.", signature=signature, text="Hi!"))
    first = await wire.run(wire.request("hello", thinking="low"))
    assert first.message.thinking == [ThinkingContent("The user greets me.", signature=signature)]

    await wire.run(
        wire.request(user_text("hello"), first.message, user_text("and now?"), thinking="low")
    )
    sent = wire.body["messages"][1]
    assert sent["role"] == "assistant"
    assert sent["content"][0] == {
        "type": "thinking",
        "thinking": "The user greets me.",
        "signature": signature,
    }
    assert sent["content"][1] == {"type": "text", "text": "Hi!"}


async def test_redacted_thinking_is_sent_back_as_it_came(anthropic_wire):
    wire = anthropic_wire
    data = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"
    wire.server.script(
        Reply(redacted_thinking=data, thinking="visible", signature="sig-1", text="ok")
    )
    first = await wire.run(wire.request("hi", thinking="low"))
    assert first.message.thinking[0] == ThinkingContent(data, redacted=True)

    await wire.run(wire.request(user_text("hi"), first.message, user_text("more"), thinking="low"))
    content = wire.body["messages"][1]["content"]
    assert content[0] == {"type": "redacted_thinking", "data": data}
    assert content[1] == {"type": "thinking", "thinking": "visible", "signature": "sig-1"}


async def test_unsigned_thinking_is_not_sent(anthropic_wire):
    assistant = Message(
        role="assistant", content=(ThinkingContent("from another model"), TextContent("answer"))
    )
    await anthropic_wire.run(anthropic_wire.request(user_text("q"), assistant, user_text("q2")))
    assert anthropic_wire.body["messages"][1]["content"] == [{"type": "text", "text": "answer"}]


async def test_prompt_caching_marks_system_and_last_user_turn(anthropic_wire):
    wire = anthropic_wire
    assistant = Message(role="assistant", content=(TextContent("first answer"),))
    await wire.run(
        wire.request(user_text("one"), assistant, user_text("two"), system="You are terse.")
    )
    body = wire.body
    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"][0]["content"] == [{"type": "text", "text": "one"}]
    assert body["messages"][2]["content"] == [
        {"type": "text", "text": "two", "cache_control": {"type": "ephemeral"}}
    ]
    assert "cache_control" not in body["messages"][1]["content"][0]


@pytest.mark.parametrize("level", ["off", "low", "medium", "high"])
async def test_thinking_level_sets_budget_below_max_tokens(anthropic_wire, level):
    await anthropic_wire.run(anthropic_wire.request("x", thinking=level, max_tokens=1024))
    body = anthropic_wire.body
    if level == "off":
        assert "thinking" not in body
        assert body["max_tokens"] == 1024
    else:
        assert body["thinking"] == {"type": "enabled", "budget_tokens": THINKING_BUDGETS[level]}
        assert body["max_tokens"] > THINKING_BUDGETS[level]


async def test_model_name_goes_without_prefix_and_tools_as_input_schema(anthropic_wire):
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    await anthropic_wire.run(
        anthropic_wire.request("x", tools=(ToolSpec("read_file", "Read a file", schema),))
    )
    body = anthropic_wire.body
    assert body["model"] == "claude-sonnet-4-6"
    assert body["stream"] is True
    assert body["tools"] == [
        {"name": "read_file", "description": "Read a file", "input_schema": schema}
    ]


async def test_images_go_as_base64_and_missing_bytes_as_a_note(anthropic_wire):
    sha = hashlib.sha256(PNG).hexdigest()
    present = ImageContent("image/png", sha, 8, 8)
    missing = ImageContent("image/jpeg", "0" * 64, 800, 600)
    message = Message(role="user", content=(present, missing, TextContent("what is this?")))
    await anthropic_wire.run(anthropic_wire.request(message, images={sha: PNG}))
    content = anthropic_wire.body["messages"][0]["content"]
    assert content[0] == {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(PNG).decode(),
        },
    }
    assert content[1] == {"type": "text", "text": "[image unavailable: image/jpeg 800x600]"}


async def test_consecutive_tool_results_merge_into_one_user_message(anthropic_wire):
    calls = Message(
        role="assistant",
        content=(
            ToolCallContent("t1", "read_file", {"path": "a"}),
            ToolCallContent("t2", "read_file", {"path": "b"}),
        ),
    )
    r1 = Message(role="tool_result", content=(ToolResultContent("t1", (TextContent("A"),)),))
    r2 = Message(
        role="tool_result",
        content=(ToolResultContent("t2", (TextContent("boom"),), is_error=True),),
    )
    await anthropic_wire.run(anthropic_wire.request(user_text("read both"), calls, r1, r2))
    messages = anthropic_wire.body["messages"]
    assert len(messages) == 3
    assert messages[2]["role"] == "user"
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ["t1", "t2"]
    assert messages[2]["content"][1]["is_error"] is True
    assert messages[2]["content"][1]["content"] == [{"type": "text", "text": "boom"}]
    assert messages[2]["content"][1]["cache_control"] == {"type": "ephemeral"}


async def test_usage_counts_cache_reads_and_writes(anthropic_wire):
    """Input and cache counts come in ``message_start``, the output count in ``message_delta``."""
    anthropic_wire.server.script(
        Reply(
            text="ok",
            usage={
                "input_tokens": 12,
                "cache_read_tokens": 400,
                "cache_write_tokens": 300,
                "output_tokens": 9,
            },
        )
    )
    usage = (await anthropic_wire.run()).message.usage
    assert (
        usage.input_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.output_tokens,
    ) == (12, 400, 300, 9)
    assert usage.cache_read_cost > 0 and usage.cache_write_cost > 0


@pytest.mark.parametrize(
    "error_type, message, kind",
    [
        ("rate_limit_error", "slow down", "rate_limit"),
        ("api_error", "Internal server error", "server"),
        ("invalid_request_error", "prompt is too long: 210000 tokens > 200000", "context_overflow"),
    ],
)
async def test_error_event_mid_stream_is_its_kind(anthropic_wire, error_type, message, kind):
    reply = Reply(text="a reply cut by an error event", chunk_size=4)
    anthropic_wire.server.script(
        StreamError(after_chunks=6, error_type=error_type, message=message, reply=reply)
    )
    result = await anthropic_wire.run()
    (event,) = result.of(ErrorEvent)
    assert (event.error.kind, event.error.detail, event.error.status) == (kind, message, None)
    assert result.message.text and reply.text.startswith(result.message.text)


async def test_sdk_does_not_retry_on_its_own(anthropic_wire):
    anthropic_wire.server.script(Fail(500), Fail(500))
    result = await anthropic_wire.run()
    assert result.message.meta["error_kind"] == "server"
    assert len(anthropic_wire.server.requests) == 1


async def test_key_and_base_url_come_from_the_environment(anthropic_wire, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key-for-anthropic-123")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_wire.server.base_url)
    target = target_for(anthropic_wire.model, Settings())
    result = await anthropic_wire.run(
        anthropic_wire.request("hi", api_key=target.api_key, api_base=target.api_base)
    )
    assert result.message.text == "echo: hi"
    headers = anthropic_wire.server.last_request.headers
    assert "env-key-for-anthropic-123" in headers.get("x-api-key", "") + headers.get(
        "authorization", ""
    )


async def test_fake_server_speaks_non_streaming_messages(fake_provider):
    """The SDK's plain ``create`` (no stream) reads the fake server's JSON reply."""
    fake_provider.script(
        Reply(
            thinking="t",
            signature="s",
            text="whole",
            tool_calls=[ToolCall("f", {"a": 1}, id="toolu_1")],
        )
    )
    client = sdk.anthropic().AsyncAnthropic(
        api_key="k" * 20, base_url=fake_provider.base_url, max_retries=0
    )
    async with client:
        message = await client.messages.create(
            model="claude-sonnet-4-6", max_tokens=50, messages=[{"role": "user", "content": "hi"}]
        )
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert message.content[0].signature == "s"
    assert message.content[1].text == "whole"
    assert message.content[2].input == {"a": 1}
    assert message.stop_reason == "tool_use"
    assert fake_provider.last_request.body.get("stream") is None
