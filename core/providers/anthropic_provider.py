"""Claude models through the ``anthropic`` SDK: thinking signatures, redacted
thinking and prompt caching survive, which litellm's translation would lose.

Raw stream events (``create(stream=True)``) are translated one by one; the SDK's
``messages.stream`` helper is not used because it re-parses the partial tool
JSON after every delta and raises on malformed JSON.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

from core.messages import StopReason, Usage
from core.providers import sdk
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

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_use",
}


def _prepare(anthropic: Any) -> None:
    """In the SDK's import thread: the price table, and one HTTP client made
    and dropped, which imports what the SDK's transport imports lazily on its
    first client (~0.4 s, else on the event loop at the first request)."""
    load_table()
    _http_client(anthropic, None)


def _http_client(anthropic: Any, timeout: float | None) -> Any:
    """The SDK's default HTTP client, with the TLS context every client shares
    (an ``ssl.SSLContext``: the SDK's own httpx takes it as it is)."""
    return anthropic.DefaultAsyncHttpxClient(verify=sdk.tls_context(), timeout=timeout)


class AnthropicProvider:
    name = "anthropic"

    def preload(self) -> None:
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
                timeout=request.timeout,
                http_client=_http_client(anthropic, request.timeout),
            )
            async with client:
                events = await client.messages.create(**request_params(request), stream=True)
                async with events:
                    async for raw in events:
                        for event in state.translate(raw):
                            yield event
                        if state.error is not None:
                            break
                        await share.tick()
        except Exception as exc:  # every failure becomes an event: the stream never raises
            state.error = to_provider_error(exc, api_key=api_key)
        for event in state.ending():
            yield event


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
        if usage is None:
            return
        for name in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = getattr(usage, name, None)
            if isinstance(value, int):
                self.usage[name] = value

    def translate(self, raw: Any) -> list[StreamEvent]:
        kind = raw.type
        if kind == "message_start":
            self._take_usage(raw.message.usage)
            return []
        if kind == "content_block_start":
            return self._mark(self._block_start(raw.index, raw.content_block))
        if kind == "content_block_delta":
            return self._mark(self._delta(raw.index, raw.delta))
        if kind == "message_delta":
            self._take_usage(raw.usage)
            reason = raw.delta.stop_reason
            if reason == "refusal":
                self.error = ProviderError("refused", "the model declined to continue")
            elif reason is not None:
                self.stop_reason = _STOP_REASONS.get(reason, "stop")
        return []

    def _mark(self, events: list[StreamEvent]) -> list[StreamEvent]:
        self.has_content = self.has_content or bool(events)
        return events

    @staticmethod
    def _block_start(index: int, block: Any) -> list[StreamEvent]:
        if block.type == "text":
            return [TextDelta(block.text)] if block.text else []
        if block.type == "thinking":
            return [
                ThinkingDelta(
                    block.thinking or "", signature=block.signature or None, new_block=True
                )
            ]
        if block.type == "redacted_thinking":
            return [ThinkingDelta(block.data, redacted=True, new_block=True)]
        if block.type == "tool_use":
            return [ToolCallDelta(index, id=block.id, name=block.name)]
        return []

    @staticmethod
    def _delta(index: int, delta: Any) -> list[StreamEvent]:
        if delta.type == "text_delta":
            return [TextDelta(delta.text)]
        if delta.type == "thinking_delta":
            return [ThinkingDelta(delta.thinking)]
        if delta.type == "signature_delta":
            return [ThinkingDelta(signature=delta.signature)]
        if delta.type == "input_json_delta":
            return (
                [ToolCallDelta(index, arguments=delta.partial_json)] if delta.partial_json else []
            )
        return []
