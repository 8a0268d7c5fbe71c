"""Claude models through the ``anthropic`` SDK: thinking signatures, redacted
thinking and prompt caching survive, which litellm's translation would lose.

The SDK makes the request (headers, base URL, timeouts, an error status raised
as its own exception); the stream's events are read as plain JSON
(:func:`_events`) and translated one by one. Building the SDK's typed events
took about half the CPU time of a stream, and three
streams at once are CPU-bound (tests/bench/bench_compare.py). Its ``messages.stream`` helper
would also re-parse the partial tool JSON after every delta and raise on
malformed JSON.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import Any

from core import values
from core.providers import bodies, http_clients, sdk, sse, tls
from core.providers.anthropic_format import request_params
from core.providers.base import (
    ChatRequest,
    ErrorEvent,
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)
from core.providers.cost import cost_for, load_table
from core.providers.errors import to_provider_error
from core.providers.outcome import final_events
from core.providers.pacing import LoopShare
from core.sessions.messages import StopReason, Usage

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_use",
}


def _prepare(anthropic: Any) -> None:
    """In the SDK's import thread: the price table, the TLS trust store, and one
    HTTP client made and dropped, which imports what the SDK's transport imports
    lazily on its first client (~0.4 s, else on the event loop at the first request)."""
    load_table()
    tls.load()
    _http_client(anthropic, None)


def _http_client(anthropic: Any, timeout: float | None) -> Any:
    """The SDK's default HTTP client, with the TLS context every client shares
    (an ``ssl.SSLContext``: the SDK's own httpx takes it as it is), and error
    bodies cut at a size (the SDK reads them whole)."""
    import httpx2  # the SDK's own httpx, loaded with it

    return anthropic.DefaultAsyncHttpxClient(
        verify=tls.context(),
        timeout=timeout,
        event_hooks={"response": [bodies.error_body_hook(httpx2)]},
    )


class AnthropicProvider:
    name = "anthropic"

    def preload(self, api_base: str | None = None) -> None:
        """The SDK, prepared with the trust store whatever ``api_base`` is: Anthropic is https."""
        sdk.preload("anthropic", _prepare)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        api_key = request.api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not api_key:
            yield ErrorEvent(ProviderError("auth", "no API key: set ANTHROPIC_API_KEY"))
            return
        state = _StreamState(request.model)
        share = LoopShare()
        try:
            anthropic = await sdk.loaded("anthropic", _prepare)
            client = anthropic.AsyncAnthropic(
                api_key=api_key,
                base_url=request.api_base or os.environ.get("ANTHROPIC_BASE_URL") or None,
                max_retries=0,  # our own policy: core.providers.retry
                timeout=request.timeout,  # each request's own, on the shared client
                http_client=http_clients.shared("anthropic", lambda: _http_client(anthropic, None)),
            )
            # Not closed after the request: that would close the shared client.
            async with client.messages.with_streaming_response.create(
                **request_params(request), stream=True
            ) as response:
                async for raw in _events(anthropic, response.http_response):
                    for event in state.translate(raw):
                        yield event
                    if state.error is not None:
                        break
                    await share.tick()
        except Exception as exc:  # every failure becomes an event: the stream never raises
            state.error = to_provider_error(exc, api_key=api_key)
        for event in state.ending():
            yield event


async def _events(anthropic: Any, response: Any) -> AsyncIterator[dict[str, Any]]:
    """The stream's events as dicts, read as the SDK's ``AsyncStream`` reads
    them: ``ping`` and unnamed events skipped, an ``error`` event raised as
    the SDK raises it (an ``APIStatusError`` with the event's JSON as body)."""
    async for name, data in sse.events(response):
        if name == "error":
            raise _stream_error(anthropic, data, response)
        if name and name != "ping" and data:
            event = values.parse(data, "a stream event")
            if not isinstance(event, dict):
                raise values.BadValue("a stream event is not an object")
            yield event


def _stream_error(anthropic: Any, data: str, response: Any) -> Exception:
    """Built as the SDK's ``AsyncStream`` builds it, with the same message and
    body (for a 200 response the SDK's error table names no subclass)."""
    body: object = data
    try:
        body = json.loads(data)
        message = f"{body}"
    except ValueError:
        message = data or f"Error code: {response.status_code}"
    return anthropic.APIStatusError(message, response=response, body=body)


class _StreamState:
    """Usage and stop reason gathered while translating one stream."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.usage: dict[str, int] = {}
        self.stop_reason: StopReason | None = None
        self.error: ProviderError | None = None
        self.has_content = False

    def ending(self) -> list[StreamEvent]:
        return final_events(self.priced_usage(), self.stop_reason, self.error, self.has_content)

    def priced_usage(self) -> Usage | None:
        u = self.usage
        if not u:
            return None
        usage = Usage(
            input_tokens=u.get("input_tokens", 0),
            output_tokens=u.get("output_tokens", 0),
            cache_read_tokens=u.get("cache_read_input_tokens", 0),
            cache_write_tokens=u.get("cache_creation_input_tokens", 0),
        )
        return cost_for(self.model, usage)

    def _take_usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        for name in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            if usage.get(name) is not None:
                self.usage[name] = values.count(usage[name], f"the usage's {name}")

    def translate(self, raw: dict[str, Any]) -> list[StreamEvent]:
        """One event of the stream (its JSON), as what it adds to the reply;
        a value of the wrong type or size raises :class:`~core.values.BadValue`."""
        kind = raw.get("type")
        if kind == "message_start":
            self._take_usage(_object(raw, "message").get("usage"))
            return []
        if kind == "content_block_start":
            index = values.count(raw.get("index"), "a block's index", MAX_BLOCK_INDEX)
            return self._mark(self._block_start(index, _object(raw, "content_block")))
        if kind == "content_block_delta":
            index = values.count(raw.get("index"), "a block's index", MAX_BLOCK_INDEX)
            return self._mark(self._delta(index, _object(raw, "delta")))
        if kind == "message_delta":
            self._take_usage(raw.get("usage"))
            reason = values.optional_text(
                _object(raw, "delta").get("stop_reason"), "the stop reason"
            )
            if reason == "refusal":
                self.error = ProviderError("refused", "the model declined to continue")
            elif reason is not None:
                self.stop_reason = _STOP_REASONS.get(reason, "stop")
        return []

    def _mark(self, events: list[StreamEvent]) -> list[StreamEvent]:
        self.has_content = self.has_content or bool(events)
        return events

    @staticmethod
    def _block_start(index: int, block: dict[str, Any]) -> list[StreamEvent]:
        kind = block.get("type")
        if kind == "text":
            text = values.optional_text(block.get("text"), "the reply's text")
            return [TextDelta(text)] if text else []
        if kind == "thinking":
            return [
                ThinkingDelta(
                    values.optional_text(block.get("thinking"), "the reply's thinking") or "",
                    signature=values.optional_text(block.get("signature"), "a signature") or None,
                    new_block=True,
                )
            ]
        if kind == "redacted_thinking":
            data = values.text(block.get("data"), "redacted thinking")
            return [ThinkingDelta(data, redacted=True, new_block=True)]
        if kind == "tool_use":
            call_id = values.text(block.get("id"), "a tool call's id")
            name = values.text(block.get("name"), "a tool call's name")
            return [ToolCallDelta(index, id=call_id, name=name)]
        return []

    @staticmethod
    def _delta(index: int, delta: dict[str, Any]) -> list[StreamEvent]:
        kind = delta.get("type")
        if kind == "text_delta":
            return [TextDelta(values.text(delta.get("text"), "the reply's text"))]
        if kind == "thinking_delta":
            return [ThinkingDelta(values.text(delta.get("thinking"), "the reply's thinking"))]
        if kind == "signature_delta":
            return [ThinkingDelta(signature=values.text(delta.get("signature"), "a signature"))]
        if kind == "input_json_delta":
            partial = values.optional_text(delta.get("partial_json"), "a tool call's arguments")
            return [ToolCallDelta(index, arguments=partial)] if partial else []
        return []


MAX_BLOCK_INDEX = 10_000
"""The highest content block index taken (blocks are numbered from 0 in a reply)."""


def _object(raw: dict[str, Any], name: str) -> dict[str, Any]:
    """The object ``raw[name]`` of a stream event."""
    value = raw.get(name)
    if not isinstance(value, dict):
        raise values.BadValue(f"a stream event's {name} is not an object")
    return value
