"""Chat-completions stream chunks to stream events, for both readers of them:
httpx (OpenAI-compatible endpoints: the chunks' JSON as parsed, no
models built) and litellm (everything else: its own chunk objects)."""

from __future__ import annotations

from typing import Any

from core.messages import StopReason, Usage
from core.providers.base import (
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)
from core.providers.cost import cost_for
from core.providers.outcome import final_events

_FINISH: dict[str, StopReason] = {
    "stop": "stop",
    "end_turn": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
}


class ChunkReader:
    """Translates one stream's chunks; remembers its usage and finish reason."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.usage: Usage | None = None
        self.finish: str | None = None
        self.error: ProviderError | None = None
        self.has_content = False

    def events(self, chunk: Any) -> list[StreamEvent]:
        raw_usage = _field(chunk, "usage")
        if raw_usage is not None:
            self.usage = usage(raw_usage)
        choices = _field(chunk, "choices")
        if not choices:
            return []
        choice = choices[0]
        reason = _field(choice, "finish_reason")
        if reason:
            self.finish = reason
        delta = _field(choice, "delta")
        if delta is None:
            return []
        events: list[StreamEvent] = []
        # Some OpenAI-compatible servers (vLLM, GLM) call it "reasoning".
        reasoning = _field(delta, "reasoning_content") or _field(delta, "reasoning")
        if reasoning and isinstance(reasoning, str):
            events.append(ThinkingDelta(reasoning))
        content = _field(delta, "content")
        if content:
            events.append(TextDelta(content))
        for call in _field(delta, "tool_calls") or []:
            function = _field(call, "function")
            events.append(
                ToolCallDelta(
                    index=_field(call, "index") or 0,
                    id=_field(call, "id") or None,
                    name=_field(function, "name") or None,
                    arguments=_field(function, "arguments") or "",
                )
            )
        if events:
            self.has_content = True
        return events

    def ending(self) -> list[StreamEvent]:
        """Usage (priced), then how the stream ended; no finish reason is an interruption."""
        error = self.error
        stop_reason: StopReason | None = None
        if error is None and self.finish is not None:
            if self.finish == "content_filter":
                error = ProviderError("refused", "the provider's content filter stopped the reply")
            else:
                stop_reason = _FINISH.get(self.finish, "stop")
        priced = cost_for(self.model, self.usage) if self.usage is not None else None
        return final_events(priced, stop_reason, error, self.has_content)


def usage(raw: Any) -> Usage:
    """OpenAI-style usage, where prompt tokens include cached ones, split into parts."""
    prompt = _field(raw, "prompt_tokens") or 0
    cache_read = _field(_field(raw, "prompt_tokens_details"), "cached_tokens") or 0
    cache_write = _field(raw, "cache_creation_input_tokens") or 0
    reasoning = _field(_field(raw, "completion_tokens_details"), "reasoning_tokens") or 0
    return Usage(
        input_tokens=max(0, prompt - cache_read - cache_write),
        output_tokens=_field(raw, "completion_tokens") or 0,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        reasoning_tokens=reasoning,
    )


def _field(item: Any, name: str) -> Any:
    """A field of a chunk part: the httpx path hands over the JSON (dicts),
    litellm its own objects."""
    if item is None:
        return None
    if isinstance(item, dict):
        return item.get(name)
    return getattr(item, name, None)
