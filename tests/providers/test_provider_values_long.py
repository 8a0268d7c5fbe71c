"""The adversarial variant of tests/providers/test_provider_values.py (issue
37): every field of a chat-completions chunk given every hostile JSON value,
through the httpx reader and litellm. Each reply must end whole, safe to save,
with at most a one-line error, never an exception out of the stream. Run with
``TANGENTS_LONG_TESTS=1``."""

from __future__ import annotations

import pytest
from fake_provider import RawStream

from tests.long_suite import long_only
from tests.providers.test_provider_values import DEEP, HUGE, saved, sse_openai

pytestmark = long_only
VALUES = {
    "null": "null",
    "true": "true",
    "negative": "-1",
    "float": "1.5e308",
    "huge": HUGE,
    "digits": "9" * 5000,
    "list": '["a",1]',
    "object": '{"a":{"b":[1]}}',
    "deep": DEEP,
    "surrogate": '"\\ud800x\\udfff"',
    "controls": '"\\u001b]52;c;eA==\\u0007\\u009b2J"',
    "long": '"' + "y" * 2_000_000 + '"',
}
FIELDS = {
    "content": '{{"content":{v}}}',
    "reasoning": '{{"reasoning_content":{v}}}',
    "tool-id": '{{"tool_calls":[{{"index":0,"id":{v},"function":{{"name":"f","arguments":"{{}}"}}}}]}}',
    "tool-name": '{{"tool_calls":[{{"index":0,"id":"c","function":{{"name":{v},"arguments":"{{}}"}}}}]}}',
    "arguments": '{{"tool_calls":[{{"index":0,"id":"c","function":{{"name":"f","arguments":{v}}}}}]}}',
    "tool-index": '{{"tool_calls":[{{"index":{v},"id":"c","function":{{"name":"f","arguments":"{{}}"}}}}]}}',
}


@pytest.mark.parametrize("value", VALUES, ids=list(VALUES))
@pytest.mark.parametrize("field", FIELDS, ids=list(FIELDS))
async def test_every_field_with_every_hostile_value(openai_wire, field: str, value: str) -> None:
    delta = FIELDS[field].format(v=VALUES[value])
    openai_wire.server.script(RawStream(sse_openai('{"content":"so far"}', delta)))
    result = await openai_wire.run()
    message = result.message
    assert "\n" not in (message.error or "")
    saved(message)


@pytest.mark.parametrize("value", VALUES, ids=list(VALUES))
@pytest.mark.parametrize("where", ["finish", "usage"])
async def test_finish_and_usage_with_every_hostile_value(openai_wire, where: str, value: str):
    v = VALUES[value]
    body = (
        sse_openai('{"content":"so far"}', finish=v)
        if where == "finish"
        else sse_openai(
            '{"content":"so far"}', usage=f'{{"prompt_tokens":{v},"completion_tokens":{v}}}'
        )
    )
    openai_wire.server.script(RawStream(body))
    result = await openai_wire.run()
    assert "\n" not in (result.message.error or "")
    saved(result.message)
