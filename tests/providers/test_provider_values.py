"""Values no well-behaved server sends, through the real clients to the fake
server: each ends the reply as a one-line ``bad_response`` (what came before
kept) or is made safe to save, never an exception out of the stream."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fake_provider import RawStream

from core.sessions.content import TextContent, ThinkingContent, ToolCallContent
from core.sessions.entries import Entry
from storage.rows import entry_row

DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "1" + "0" * 400


def sse_openai(*deltas: str, finish: str = '"stop"', usage: str | None = None) -> str:
    """A chat-completions stream: one chunk per delta (JSON text), then the finish and usage."""
    chunks = [f'{{"choices":[{{"index":0,"delta":{d}}}]}}' for d in deltas]
    chunks.append(f'{{"choices":[{{"index":0,"delta":{{}},"finish_reason":{finish}}}]}}')
    if usage is not None:
        chunks.append(f'{{"choices":[],"usage":{usage}}}')
    return "".join(f"data: {c}\n\n" for c in chunks) + "data: [DONE]\n\n"


def sse_anthropic(*events: str) -> str:
    """An Anthropic stream: message_start, the given events (JSON text), message_stop."""
    start = '{"type":"message_start","message":{"usage":{"input_tokens":1}}}'
    stop = '{"type":"message_stop"}'
    return "".join(f"event: {json.loads(e)['type']}\ndata: {e}\n\n" for e in (start, *events, stop))


def saved(message: Any) -> str:
    """The message as storage writes it (UTF-8): raises if it could not be saved."""
    payload: str = entry_row(Entry.new("s", None, message))[5]
    payload.encode("utf-8")
    return payload


def assert_bad_response(result: Any, kept: str, wire: Any) -> None:
    """The reply ended as a one-line bad response, ``kept`` saved. litellm
    reads chunks into its own models first, which drop or convert such
    values: there the reply only has to be whole and safe to save."""
    message = result.message
    if wire.name == "litellm":
        assert message.content[0] == TextContent(kept)
        assert all(isinstance(getattr(b, "id", ""), str) for b in message.content)
        saved(message)
        return
    assert message.stop_reason == "error"
    assert message.meta["error_kind"] == "bad_response"
    assert "\n" not in (message.error or "")
    assert message.content and message.content[0] == TextContent(kept)
    saved(message)


async def test_lone_surrogates_in_text_thinking_and_arguments_are_replaced(openai_wire):
    openai_wire.server.script(
        RawStream(
            sse_openai(
                '{"reasoning_content":"hm \\ud800"}',
                '{"content":"half \\udc00 pair"}',
                '{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f",'
                '"arguments":"{\\"a\\": \\"\\\\ud800x\\"}"}}]}',
                finish='"tool_calls"',
            )
        )
    )
    message = (await openai_wire.run()).message
    thinking, text, call = message.content
    assert thinking == ThinkingContent("hm \ufffd")
    assert text == TextContent("half \ufffd pair")
    assert isinstance(call, ToolCallContent) and call.arguments == {"a": "\ufffdx"}
    assert message.stop_reason == "tool_use"
    saved(message)


async def test_lone_surrogates_from_anthropic_are_replaced(anthropic_wire):
    anthropic_wire.server.script(
        RawStream(
            sse_anthropic(
                '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
                '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\\ud800"}}',
                '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}',
            )
        )
    )
    message = (await anthropic_wire.run()).message
    assert message.content == (TextContent("a\ufffd"),)
    saved(message)


@pytest.mark.parametrize(
    "bad_delta",
    [
        '{"tool_calls":[{"index":0,"id":7,"function":{"name":"f","arguments":"{}"}}]}',
        '{"content":["not","text"]}',
        '{"content":{"an":"object"}}',
        '{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":{"a":1}}}]}',
    ],
    ids=["integer-tool-id", "content-list", "content-object", "arguments-object"],
)
async def test_a_value_of_the_wrong_type_ends_the_reply_with_what_came(openai_wire, bad_delta):
    openai_wire.server.script(RawStream(sse_openai('{"content":"so far"}', bad_delta)))
    result = await openai_wire.run()
    assert_bad_response(result, "so far", openai_wire)


async def test_a_finish_reason_of_the_wrong_type_ends_the_reply(openai_wire):
    openai_wire.server.script(RawStream(sse_openai('{"content":"so far"}', finish="[1]")))
    assert_bad_response(await openai_wire.run(), "so far", openai_wire)


async def test_an_integer_tool_id_from_anthropic_ends_the_reply(anthropic_wire):
    anthropic_wire.server.script(
        RawStream(
            sse_anthropic(
                '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
                '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"so far"}}',
                '{"type":"content_block_start","index":1,'
                '"content_block":{"type":"tool_use","id":5,"name":"f","input":{}}}',
            )
        )
    )
    assert_bad_response(await anthropic_wire.run(), "so far", anthropic_wire)


async def test_huge_usage_ends_the_reply_and_is_not_kept(wire):
    if wire.name == "anthropic":
        body = sse_anthropic(
            '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
            '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"so far"}}',
            f'{{"type":"message_delta","delta":{{"stop_reason":"end_turn"}},"usage":{{"output_tokens":{HUGE}}}}}',
        )
    else:
        body = sse_openai(
            '{"content":"so far"}',
            usage=f'{{"prompt_tokens":1,"completion_tokens":{HUGE},"total_tokens":{HUGE}}}',
        )
    wire.server.script(RawStream(body))
    result = await wire.run()
    assert_bad_response(result, "so far", wire)
    usage = result.message.usage
    assert usage is None or usage.output_tokens < 10**15


async def test_tool_arguments_nested_deep_are_kept_as_text_only(wire):
    if wire.name == "anthropic":
        body = sse_anthropic(
            '{"type":"content_block_start","index":0,'
            '"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}',
            '{"type":"content_block_delta","index":0,'
            f'"delta":{{"type":"input_json_delta","partial_json":"{{\\"a\\": {DEEP}}}"}}}}',
            '{"type":"message_delta","delta":{"stop_reason":"tool_use"}}',
        )
    else:
        arguments = json.dumps(f'{{"a": {DEEP}}}')
        body = sse_openai(
            f'{{"tool_calls":[{{"index":0,"id":"t1","function":{{"name":"f","arguments":{arguments}}}}}]}}',
            finish='"tool_calls"',
        )
    wire.server.script(RawStream(body))
    message = (await wire.run()).message
    [call] = message.content
    assert isinstance(call, ToolCallContent)
    assert call.arguments == {}
    assert call.raw_arguments.startswith('{"a": [[[')
    saved(message)
