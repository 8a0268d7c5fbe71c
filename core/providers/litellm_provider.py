"""Every non-Anthropic model through ``litellm.acompletion``.

litellm makes up a ``finish_reason`` of ``"stop"`` for a stream that simply
ends (a dropped connection litellm did not notice); the finish reason the
provider really sent is on the stream wrapper as ``received_finish_reason``,
so that is what decides between a finished and an interrupted reply.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from core.messages import StopReason, Usage
from core.providers import openai_format, sdk
from core.providers.base import (
    ChatRequest,
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)
from core.providers.cost import cost_for
from core.providers.errors import to_provider_error
from core.providers.outcome import final_events

_FINISH: dict[str, StopReason] = {
    "stop": "stop",
    "end_turn": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
}


def completion_params(request: ChatRequest) -> dict[str, Any]:
    """Keyword arguments for ``litellm.acompletion``."""
    params: dict[str, Any] = {
        "model": request.model,
        "messages": openai_format.to_messages(request),
        "stream": True,
        "stream_options": {"include_usage": True},
        "timeout": request.timeout,
        "max_retries": 0,  # the OpenAI client's own retries; ours are in core.providers.retry
        "drop_params": True,  # e.g. reasoning_effort for a model without it: dropped, not an error
    }
    if request.api_base:
        params["api_base"] = request.api_base
    if request.api_key:
        params["api_key"] = request.api_key
    if request.max_tokens:
        params["max_tokens"] = request.max_tokens
    if request.thinking != "off":
        params["reasoning_effort"] = request.thinking
    if request.tools:
        params["tools"] = openai_format.tools(request)
    return params


class LiteLLMProvider:
    name = "litellm"

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        usage: Usage | None = None
        finish: str | None = None
        error: ProviderError | None = None
        has_content = False
        try:
            litellm = sdk.litellm()
            response = await litellm.acompletion(**completion_params(request))
            try:
                async for chunk in response:
                    chunk_usage = getattr(chunk, "usage", None)
                    if chunk_usage is not None:
                        usage = _usage(chunk_usage)
                    for event in _events(chunk):
                        has_content = True
                        yield event
                finish = getattr(response, "received_finish_reason", None) or getattr(
                    response, "intermittent_finish_reason", None
                )
            finally:
                await response.aclose()
        except Exception as exc:  # every failure becomes an event: the stream never raises
            error = to_provider_error(exc, api_key=request.api_key)
        stop_reason: StopReason | None = None
        if error is None and finish is not None:
            if finish == "content_filter":
                error = ProviderError("refused", "the provider's content filter stopped the reply")
            else:
                stop_reason = _FINISH.get(finish, "stop")
        priced = cost_for(request.model, usage) if usage is not None else None
        for event in final_events(priced, stop_reason, error, has_content):
            yield event


def _events(chunk: Any) -> list[StreamEvent]:
    if not chunk.choices:
        return []
    delta = chunk.choices[0].delta
    if delta is None:
        return []
    events: list[StreamEvent] = []
    reasoning = getattr(delta, "reasoning_content", None)
    if reasoning:
        events.append(ThinkingDelta(reasoning))
    if delta.content:
        events.append(TextDelta(delta.content))
    for call in getattr(delta, "tool_calls", None) or []:
        function = call.function
        events.append(
            ToolCallDelta(
                index=call.index or 0,
                id=call.id or None,
                name=getattr(function, "name", None) or None,
                arguments=getattr(function, "arguments", None) or "",
            )
        )
    return events


def _usage(raw: Any) -> Usage:
    """OpenAI-style usage, where prompt tokens include cached ones, split into parts."""
    prompt = getattr(raw, "prompt_tokens", 0) or 0
    details = getattr(raw, "prompt_tokens_details", None)
    cache_read = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    cache_write = getattr(raw, "cache_creation_input_tokens", 0) or 0
    completion = getattr(raw, "completion_tokens_details", None)
    reasoning = (getattr(completion, "reasoning_tokens", 0) or 0) if completion is not None else 0
    return Usage(
        input_tokens=max(0, prompt - cache_read - cache_write),
        output_tokens=getattr(raw, "completion_tokens", 0) or 0,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        reasoning_tokens=reasoning,
    )
